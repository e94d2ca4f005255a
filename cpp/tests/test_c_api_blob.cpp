// tte_blob_describe_json through the plugin's exported C API, as `inspect`
// calls it.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "blob_bytes.h"
#include "torch_tensorrt_executorch/c_api.h"

namespace {

std::vector<std::uint8_t> make_blob(const std::string& metadata, const char* magic,
                                    const std::string& engine) {
  return tte_test::blob_bytes(magic, metadata, engine);
}

const std::string kMetadata =
    R"({"io_bindings":[{"name":"x","dtype":"","shape":[],"is_input":true},)"
    R"({"name":"cach\u00e9","dtype":"","shape":[],"is_input":true},)"
    R"({"name":"y","dtype":"","shape":[],"is_input":false},)"
    R"({"name":"cache_out","dtype":"","shape":[],"is_input":false}],)"
    R"("aliased_io":[{"output":"cache_out","input":"cach\u00e9","kind":"kv_cache_update"}],)"
    R"("hardware_compatible":true,"device_id":1,"serialized_metadata":"gAR9lC4=",)"
    R"("target_platform":"linux_aarch64"})";

TEST(CApiBlob, DescribesAValidBlob) {
  const auto blob = make_blob(kMetadata, "TR02", "PLAN");
  char* json = nullptr;
  TteError error{};
  ASSERT_EQ(tte_blob_describe_json(blob.data(), blob.size(), &json, &error), TTE_OK)
      << error.message;
  ASSERT_NE(json, nullptr);
  const auto doc = nlohmann::ordered_json::parse(json);
  tte_free_string(json);

  std::vector<std::string> keys;
  for (const auto& item : doc.items()) keys.push_back(item.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"magic", "metadata_offset", "metadata_size",
                                            "engine_offset", "engine_size", "io_bindings",
                                            "aliased_io", "hardware_compatible", "device_id",
                                            "serialized_metadata", "target_platform"}));
  EXPECT_EQ(doc["magic"], "TR02");
  EXPECT_EQ(doc["metadata_offset"], 32);
  EXPECT_EQ(doc["metadata_size"], kMetadata.size());
  EXPECT_EQ(doc["engine_offset"], (32 + kMetadata.size() + 15) / 16 * 16);
  EXPECT_EQ(doc["engine_size"], 4);
  ASSERT_EQ(doc["io_bindings"].size(), 4u);
  EXPECT_EQ(doc["io_bindings"][1]["name"], "cach\xc3\xa9");
  EXPECT_EQ(doc["io_bindings"][1]["is_input"], true);
  EXPECT_EQ(doc["io_bindings"][3]["is_input"], false);
  EXPECT_EQ(doc["io_bindings"][0]["dtype"], "");
  EXPECT_EQ(doc["io_bindings"][0]["shape"], nlohmann::ordered_json::array());
  EXPECT_EQ(doc["aliased_io"][0]["output"], "cache_out");
  EXPECT_EQ(doc["aliased_io"][0]["input"], "cach\xc3\xa9");
  EXPECT_EQ(doc["aliased_io"][0]["kind"], "kv_cache_update");
  EXPECT_EQ(doc["hardware_compatible"], true);
  EXPECT_EQ(doc["device_id"], 1);
  EXPECT_EQ(doc["serialized_metadata"], "gAR9lC4=");
  EXPECT_EQ(doc["target_platform"], "linux_aarch64");
}

TEST(CApiBlob, RefusesACorruptBlobWithTheReadersMessage) {
  auto blob = make_blob(kMetadata, "TR02", "PLAN");
  blob[3] = '3';
  char* json = reinterpret_cast<char*>(1);
  TteError error{};
  EXPECT_EQ(tte_blob_describe_json(blob.data(), blob.size(), &json, &error),
            TTE_ERROR_INVALID_PROGRAM);
  EXPECT_EQ(json, nullptr);
  EXPECT_EQ(error.code, TTE_ERROR_INVALID_PROGRAM);
  EXPECT_NE(std::string(error.message).find("'TR03'"), std::string::npos) << error.message;
}

TEST(CApiBlob, TruncationAtEveryByteIsRefused) {
  const auto blob = make_blob(kMetadata, "TR02", "PLAN");
  for (std::size_t size = 0; size < blob.size(); ++size) {
    const std::vector<std::uint8_t> cut(blob.begin(),
                                        blob.begin() + static_cast<std::ptrdiff_t>(size));
    char* json = nullptr;
    TteError error{};
    EXPECT_EQ(tte_blob_describe_json(size ? cut.data() : nullptr, size, &json, &error),
              TTE_ERROR_INVALID_PROGRAM)
        << size;
    EXPECT_EQ(json, nullptr);
    EXPECT_NE(error.message[0], '\0');
  }
}

TEST(CApiBlob, RefusesBadArguments) {
  const auto blob = make_blob(kMetadata, "TR02", "PLAN");
  TteError error{};
  EXPECT_EQ(tte_blob_describe_json(blob.data(), blob.size(), nullptr, &error),
            TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(error.message).find("out_json"), std::string::npos) << error.message;
  char* json = nullptr;
  EXPECT_EQ(tte_blob_describe_json(nullptr, 64, &json, &error), TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(error.message).find("data is NULL"), std::string::npos) << error.message;
  // No error struct is fine too.
  EXPECT_EQ(tte_blob_describe_json(nullptr, 64, &json, nullptr), TTE_ERROR_INVALID_ARGUMENT);
}

}  // namespace
