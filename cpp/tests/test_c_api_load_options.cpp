// tte_num_load_options and tte_load_option_info through the plugin's
// exported C API, as the Python package and tte-run's help read the table.
#include <gtest/gtest.h>

#include <cstddef>
#include <set>
#include <string>

#include "torch_tensorrt_executorch/c_api.h"

namespace {

TteLoadOptionInfo info_at(size_t index) {
  TteLoadOptionInfo info{};
  info.struct_size = sizeof(info);
  TteError error{};
  EXPECT_EQ(tte_load_option_info(index, &info, &error), TTE_OK) << error.message;
  return info;
}

TEST(CApiLoadOptions, EveryRowIsComplete) {
  const size_t count = tte_num_load_options();
  ASSERT_GE(count, 10u);
  std::set<std::string> names;
  const uint32_t known_types =
      (1u << TTE_OPTION_BOOL) | (1u << TTE_OPTION_INT) | (1u << TTE_OPTION_STRING);
  for (size_t i = 0; i < count; ++i) {
    const TteLoadOptionInfo info = info_at(i);
    ASSERT_NE(info.name, nullptr) << i;
    EXPECT_TRUE(names.insert(info.name).second) << "two rows named " << info.name;
    EXPECT_NE(info.accepted_types, 0u) << info.name;
    EXPECT_EQ(info.accepted_types & ~known_types, 0u) << info.name;
    for (const char* text : {info.type, info.must_be, info.fallback, info.doc}) {
      ASSERT_NE(text, nullptr) << info.name;
      EXPECT_GT(std::string(text).size(), 0u) << info.name;
    }
    EXPECT_EQ(info.struct_size, sizeof(info));
  }
  for (const char* expected : {"provider", "cuda_graphs", "weight_streaming_budget",
                               "max_concurrent_runs", "share_engines"}) {
    EXPECT_TRUE(names.count(expected)) << expected;
  }
}

TEST(CApiLoadOptions, OnlyMaxConcurrentRunsIsTheProgramApis) {
  for (size_t i = 0; i < tte_num_load_options(); ++i) {
    const TteLoadOptionInfo info = info_at(i);
    EXPECT_EQ(info.program_only != 0, std::string(info.name) == "max_concurrent_runs") << info.name;
  }
}

TEST(CApiLoadOptions, AnIndexPastTheEndIsRefused) {
  TteLoadOptionInfo info{};
  info.struct_size = sizeof(info);
  TteError error{};
  EXPECT_EQ(tte_load_option_info(tte_num_load_options(), &info, &error),
            TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(error.message).find("does not exist"), std::string::npos) << error.message;
  EXPECT_EQ(info.name, nullptr);
}

TEST(CApiLoadOptions, AStructWithoutItsSizeIsRefused) {
  TteLoadOptionInfo info{};
  TteError error{};
  EXPECT_EQ(tte_load_option_info(0, &info, &error), TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(tte_load_option_info(0, nullptr, &error), TTE_ERROR_INVALID_ARGUMENT);
}

TEST(CApiLoadOptions, AnOlderSmallerStructGetsWhatItHasRoomFor) {
  // A caller built when the struct ended after `accepted_types`.
  TteLoadOptionInfo info{};
  info.struct_size = offsetof(TteLoadOptionInfo, type);
  TteError error{};
  ASSERT_EQ(tte_load_option_info(0, &info, &error), TTE_OK) << error.message;
  EXPECT_NE(info.name, nullptr);
  EXPECT_NE(info.accepted_types, 0u);
  EXPECT_EQ(info.type, nullptr);
  EXPECT_EQ(info.doc, nullptr);
  EXPECT_EQ(info.struct_size, offsetof(TteLoadOptionInfo, type));
}

}  // namespace
