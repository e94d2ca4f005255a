// Two checks of the Program API on what the caller hands it, before
// ExecuTorch sees it: backend options as ExecuTorch's LoadBackendOptionsMap
// (program/backend_options.h: its limits, 64-bit ints, later values
// replacing earlier ones) and the first bytes of a .ptd
// (program/ptd_file_checks.h: the header, where its flatbuffer ends, a
// flatbuffer too short or outside itself).
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <variant>
#include <vector>

#include "program/backend_options.h"
#include "program/ptd_file_checks.h"
#include "text_match.h"

namespace {

namespace et = executorch::runtime;

using tte_test::contains;

tte::BackendOptionValue option(const std::string& backend, const std::string& key,
                               TteOptionType type, int64_t int_value = 0,
                               const std::string& text = "") {
  tte::BackendOptionValue value;
  value.backend = backend;
  value.key = key;
  value.type = type;
  value.int_value = int_value;
  value.string_value = text;
  return value;
}

std::string text_of(const et::BackendOption& option) {
  const auto& text = std::get<std::array<char, et::kMaxOptionValueLength>>(option.value);
  return std::string(text.data(), strnlen(text.data(), text.size()));
}

TEST(BackendOptionsMap, EachTypeBecomesExecuTorchsValue) {
  tte::BackendOptionsMap map;
  const tte::Status status =
      map.build({option("TensorRTBackend", "cuda_graphs", TTE_OPTION_BOOL, 1),
                 option("TensorRTBackend", "dla_core", TTE_OPTION_INT, 1),
                 option("TensorRTBackend", "provider", TTE_OPTION_STRING, 0, "test-host"),
                 option("XnnpackBackend", "num_threads", TTE_OPTION_INT, 4)});
  ASSERT_TRUE(status.ok()) << status.message();
  const auto options = map.map().get_options("TensorRTBackend");
  ASSERT_EQ(options.size(), 3u);
  EXPECT_STREQ(options[0].key, "cuda_graphs");
  EXPECT_EQ(std::get<bool>(options[0].value), true);
  EXPECT_EQ(std::get<int>(options[1].value), 1);
  EXPECT_EQ(text_of(options[2]), "test-host");
  EXPECT_EQ(map.map().get_options("XnnpackBackend").size(), 1u);
}

TEST(BackendOptionsMap, IntsBeyond32BitsTravelAsDecimalText) {
  tte::BackendOptionsMap map;
  ASSERT_TRUE(
      map.build({option("TensorRTBackend", "weight_streaming_budget", TTE_OPTION_INT, 8589934592)})
          .ok());
  const auto options = map.map().get_options("TensorRTBackend");
  ASSERT_EQ(options.size(), 1u);
  EXPECT_EQ(text_of(options[0]), "8589934592");
}

TEST(BackendOptionsMap, ALaterValueReplacesAnEarlierOne) {
  tte::BackendOptionsMap map;
  ASSERT_TRUE(map.build({option("TensorRTBackend", "cuda_graphs", TTE_OPTION_BOOL, 1),
                         option("TensorRTBackend", "cuda_graphs", TTE_OPTION_BOOL, 0)})
                  .ok());
  const auto options = map.map().get_options("TensorRTBackend");
  ASSERT_EQ(options.size(), 1u);
  EXPECT_EQ(std::get<bool>(options[0].value), false);
}

struct Refused {
  const char* name;
  tte::BackendOptionValue value;
  const char* message;
};

class BackendOptionRefusal : public testing::TestWithParam<Refused> {};

TEST_P(BackendOptionRefusal, SaysWhichLimit) {
  tte::BackendOptionsMap map;
  const tte::Status status = map.build({GetParam().value});
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(status.message(), GetParam().message)) << status.message();
}

INSTANTIATE_TEST_SUITE_P(
    BackendOptionsMap, BackendOptionRefusal,
    testing::Values(Refused{"empty_backend", option("", "k", TTE_OPTION_BOOL),
                            "the backend name must have 1 to 63 characters"},
                    Refused{"long_backend", option(std::string(64, 'b'), "k", TTE_OPTION_BOOL),
                            "the backend name must have 1 to 63 characters"},
                    Refused{"empty_key", option("TensorRTBackend", "", TTE_OPTION_BOOL),
                            "the key must have 1 to 63 characters"},
                    Refused{"long_key",
                            option("TensorRTBackend", std::string(64, 'k'), TTE_OPTION_BOOL),
                            "the key must have 1 to 63 characters"},
                    Refused{"long_string",
                            option("TensorRTBackend", "plugin_libraries", TTE_OPTION_STRING, 0,
                                   std::string(256, 'p')),
                            "string values hold at most 255 bytes, got 256"},
                    Refused{"unknown_type", option("TensorRTBackend", "k", 7), "unknown type 7"}),
    [](const testing::TestParamInfo<Refused>& info) { return std::string(info.param.name); });

TEST(BackendOptionsMap, AtMostEightBackends) {
  std::vector<tte::BackendOptionValue> values;
  for (int i = 0; i < 9; ++i) {
    values.push_back(option("Backend" + std::to_string(i), "k", TTE_OPTION_BOOL, 1));
  }
  tte::BackendOptionsMap map;
  const tte::Status status = map.build(values);
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(status.message(), "more than 8 backends")) << status.message();
}

// A .ptd's first 32 bytes: 8 bytes, then "FH01", u32 header length, u64
// flatbuffer offset, u64 flatbuffer size (little-endian).
std::vector<uint8_t> ptd_head(uint64_t offset, uint64_t size) {
  std::vector<uint8_t> head(32, 0);
  std::memcpy(head.data() + 8, "FH01", 4);
  for (int i = 0; i < 8; ++i) {
    head[16 + i] = static_cast<uint8_t>(offset >> (8 * i));
    head[24 + i] = static_cast<uint8_t>(size >> (8 * i));
  }
  return head;
}

TEST(PtdHead, AHeaderIsAccepted) {
  const auto head = ptd_head(64, 100);
  EXPECT_TRUE(tte::check_data_file_head(head.data(), head.size(), "data file 'w.ptd'").ok());
}

TEST(PtdHead, AnotherMagicIsNamed) {
  auto head = ptd_head(64, 100);
  std::memcpy(head.data() + 8, "PK\x03\x04", 4);
  const tte::Status status = tte::check_data_file_head(head.data(), head.size(), "data file 'w'");
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_PROGRAM);
  EXPECT_TRUE(contains(status.message(), "cannot load data file 'w': not an ExecuTorch data file"))
      << status.message();
  EXPECT_TRUE(contains(status.message(), "where a .ptd has 'FH01'")) << status.message();
}

TEST(PtdHead, AShortFileSaysHowShort) {
  const uint8_t head[5] = {1, 2, 3, 4, 5};
  const tte::Status status = tte::check_data_file_head(head, sizeof(head), "data file 'w'");
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_PROGRAM);
  EXPECT_TRUE(contains(status.message(), "missing (the file has 5 bytes)")) << status.message();
}

TEST(PtdHead, TheFlatbufferEndsWhereTheHeaderSaysWithinTheFile) {
  const auto head = ptd_head(64, 100);
  EXPECT_EQ(tte::data_file_flatbuffer_extent(head.data(), head.size(), 1000), 164u);
  // Past the file: the whole file (ExecuTorch's own read then fails).
  EXPECT_EQ(tte::data_file_flatbuffer_extent(head.data(), head.size(), 120), 120u);
  const auto beyond = ptd_head(2000, 1);
  EXPECT_EQ(tte::data_file_flatbuffer_extent(beyond.data(), beyond.size(), 1000), 1000u);
  // An overflowing size does not wrap.
  const auto huge = ptd_head(64, UINT64_MAX);
  EXPECT_EQ(tte::data_file_flatbuffer_extent(huge.data(), huge.size(), 1000), 1000u);
  // No header: nothing is known.
  const uint8_t none[32] = {};
  EXPECT_EQ(tte::data_file_flatbuffer_extent(none, sizeof(none), 1000), 0u);
}

TEST(PtdFields, AFlatbufferShorterThanItsIdentifierIsDamaged) {
  const uint8_t data[4] = {0, 0, 0, 0};
  std::vector<std::string> keys;
  const tte::Status status =
      tte::check_data_file_fields(data, sizeof(data), "data file 'w'", &keys);
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_PROGRAM);
  EXPECT_TRUE(contains(status.message(), "its flatbuffer is 4 bytes long")) << status.message();
}

TEST(PtdFields, AnotherIdentifierIsLeftToExecuTorch) {
  const uint8_t data[16] = {8, 0, 0, 0, 'X', 'X', '0', '1'};
  std::vector<std::string> keys;
  EXPECT_TRUE(tte::check_data_file_fields(data, sizeof(data), "data file 'w'", &keys).ok());
}

TEST(PtdFields, ARootOutsideTheBufferIsDamaged) {
  // Identifier FT01, root offset far past the end.
  const uint8_t data[12] = {0xff, 0xff, 0, 0, 'F', 'T', '0', '1', 0, 0, 0, 0};
  std::vector<std::string> keys;
  const tte::Status status =
      tte::check_data_file_fields(data, sizeof(data), "data file 'w'", &keys);
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_PROGRAM);
  EXPECT_TRUE(contains(status.message(), "its root table lies outside the file"))
      << status.message();
}

}  // namespace
