// TensorRTBackend's load options and the weight_streaming_budget compile
// spec (backend/load_options.h): every option's accepted types, the refusals
// and their messages, the compile spec's rules, and the unknown option that
// is only reported.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "backend/load_options.h"

namespace {

namespace et = executorch::runtime;
using Text = std::array<char, et::kMaxOptionValueLength>;

et::BackendOption option(const char* key, et::OptionValue value) {
  et::BackendOption out;
  std::strncpy(out.key, key, sizeof(out.key) - 1);
  out.value = value;
  return out;
}

et::BackendOption text_option(const char* key, const std::string& value) {
  Text text{};
  std::memcpy(text.data(), value.data(), std::min(value.size(), text.size()));
  return option(key, text);
}

// Compile specs as (key, value) pairs.
using SpecList = std::vector<std::pair<const char*, std::string>>;

tte::Status read(const std::vector<et::BackendOption>& options, tte::LoadOptions* out,
                 const SpecList& entries = {}) {
  // CompileSpec points into the values: they stay here until the read is done.
  std::vector<std::string> values;
  std::vector<et::CompileSpec> specs;
  values.reserve(entries.size());
  for (const auto& [key, value] : entries) {
    values.push_back(value);
    specs.push_back({key, {values.back().data(), values.back().size()}});
  }
  et::BackendInitContext context(nullptr, nullptr, nullptr, nullptr,
                                 et::Span<const et::BackendOption>(options.data(), options.size()));
  return tte::read_load_options(context, {specs.data(), specs.size()}, out);
}

TEST(LoadOptions, DefaultsWithoutOptionsOrSpecs) {
  tte::LoadOptions options;
  ASSERT_TRUE(read({}, &options).ok());
  EXPECT_EQ(options.provider, "");
  EXPECT_FALSE(options.cuda_graphs);
  EXPECT_FALSE(options.has_weight_streaming_budget);
  EXPECT_TRUE(options.engine_host_code_allowed);
  EXPECT_FALSE(options.has_dla_core);
  EXPECT_TRUE(options.plugin_libraries.empty());
  EXPECT_EQ(options.runtime_cache_path, "");
  EXPECT_TRUE(options.share_device_memory);
  EXPECT_TRUE(options.share_engines);
}

TEST(LoadOptions, EveryOptionIsRead) {
  tte::LoadOptions options;
  const tte::Status status =
      read({text_option("provider", "tensorrt-python"), option("cuda_graphs", true),
            option("weight_streaming_budget", 4096), option("engine_host_code_allowed", false),
            option("dla_core", 1), text_option("plugin_libraries", "/a/libp.so:/b/libq.so"),
            text_option("runtime_cache_path", "/tmp/cache.bin"),
            option("share_device_memory", false), option("share_engines", false)},
           &options);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(options.provider, "tensorrt-python");
  EXPECT_TRUE(options.cuda_graphs);
  EXPECT_TRUE(options.has_weight_streaming_budget);
  EXPECT_EQ(options.weight_streaming_budget, 4096);
  EXPECT_FALSE(options.engine_host_code_allowed);
  EXPECT_TRUE(options.has_dla_core);
  EXPECT_EQ(options.dla_core, 1);
  EXPECT_EQ(options.plugin_libraries, (std::vector<std::string>{"/a/libp.so", "/b/libq.so"}));
  EXPECT_EQ(options.runtime_cache_path, "/tmp/cache.bin");
  EXPECT_FALSE(options.share_device_memory);
  EXPECT_FALSE(options.share_engines);
}

TEST(LoadOptions, BoolsTakeIntsAsCDoes) {
  tte::LoadOptions options;
  ASSERT_TRUE(read({option("cuda_graphs", 1), option("share_engines", 0)}, &options).ok());
  EXPECT_TRUE(options.cuda_graphs);
  EXPECT_FALSE(options.share_engines);
}

TEST(LoadOptions, EmptyPluginPathsAreSkipped) {
  tte::LoadOptions options;
  ASSERT_TRUE(read({text_option("plugin_libraries", ":/a.so::/b.so:")}, &options).ok());
  EXPECT_EQ(options.plugin_libraries, (std::vector<std::string>{"/a.so", "/b.so"}));
}

TEST(LoadOptions, BudgetFromADecimalStringBeyond32Bits) {
  tte::LoadOptions options;
  ASSERT_TRUE(read({text_option("weight_streaming_budget", "8589934592")}, &options).ok());
  EXPECT_TRUE(options.has_weight_streaming_budget);
  EXPECT_EQ(options.weight_streaming_budget, int64_t{8589934592});
}

struct Refusal {
  const char* name;
  et::BackendOption option;
  const char* message;
};

class LoadOptionRefusal : public testing::TestWithParam<Refusal> {};

TEST_P(LoadOptionRefusal, NamesTheOptionAndWhatItMustBe) {
  tte::LoadOptions options;
  options.provider = "untouched";
  const tte::Status status = read({GetParam().option}, &options);
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(status.message().find(GetParam().message), std::string::npos) << status.message();
  // A refused set of options changes nothing.
  EXPECT_EQ(options.provider, "untouched");
}

INSTANTIATE_TEST_SUITE_P(
    LoadOptions, LoadOptionRefusal,
    testing::Values(
        Refusal{"provider_bool", option("provider", true), "'provider' must be a string"},
        Refusal{"cuda_graphs_text", text_option("cuda_graphs", "yes"),
                "'cuda_graphs' must be a bool"},
        Refusal{"budget_negative", option("weight_streaming_budget", -1),
                "'weight_streaming_budget' must be a non-negative int"},
        Refusal{"budget_bool", option("weight_streaming_budget", true),
                "'weight_streaming_budget' must be a non-negative int"},
        Refusal{"budget_not_decimal", text_option("weight_streaming_budget", "1e9"),
                "load option 'weight_streaming_budget': "},
        Refusal{"host_code_text", text_option("engine_host_code_allowed", "no"),
                "'engine_host_code_allowed' must be a bool"},
        Refusal{"dla_negative", option("dla_core", -1), "'dla_core' must be an int >= 0"},
        Refusal{"dla_text", text_option("dla_core", "0"), "'dla_core' must be an int >= 0"},
        Refusal{"plugins_int", option("plugin_libraries", 3),
                "'plugin_libraries' must be a string of library paths"},
        Refusal{"cache_bool", option("runtime_cache_path", false),
                "'runtime_cache_path' must be a string"},
        Refusal{"share_memory_text", text_option("share_device_memory", "1"),
                "'share_device_memory' must be a bool"},
        Refusal{"share_engines_text", text_option("share_engines", "true"),
                "'share_engines' must be a bool"}),
    [](const testing::TestParamInfo<Refusal>& info) { return std::string(info.param.name); });

TEST(LoadOptions, UnknownOptionsAreReportedAndIgnored) {
  tte::LoadOptions options;
  testing::internal::CaptureStderr();
  const tte::Status status =
      read({option("num_threads", 4), option("cuda_graphs", true)}, &options);
  const std::string printed = testing::internal::GetCapturedStderr();
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_TRUE(options.cuda_graphs);
  EXPECT_NE(printed.find("ignoring unknown load option 'num_threads'"), std::string::npos)
      << printed;
  // The message lists what is known.
  EXPECT_NE(printed.find("share_engines"), std::string::npos) << printed;
}

TEST(LoadOptions, TheCompileSpecSetsTheBudget) {
  tte::LoadOptions options;
  ASSERT_TRUE(read({}, &options, SpecList({{"weight_streaming_budget", "1024"}})).ok());
  EXPECT_TRUE(options.has_weight_streaming_budget);
  EXPECT_EQ(options.weight_streaming_budget, 1024);
}

TEST(LoadOptions, TheLoadOptionWinsOverTheCompileSpec) {
  tte::LoadOptions options;
  ASSERT_TRUE(read({option("weight_streaming_budget", 7)}, &options,
                   SpecList({{"weight_streaming_budget", "1024"}}))
                  .ok());
  EXPECT_EQ(options.weight_streaming_budget, 7);
}

TEST(LoadOptions, AnEmptyLoadOptionLeavesTheCompileSpec) {
  tte::LoadOptions options;
  testing::internal::CaptureStderr();
  const tte::Status status = read({text_option("weight_streaming_budget", "")}, &options,
                                  SpecList({{"weight_streaming_budget", "1024"}}));
  const std::string printed = testing::internal::GetCapturedStderr();
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(options.weight_streaming_budget, 1024);
  EXPECT_NE(printed.find("is empty and was ignored"), std::string::npos) << printed;
}

TEST(LoadOptions, OtherCompileSpecsAreNotOurs) {
  tte::LoadOptions options;
  ASSERT_TRUE(read({}, &options, SpecList({{"precision", "fp16"}, {"", "x"}})).ok());
  EXPECT_FALSE(options.has_weight_streaming_budget);
}

TEST(LoadOptions, TwoBudgetCompileSpecsAreAnInvalidProgram) {
  tte::LoadOptions options;
  const tte::Status status = read(
      {}, &options, SpecList({{"weight_streaming_budget", "1"}, {"weight_streaming_budget", "2"}}));
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_PROGRAM);
  EXPECT_NE(status.message().find("two 'weight_streaming_budget' compile specs"), std::string::npos)
      << status.message();
}

TEST(LoadOptions, ABadBudgetCompileSpecIsAnInvalidProgram) {
  tte::LoadOptions options;
  const tte::Status status = read({}, &options, SpecList({{"weight_streaming_budget", "-5"}}));
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_PROGRAM);
  EXPECT_NE(status.message().find("compile spec 'weight_streaming_budget': "), std::string::npos)
      << status.message();
}

}  // namespace
