// The delegate blob reader against what Torch-TensorRT's exporter writes and
// against hostile blobs: every rejection names what was wrong, and no input,
// however short or large its sizes, is read outside its buffer.
#include "blob/blob_reader.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace tte {
namespace {

using Bytes = std::vector<std::uint8_t>;

constexpr std::size_t kMetadataOffsetField = 4;
constexpr std::size_t kMetadataSizeField = 8;
constexpr std::size_t kEngineOffsetField = 12;
constexpr std::size_t kEngineSizeField = 16;
constexpr std::string_view kEngine = "ENGINE-BYTES";

void put_u32(Bytes& blob, std::size_t offset, std::uint32_t value) {
  for (int i = 0; i < 4; ++i) blob[offset + i] = static_cast<std::uint8_t>(value >> (8 * i));
}

void put_u64(Bytes& blob, std::size_t offset, std::uint64_t value) {
  for (int i = 0; i < 8; ++i) blob[offset + i] = static_cast<std::uint8_t>(value >> (8 * i));
}

std::uint32_t get_u32(const Bytes& blob, std::size_t offset) {
  std::uint32_t value = 0;
  for (int i = 0; i < 4; ++i) value |= static_cast<std::uint32_t>(blob[offset + i]) << (8 * i);
  return value;
}

// The layout the exporter writes: header, JSON, zeros to a 16-byte boundary,
// engine; reserved bytes 01 00 .. 00.
Bytes make_blob(std::string_view metadata, std::string_view magic = "TR01",
                std::string_view engine = kEngine) {
  const std::size_t engine_offset = (kBlobHeaderSize + metadata.size() + 15) / 16 * 16;
  Bytes blob(engine_offset + engine.size(), 0);
  std::memcpy(blob.data(), magic.data(), 4);
  put_u32(blob, kMetadataOffsetField, kBlobHeaderSize);
  put_u32(blob, kMetadataSizeField, static_cast<std::uint32_t>(metadata.size()));
  put_u32(blob, kEngineOffsetField, static_cast<std::uint32_t>(engine_offset));
  put_u64(blob, kEngineSizeField, engine.size());
  blob[24] = 1;
  std::memcpy(blob.data() + kBlobHeaderSize, metadata.data(), metadata.size());
  std::memcpy(blob.data() + engine_offset, engine.data(), engine.size());
  return blob;
}

// Python's json.dumps of a str (ensure_ascii): non-ASCII as \uXXXX, with
// surrogate pairs above U+FFFF, as the exporter writes names.
std::string python_json_string(std::string_view utf8) {
  std::string out = "\"";
  char buf[16];
  auto escape = [&](std::uint32_t unit) {
    std::snprintf(buf, sizeof(buf), "\\u%04x", unit);
    out += buf;
  };
  for (std::size_t i = 0; i < utf8.size();) {
    const auto c = static_cast<unsigned char>(utf8[i]);
    std::uint32_t cp = c;
    int extra = 0;
    if (c >= 0xf0) {
      cp = c & 0x07, extra = 3;
    } else if (c >= 0xe0) {
      cp = c & 0x0f, extra = 2;
    } else if (c >= 0xc0) {
      cp = c & 0x1f, extra = 1;
    }
    for (int k = 1; k <= extra; ++k)
      cp = cp << 6 | (static_cast<unsigned char>(utf8[i + k]) & 0x3f);
    i += 1 + extra;
    if (cp == '"' || cp == '\\') {
      out += '\\';
      out += static_cast<char>(cp);
    } else if (cp >= 0x20 && cp < 0x7f) {
      out += static_cast<char>(cp);
    } else if (cp == '\n') {
      out += "\\n";
    } else if (cp < 0x10000) {
      escape(cp);
    } else {
      escape(0xd800 + ((cp - 0x10000) >> 10));
      escape(0xdc00 + ((cp - 0x10000) & 0x3ff));
    }
  }
  return out + "\"";
}

struct Binding {
  std::string name;
  bool is_input;
};

struct Alias {
  std::string output;
  std::string input;
  std::string kind = "kv_cache_update";
};

// TensorRTBackend.preprocess's metadata, in its key order and spelling.
std::string upstream_metadata(const std::vector<Binding>& bindings,
                              const std::vector<Alias>& aliases = {}, int device_id = 0) {
  std::string json = "{\"io_bindings\":[";
  for (std::size_t i = 0; i < bindings.size(); ++i) {
    json +=
        (i ? ",{\"name\":" : "{\"name\":") + python_json_string(bindings[i].name) +
        ",\"dtype\":\"\",\"shape\":[],\"is_input\":" + (bindings[i].is_input ? "true}" : "false}");
  }
  json += "],\"aliased_io\":[";
  for (std::size_t i = 0; i < aliases.size(); ++i) {
    json += (i ? ",{\"output\":" : "{\"output\":") + python_json_string(aliases[i].output) +
            ",\"input\":" + python_json_string(aliases[i].input) + ",\"kind\":\"" +
            aliases[i].kind + "\"}";
  }
  json += "],\"hardware_compatible\":false,\"device_id\":" + std::to_string(device_id) +
          ",\"serialized_metadata\":\"gAR9lC4=\",\"target_platform\":\"linux_x86_64\"}";
  return json;
}

const std::string kTwoBindings = R"({"io_bindings":[{"name":"input_0","is_input":true},)"
                                 R"({"name":"output_0","is_input":false}]})";

ParseResult<DelegateBlob> parse(const Bytes& blob) {
  return parse_delegate_blob(blob.data(), blob.size());
}

// Parses a blob built around `metadata` and returns the error ("" if none).
std::string error_for(std::string_view metadata, std::string_view magic = "TR01") {
  const auto result = parse(make_blob(metadata, magic));
  return result.ok() ? "" : result.error();
}

std::string with_bindings(const std::string& rest) {
  return R"({"io_bindings":[{"name":"x","is_input":true},{"name":"y","is_input":false}])" + rest +
         "}";
}

#define EXPECT_REJECTED(result, fragment)                                           \
  do {                                                                              \
    const auto& r_ = (result);                                                      \
    ASSERT_FALSE(r_.ok()) << "accepted a blob that should fail with: " << fragment; \
    EXPECT_NE(r_.error().find(fragment), std::string::npos) << r_.error();          \
  } while (0)

#define EXPECT_ERROR(error, fragment)                                             \
  do {                                                                            \
    const std::string e_ = (error);                                               \
    ASSERT_FALSE(e_.empty()) << "accepted, expected an error with: " << fragment; \
    EXPECT_NE(e_.find(fragment), std::string::npos) << e_;                        \
  } while (0)

// ---- What upstream's exporter writes ------------------------------------

TEST(BlobReader, ReadsTheBytesTheUpstreamWriterProduces) {
  // json.dumps(..., separators=(",", ":")) and struct.pack("<4sIIIQ8s") of a
  // two-input, two-output engine with one KV-cache alias and a non-ASCII name.
  const std::string metadata =
      R"({"io_bindings":[{"name":"x","dtype":"","shape":[],"is_input":true},)"
      R"({"name":"cach\u00e9_k","dtype":"","shape":[],"is_input":true},)"
      R"({"name":"output0","dtype":"","shape":[],"is_input":false},)"
      R"({"name":"out_k","dtype":"","shape":[],"is_input":false}],)"
      R"("aliased_io":[{"output":"out_k","input":"cach\u00e9_k","kind":"kv_cache_update"}],)"
      R"("hardware_compatible":false,"device_id":1,"serialized_metadata":"gAR9lC4=",)"
      R"("target_platform":"linux_x86_64"})";
  ASSERT_EQ(metadata.size(), 434u);
  const Bytes blob = make_blob(metadata, "TR02");
  ASSERT_EQ(blob.size(), 492u);
  const std::uint8_t expected_header[32] = {0x54, 0x52, 0x30, 0x32, 0x20, 0,    0, 0, 0xb2, 0x01, 0,
                                            0,    0xe0, 0x01, 0,    0,    0x0c, 0, 0, 0,    0,    0,
                                            0,    0,    0x01, 0,    0,    0,    0, 0, 0,    0};
  ASSERT_EQ(std::memcmp(blob.data(), expected_header, 32), 0);

  const auto result = parse(blob);
  ASSERT_TRUE(result.ok()) << result.error();
  const DelegateBlob& b = result.value();
  EXPECT_EQ(b.header.version, BlobVersion::kTR02);
  EXPECT_EQ(b.header.metadata_offset, 32u);
  EXPECT_EQ(b.header.metadata_size, 434u);
  EXPECT_EQ(b.header.engine_offset, 480u);
  EXPECT_EQ(b.header.engine_size, kEngine.size());
  EXPECT_EQ(b.engine, blob.data() + 480);
  EXPECT_EQ(b.engine_size, kEngine.size());
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(b.engine), b.engine_size), kEngine);
  EXPECT_EQ(b.metadata.input_names(), (std::vector<std::string>{"x", "cach\xc3\xa9_k"}));
  EXPECT_EQ(b.metadata.output_names(), (std::vector<std::string>{"output0", "out_k"}));
  ASSERT_EQ(b.metadata.aliased_io.size(), 1u);
  EXPECT_EQ(b.metadata.aliased_io[0].output, "out_k");
  EXPECT_EQ(b.metadata.aliased_io[0].input, "cach\xc3\xa9_k");
  EXPECT_EQ(b.metadata.aliased_io[0].kind, AliasKind::kKvCacheUpdate);
  EXPECT_FALSE(b.metadata.hardware_compatible);
  EXPECT_EQ(b.metadata.device_id, 1);
  EXPECT_EQ(b.metadata.serialized_metadata, "gAR9lC4=");
  EXPECT_EQ(b.metadata.target_platform, "linux_x86_64");
  EXPECT_EQ(b.metadata.io_bindings[0].dtype, "");
  EXPECT_TRUE(b.metadata.io_bindings[0].shape.empty());
}

TEST(BlobReader, ParsesValidHeaderAndMetadata) {
  const Bytes blob = make_blob(
      R"({"io_bindings":[{"name":"input_0","is_input":true},)"
      R"({"name":"output_0","is_input":false}],"hardware_compatible":true,"device_id":2})");
  const auto result = parse(blob);
  ASSERT_TRUE(result.ok()) << result.error();
  const DelegateBlob& b = result.value();
  EXPECT_EQ(b.header.metadata_offset, kBlobHeaderSize);
  EXPECT_EQ(b.header.engine_offset % kEngineAlignment, 0u);
  EXPECT_EQ(b.metadata.input_names(), std::vector<std::string>{"input_0"});
  EXPECT_EQ(b.metadata.output_names(), std::vector<std::string>{"output_0"});
  EXPECT_TRUE(b.metadata.hardware_compatible);
  EXPECT_EQ(b.metadata.device_id, 2);
  EXPECT_EQ(b.engine, blob.data() + b.header.engine_offset);
  EXPECT_EQ(b.engine_size, kEngine.size());
}

TEST(BlobReader, DefaultsOptionalFields) {
  const auto result = parse(make_blob(kTwoBindings));
  ASSERT_TRUE(result.ok()) << result.error();
  EXPECT_TRUE(result.value().metadata.aliased_io.empty());
  EXPECT_FALSE(result.value().metadata.hardware_compatible);
  EXPECT_EQ(result.value().metadata.device_id, 0);
  EXPECT_EQ(result.value().metadata.serialized_metadata, "");
  EXPECT_EQ(result.value().metadata.target_platform, "");
}

TEST(BlobReader, ParsesAliasedIoOfBothKinds) {
  const auto result = parse(make_blob(
      upstream_metadata({{"in_k", true}, {"in_u", true}, {"out_k", false}, {"out_u", false}},
                        {{"out_k", "in_k", "kv_cache_update"}, {"out_u", "in_u", "user"}}),
      "TR02"));
  ASSERT_TRUE(result.ok()) << result.error();
  const auto& aliases = result.value().metadata.aliased_io;
  ASSERT_EQ(aliases.size(), 2u);
  EXPECT_EQ(aliases[0].output, "out_k");
  EXPECT_EQ(aliases[0].input, "in_k");
  EXPECT_EQ(aliases[0].kind, AliasKind::kKvCacheUpdate);
  EXPECT_EQ(aliases[1].output, "out_u");
  EXPECT_EQ(aliases[1].input, "in_u");
  EXPECT_EQ(aliases[1].kind, AliasKind::kUser);
}

TEST(BlobReader, AliasKindDefaultsToKvCacheUpdate) {
  const auto result =
      parse(make_blob(with_bindings(R"(,"aliased_io":[{"output":"y","input":"x"}])"), "TR02"));
  ASSERT_TRUE(result.ok()) << result.error();
  EXPECT_EQ(result.value().metadata.aliased_io.at(0).kind, AliasKind::kKvCacheUpdate);
}

TEST(BlobReader, ParsesEmptyAliasedIoUnderTR01) {
  const auto result = parse(make_blob(upstream_metadata({{"input_0", true}, {"output_0", false}})));
  ASSERT_TRUE(result.ok()) << result.error();
  EXPECT_TRUE(result.value().metadata.aliased_io.empty());
}

TEST(BlobReader, InputNamedAliasedIoWithNoAliasesStillParses) {
  const auto result = parse(make_blob(R"({"io_bindings":[{"name":"aliased_io","is_input":true},)"
                                      R"({"name":"device_id","is_input":false}],"device_id":7})"));
  ASSERT_TRUE(result.ok()) << result.error();
  EXPECT_TRUE(result.value().metadata.aliased_io.empty());
  EXPECT_EQ(result.value().metadata.device_id, 7);
}

TEST(BlobReader, KeyOrderDoesNotMatter) {
  const std::string bindings =
      R"("io_bindings":[{"is_input":true,"name":"k"},{"name":"o","is_input":false}])";
  const std::string aliases = R"("aliased_io":[{"kind":"user","input":"k","output":"o"}])";
  const std::string scalars = R"("device_id":3,"hardware_compatible":true)";
  for (const std::string& metadata : {"{" + bindings + "," + aliases + "," + scalars + "}",
                                      "{" + aliases + "," + scalars + "," + bindings + "}",
                                      "{" + scalars + "," + bindings + "," + aliases + "}"}) {
    const auto result = parse(make_blob(metadata, "TR02"));
    ASSERT_TRUE(result.ok()) << metadata << ": " << result.error();
    EXPECT_EQ(result.value().metadata.aliased_io.size(), 1u);
    EXPECT_EQ(result.value().metadata.device_id, 3);
    EXPECT_TRUE(result.value().metadata.hardware_compatible);
  }
}

TEST(BlobReader, UnknownKeysAreIgnoredAtEveryLevel) {
  const auto result = parse(make_blob(
      R"({"future":{"device_id":9,"io_bindings":[1,2]},"io_bindings":[{"name":"x","is_input":true,)"
      R"("layout":{"strides":[4,1]},"device_id":5}],"device_id":6,"extra":[null,1.5,"s"],)"
      R"("aliased_io":[],"zz":true})"));
  ASSERT_TRUE(result.ok()) << result.error();
  EXPECT_EQ(result.value().metadata.device_id, 6);
  EXPECT_EQ(result.value().metadata.input_names(), std::vector<std::string>{"x"});
}

TEST(BlobReader, KeysSpelledByStringValuesAreNotKeys) {
  const auto result =
      parse(make_blob(R"({"serialized_metadata":"io_bindings","target_platform":"device_id",)"
                      R"("io_bindings":[{"name":"x","is_input":true}]})"));
  ASSERT_TRUE(result.ok()) << result.error();
  EXPECT_EQ(result.value().metadata.device_id, 0);
  EXPECT_EQ(result.value().metadata.serialized_metadata, "io_bindings");
}

TEST(BlobReader, EmptyIoBindingsMeansBindByEngineNames) {
  const auto result = parse(make_blob(R"({"io_bindings":[]})"));
  ASSERT_TRUE(result.ok()) << result.error();
  EXPECT_TRUE(result.value().metadata.io_bindings.empty());
}

TEST(BlobReader, AliasesWithEmptyIoBindingsAreLeftToTheEngine) {
  // The names are the engine's then; the backend checks them after loading.
  const auto result = parse(make_blob(
      R"({"io_bindings":[],"aliased_io":[{"output":"output_0","input":"input_1"}]})", "TR02"));
  ASSERT_TRUE(result.ok()) << result.error();
  EXPECT_EQ(result.value().metadata.aliased_io.at(0).input, "input_1");
}

TEST(BlobReader, ReadsShapeAndDtypeWhenAWriterFillsThem) {
  const auto result = parse(make_blob(
      R"({"io_bindings":[{"name":"x","dtype":"float16","shape":[-1,3,9223372036854775807],"is_input":true}]})"));
  ASSERT_TRUE(result.ok()) << result.error();
  const IoBinding& x = result.value().metadata.io_bindings.at(0);
  EXPECT_EQ(x.dtype, "float16");
  EXPECT_EQ(x.shape, (std::vector<std::int64_t>{-1, 3, std::numeric_limits<std::int64_t>::max()}));
}

TEST(BlobReader, ReadsTheEndsOfTheDeviceIdRange) {
  for (const std::int64_t device : {0LL, 7LL, 2147483647LL}) {
    const auto result = parse(make_blob(with_bindings(",\"device_id\":" + std::to_string(device))));
    ASSERT_TRUE(result.ok()) << result.error();
    EXPECT_EQ(result.value().metadata.device_id, device);
  }
}

// ---- Unicode -------------------------------------------------------------

TEST(BlobReader, DecodesEscapedNamesAsTheExporterWritesThem) {
  // Latin, CJK, an emoji (a surrogate pair), a quote, a backslash, a newline.
  const std::vector<std::string> names = {
      "caf\xc3\xa9", "\xe5\x85\xa5\xe5\x8a\x9b", "\xf0\x9f\x98\x80_0", "a\"b", "c\\d",
      "line\nbreak"};
  std::vector<Binding> bindings;
  for (std::size_t i = 0; i < names.size(); ++i) bindings.push_back({names[i], i < 3});
  const std::string metadata = upstream_metadata(bindings, {{names[4], names[0]}});
  ASSERT_EQ(metadata.find("\xc3"), std::string::npos) << "the writer escapes all non-ASCII";
  ASSERT_NE(metadata.find("\\ud83d\\ude00"), std::string::npos);
  const auto result = parse(make_blob(metadata, "TR02"));
  ASSERT_TRUE(result.ok()) << result.error();
  const auto& parsed = result.value().metadata.io_bindings;
  ASSERT_EQ(parsed.size(), names.size());
  for (std::size_t i = 0; i < names.size(); ++i) EXPECT_EQ(parsed[i].name, names[i]);
  EXPECT_EQ(result.value().metadata.aliased_io.at(0).input, names[0]);
  EXPECT_EQ(result.value().metadata.aliased_io.at(0).output, names[4]);
}

TEST(BlobReader, ReadsRawUtf8Names) {
  const auto result =
      parse(make_blob("{\"io_bindings\":[{\"name\":\"\xce\xb1\xce\xb2\",\"is_input\":true},"
                      "{\"name\":\"\xf0\x9f\x98\x80\",\"is_input\":false}]}"));
  ASSERT_TRUE(result.ok()) << result.error();
  EXPECT_EQ(result.value().metadata.input_names(), std::vector<std::string>{"\xce\xb1\xce\xb2"});
  EXPECT_EQ(result.value().metadata.output_names(), std::vector<std::string>{"\xf0\x9f\x98\x80"});
}

TEST(BlobReader, ParseErrorsAreReportedInAscii) {
  // The parser quotes the bytes it stopped at; they may not be UTF-8.
  const std::string error =
      error_for("{\"io_bindings\":[{\"name\":\"\xff\xfe\",\"is_input\":true}]}");
  EXPECT_ERROR(error, "\\xff");
  for (const char c : error) EXPECT_LT(static_cast<unsigned char>(c), 0x80) << error;
}

TEST(BlobReader, RejectsInvalidUtf8AndLoneSurrogates) {
  EXPECT_ERROR(error_for("{\"io_bindings\":[{\"name\":\"\xff\xfe\",\"is_input\":true}]}"),
               "not valid JSON");
  EXPECT_ERROR(error_for("{\"io_bindings\":[{\"name\":\"\xc3\",\"is_input\":true}]}"),
               "not valid JSON");
  EXPECT_ERROR(error_for(R"({"io_bindings":[{"name":"\ud800","is_input":true}]})"),
               "not valid JSON");
  EXPECT_ERROR(error_for(R"({"io_bindings":[{"name":"\udc00x","is_input":true}]})"),
               "not valid JSON");
}

TEST(BlobReader, RejectsANameHoldingNul) {
  // The name crosses the provider ABI as a C string and would lose its tail.
  EXPECT_ERROR(error_for(R"({"io_bindings":[{"name":"x\u0000y","is_input":true}]})"),
               "io_bindings[0].name");
  EXPECT_ERROR(error_for(R"({"io_bindings":[{"name":"x\u0000y","is_input":true}]})"), "U+0000");
}

// ---- Header rejections ---------------------------------------------------

TEST(BlobReader, RejectsInvalidMagic) {
  Bytes blob = make_blob(kTwoBindings);
  blob[0] = 'X';
  EXPECT_REJECTED(parse(blob), "'XR01' (58 52 30 31), expected 'TR01' or 'TR02'");
  blob[0] = 0;
  EXPECT_REJECTED(parse(blob), "(00 52 30 31)");
}

TEST(BlobReader, RejectsUnknownFutureMagic) {
  EXPECT_REJECTED(parse(make_blob(kTwoBindings, "TR03")),
                  "upgrade torch-tensorrt-executorch-runtime");
  EXPECT_REJECTED(parse(make_blob(kTwoBindings, "TR00")), "'TR00'");
  EXPECT_REJECTED(parse(make_blob(kTwoBindings, "tr01")), "expected 'TR01' or 'TR02'");
}

TEST(BlobReader, RejectsABlobShorterThanTheHeader) {
  for (std::size_t size : {0u, 1u, 4u, 31u}) {
    Bytes blob(size == 0 ? 1 : size, 0);
    std::memcpy(blob.data(), "TR01", std::min<std::size_t>(4, blob.size()));
    EXPECT_REJECTED(parse_delegate_blob(blob.data(), size),
                    std::to_string(size) + " bytes, shorter than the 32-byte header");
  }
  EXPECT_REJECTED(parse_delegate_blob(nullptr, 100), "null pointer");
}

TEST(BlobReader, RejectsMetadataOffsetInsideTheHeader) {
  for (std::uint32_t offset : {0u, 8u, 31u}) {
    Bytes blob = make_blob(kTwoBindings);
    put_u32(blob, kMetadataOffsetField, offset);
    EXPECT_REJECTED(parse(blob), "metadata_offset (bytes 4..7) is " + std::to_string(offset));
  }
}

TEST(BlobReader, RejectsUnalignedEngineOffset) {
  Bytes blob = make_blob(kTwoBindings);
  const std::uint32_t aligned = get_u32(blob, kEngineOffsetField);
  for (std::uint32_t delta : {1u, 8u, 15u}) {
    put_u32(blob, kEngineOffsetField, aligned - 16 + delta);
    EXPECT_REJECTED(parse(blob), "not a multiple of 16");
  }
}

TEST(BlobReader, RejectsEnginePastEndOfBlob) {
  Bytes blob = make_blob(kTwoBindings);
  put_u64(blob, kEngineSizeField, blob.size());
  EXPECT_REJECTED(parse(blob), "runs past the end");
  put_u64(blob, kEngineSizeField, kEngine.size() + 1);
  EXPECT_REJECTED(parse(blob), "runs past the end");
}

TEST(BlobReader, AcceptsTrailingBytesAfterTheEngine) {
  // The engine extent comes from the header, not from the blob's end.
  Bytes blob = make_blob(kTwoBindings);
  blob.resize(blob.size() + 5, 0xee);
  const auto result = parse(blob);
  ASSERT_TRUE(result.ok()) << result.error();
  EXPECT_EQ(result.value().engine_size, kEngine.size());
}

TEST(BlobReader, RejectsEngineOffsetPastEndOfBlob) {
  Bytes blob = make_blob(kTwoBindings);
  put_u32(blob, kEngineOffsetField, static_cast<std::uint32_t>((blob.size() + 31) / 16 * 16));
  put_u64(blob, kEngineSizeField, 0);
  EXPECT_REJECTED(parse(blob), "engine_offset (bytes 12..15) is");
  EXPECT_REJECTED(parse(blob), "past the end");
}

TEST(BlobReader, RejectsMetadataPastEndOfBlob) {
  Bytes blob = make_blob(kTwoBindings);
  put_u32(blob, kMetadataSizeField, static_cast<std::uint32_t>(blob.size()));
  EXPECT_REJECTED(parse(blob), "metadata (offset 32, size");
  EXPECT_REJECTED(parse(blob), "past the end");
}

TEST(BlobReader, RejectsMetadataThatRunsIntoTheEngine) {
  Bytes blob = make_blob(kTwoBindings);
  const std::uint32_t engine_offset = get_u32(blob, kEngineOffsetField);
  put_u32(blob, kMetadataSizeField, engine_offset - 32 + 1);
  EXPECT_REJECTED(parse(blob), "past engine_offset " + std::to_string(engine_offset));
}

TEST(BlobReader, RejectsMetadataThatStartsPastTheEngine) {
  Bytes blob(8192, 0);
  std::memcpy(blob.data(), "TR01", 4);
  put_u32(blob, kMetadataOffsetField, 4096);
  put_u32(blob, kMetadataSizeField, static_cast<std::uint32_t>(kTwoBindings.size()));
  put_u32(blob, kEngineOffsetField, 48);
  put_u64(blob, kEngineSizeField, 4);
  std::memcpy(blob.data() + 4096, kTwoBindings.data(), kTwoBindings.size());
  EXPECT_REJECTED(parse(blob), "past engine_offset 48");
}

TEST(BlobReader, RejectsAnEmptyEngine) {
  Bytes blob = make_blob(kTwoBindings, "TR01", "");
  EXPECT_REJECTED(parse(blob), "engine_size (bytes 16..23) is 0");
}

TEST(BlobReader, AcceptsMetadataAtALaterOffset) {
  // Nothing requires the metadata to follow the header directly.
  Bytes blob(256, 0);
  std::memcpy(blob.data(), "TR01", 4);
  put_u32(blob, kMetadataOffsetField, 64);
  put_u32(blob, kMetadataSizeField, static_cast<std::uint32_t>(kTwoBindings.size()));
  put_u32(blob, kEngineOffsetField, 240);
  put_u64(blob, kEngineSizeField, 16);
  std::memcpy(blob.data() + 64, kTwoBindings.data(), kTwoBindings.size());
  const auto result = parse(blob);
  ASSERT_TRUE(result.ok()) << result.error();
  EXPECT_EQ(result.value().engine, blob.data() + 240);
}

// ---- Sizes near 2^32 and 2^64 ----------------------------------------------

TEST(BlobReader, RejectsEngineSizesThatWouldWrapPastZero) {
  const Bytes valid = make_blob(kTwoBindings);
  const std::uint32_t engine_offset = get_u32(valid, kEngineOffsetField);
  const std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
  for (const std::uint64_t size :
       {max, max - 15, max - 31, max - engine_offset + 1, max - engine_offset + 12,
        std::uint64_t{1} << 63, std::uint64_t{1} << 32, std::uint64_t{0xffffffff},
        std::uint64_t{0x100000000} - engine_offset}) {
    Bytes blob = valid;
    put_u64(blob, kEngineSizeField, size);
    EXPECT_REJECTED(parse(blob), "runs past the end");
  }
}

TEST(BlobReader, RejectsEngineExtentThatWrapsInALargeBlob) {
  // 4096 + (2^64 - 4085) wraps to 11, inside an 8 KiB blob.
  Bytes blob(8192, 0);
  std::memcpy(blob.data(), "TR01", 4);
  put_u32(blob, kMetadataOffsetField, 32);
  put_u32(blob, kMetadataSizeField, static_cast<std::uint32_t>(kTwoBindings.size()));
  put_u32(blob, kEngineOffsetField, 4096);
  put_u64(blob, kEngineSizeField, ~std::uint64_t{0} - (4096 - 12));
  std::memcpy(blob.data() + 32, kTwoBindings.data(), kTwoBindings.size());
  EXPECT_REJECTED(parse(blob), "runs past the end");
}

TEST(BlobReader, RejectsOffsetsAndSizesNear2To32) {
  const Bytes valid = make_blob(kTwoBindings);
  const std::uint32_t max = std::numeric_limits<std::uint32_t>::max();
  for (const std::uint32_t size : {max, max - 31, max - 32, 0x80000000u}) {
    Bytes blob = valid;
    put_u32(blob, kMetadataSizeField, size);
    EXPECT_REJECTED(parse(blob), "past the end");
  }
  for (const std::uint32_t offset : {max, max - 31, 0x80000000u}) {
    Bytes blob = valid;
    put_u32(blob, kMetadataOffsetField, offset);
    EXPECT_REJECTED(parse(blob), "past the end");
  }
  // Both at their maximum: a 32-bit sum would wrap to a small number.
  Bytes blob = valid;
  put_u32(blob, kMetadataOffsetField, max);
  put_u32(blob, kMetadataSizeField, max);
  EXPECT_REJECTED(parse(blob), "ends at byte 8589934590");
  for (const std::uint32_t offset : {0xfffffff0u, 0x80000000u, 0x100u}) {
    Bytes b = valid;
    put_u32(b, kEngineOffsetField, offset);
    EXPECT_REJECTED(parse(b), "engine_offset (bytes 12..15) is " + std::to_string(offset));
  }
}

TEST(BlobReader, HeaderCheckDoesNotReadPastTheGivenSize) {
  // A blob whose header claims a 2^32-byte metadata region in a buffer that
  // is really only the header: the reader must stop at the header.
  Bytes header_only(kBlobHeaderSize);
  const Bytes valid = make_blob(kTwoBindings);
  std::memcpy(header_only.data(), valid.data(), kBlobHeaderSize);
  put_u32(header_only, kMetadataSizeField, 0xffffffffu);
  EXPECT_REJECTED(parse(header_only), "past the end of the 32-byte blob");
}

// ---- Truncation and corruption --------------------------------------------

TEST(BlobReader, TruncationAtEveryByteFailsCleanly) {
  const Bytes valid =
      make_blob(upstream_metadata({{"x", true}, {"k", true}, {"y", false}, {"k_out", false}},
                                  {{"k_out", "k"}}),
                "TR02");
  ASSERT_TRUE(parse(valid).ok());
  for (std::size_t size = 0; size < valid.size(); ++size) {
    // A buffer of exactly `size` bytes, so a sanitizer sees any over-read.
    const Bytes cut(valid.begin(), valid.begin() + static_cast<std::ptrdiff_t>(size));
    const auto result = parse_delegate_blob(size ? cut.data() : valid.data(), size);
    EXPECT_FALSE(result.ok()) << "a blob cut to " << size << " bytes parsed";
    EXPECT_FALSE(result.error().empty());
  }
}

TEST(BlobReader, MetadataCutAtEveryByteFailsCleanly) {
  // The header stays consistent; only the JSON is short.
  const std::string metadata = upstream_metadata({{"x", true}, {"y\xc3\xa9", false}});
  for (std::size_t size = 0; size < metadata.size(); ++size) {
    const auto result = parse(make_blob(metadata.substr(0, size)));
    EXPECT_FALSE(result.ok()) << "metadata cut to " << size << " bytes parsed";
    EXPECT_NE(result.error().find("metadata"), std::string::npos) << result.error();
  }
}

TEST(BlobReader, EveryFlippedBitIsReadOrRefusedWithoutCrashing) {
  const Bytes valid =
      make_blob(upstream_metadata({{"x", true}, {"k", true}, {"y", false}, {"k_out", false}},
                                  {{"k_out", "k"}}),
                "TR02");
  std::size_t refused = 0;
  for (std::size_t bit = 0; bit < valid.size() * 8; ++bit) {
    Bytes blob = valid;
    blob[bit / 8] ^= static_cast<std::uint8_t>(1u << (bit % 8));
    const auto result = parse(blob);
    if (!result.ok()) {
      ++refused;
      EXPECT_FALSE(result.error().empty());
    } else {
      EXPECT_LE(result.value().engine + result.value().engine_size, blob.data() + blob.size());
    }
  }
  EXPECT_GT(refused, 0u);
}

// ---- Metadata rejections ---------------------------------------------------

TEST(BlobReader, RejectsMissingIoBindings) {
  EXPECT_ERROR(error_for(R"({"hardware_compatible":false})"), "no \"io_bindings\"");
  EXPECT_ERROR(error_for(R"({"io_binding":[]})"), "no \"io_bindings\"");
}

TEST(BlobReader, RejectsMetadataThatIsNotAJsonObject) {
  EXPECT_ERROR(error_for("[]"), "must be a JSON object, got array");
  EXPECT_ERROR(error_for("\"io_bindings\""), "got string");
  EXPECT_ERROR(error_for("null"), "got null");
  EXPECT_ERROR(error_for(""), "not valid JSON");
  EXPECT_ERROR(error_for("{\"io_bindings\":[]}{}"), "not valid JSON");
  EXPECT_ERROR(error_for("{\"io_bindings\":[],}"), "not valid JSON");
}

TEST(BlobReader, ReportsWhereTheJsonBreaks) {
  const std::string error = error_for(R"({"io_bindings":[{"name":"x" "is_input":true}]})");
  EXPECT_ERROR(error, "metadata byte 38");
  EXPECT_ERROR(error, "line 1, column 38");
  EXPECT_ERROR(error, "bytes of metadata at offset 32");
}

TEST(BlobReader, RejectsWrongTypesNamingTheField) {
  EXPECT_ERROR(error_for(R"({"io_bindings":{"name":"x"}})"),
               "io_bindings: expected an array, got object");
  EXPECT_ERROR(error_for(R"({"io_bindings":[1]})"),
               "io_bindings[0]: expected an object, got number");
  EXPECT_ERROR(error_for(R"({"io_bindings":[{"name":1,"is_input":true}]})"),
               "io_bindings[0].name: expected a string, got number");
  EXPECT_ERROR(error_for(R"({"io_bindings":[{"name":"x","is_input":1}]})"),
               "io_bindings[0].is_input: expected true or false, got number");
  EXPECT_ERROR(error_for(R"({"io_bindings":[{"name":"x","is_input":"true"}]})"),
               "io_bindings[0].is_input: expected true or false, got string");
  EXPECT_ERROR(error_for(R"({"io_bindings":[{"name":"x","is_input":true,"dtype":5}]})"),
               "io_bindings[0].dtype: expected a string");
  EXPECT_ERROR(error_for(R"({"io_bindings":[{"name":"x","is_input":true,"shape":"2x3"}]})"),
               "io_bindings[0].shape: expected an array of integers");
  EXPECT_ERROR(error_for(R"({"io_bindings":[{"name":"x","is_input":true,"shape":[1,2.5]}]})"),
               "io_bindings[0].shape[1]: expected an integer");
  EXPECT_ERROR(
      error_for(R"({"io_bindings":[{"name":"x","is_input":true,"shape":[18446744073709551615]}]})"),
      "io_bindings[0].shape[0]: integer 18446744073709551615 does not fit in int64");
  EXPECT_ERROR(error_for(with_bindings(R"(,"aliased_io":{})")),
               "aliased_io: expected an array, got object");
  EXPECT_ERROR(error_for(with_bindings(R"(,"aliased_io":null)")),
               "aliased_io: expected an array, got null");
  EXPECT_ERROR(error_for(with_bindings(R"(,"aliased_io":["y"])"), "TR02"),
               "aliased_io[0]: expected an object, got string");
  EXPECT_ERROR(
      error_for(with_bindings(R"(,"aliased_io":[{"output":"y","input":"x","kind":1}])"), "TR02"),
      "aliased_io[0].kind: expected a string");
  EXPECT_ERROR(error_for(with_bindings(R"(,"hardware_compatible":"yes")")),
               "hardware_compatible: expected true or false, got string");
  EXPECT_ERROR(error_for(with_bindings(R"(,"hardware_compatible":1)")),
               "hardware_compatible: expected true or false");
  EXPECT_ERROR(error_for(with_bindings(R"(,"device_id":"0")")),
               "device_id: expected an integer, got string");
  EXPECT_ERROR(error_for(with_bindings(R"(,"device_id":1.0)")),
               "device_id: expected an integer, got number");
  EXPECT_ERROR(error_for(with_bindings(R"(,"device_id":true)")),
               "device_id: expected an integer, got boolean");
  EXPECT_ERROR(error_for(with_bindings(R"(,"serialized_metadata":null)")),
               "serialized_metadata: expected a string");
  EXPECT_ERROR(error_for(with_bindings(R"(,"target_platform":["linux"])")),
               "target_platform: expected a string");
}

TEST(BlobReader, RejectsDeviceIdsThatAreNotADeviceIndex) {
  for (const char* device : {"-2", "-2147483648", "2147483648", "4294967297", "9223372036854775807",
                             "18446744073709551615"}) {
    EXPECT_ERROR(error_for(with_bindings(std::string(",\"device_id\":") + device)),
                 std::string("device_id: ") + device + " is not a CUDA device index");
  }
  // Too large even for 64 bits: the JSON number is no longer an integer.
  EXPECT_ERROR(error_for(with_bindings(",\"device_id\":99999999999999999999")),
               "device_id: expected an integer");
}

TEST(BlobReader, RejectsBindingEntriesWithMissingKeys) {
  EXPECT_ERROR(error_for(R"({"io_bindings":[{"name":"x","is_input":true},{"is_input":false}]})"),
               "io_bindings[1]: has no \"name\"");
  // No default for is_input: guessing would shift every later argument.
  EXPECT_ERROR(error_for(R"({"io_bindings":[{"name":"x","is_input":true},{"name":"v"}]})"),
               "io_bindings[1]: ('v') has no \"is_input\"");
  EXPECT_ERROR(error_for(R"({"io_bindings":[{"name":"x","is_inout":true}]})"),
               "has no \"is_input\"");
}

TEST(BlobReader, RejectsEmptyBindingName) {
  EXPECT_ERROR(
      error_for(R"({"io_bindings":[{"name":"x","is_input":true},{"name":"","is_input":false}]})"),
      "io_bindings[1].name: is empty");
}

TEST(BlobReader, RejectsRepeatedBindingNames) {
  EXPECT_ERROR(
      error_for(R"({"io_bindings":[{"name":"k","is_input":true},{"name":"k","is_input":true}]})"),
      "io_bindings[1]: repeats the name 'k' of io_bindings[0]");
  EXPECT_ERROR(
      error_for(R"({"io_bindings":[{"name":"k","is_input":true},{"name":"o","is_input":false},)"
                R"({"name":"o","is_input":false}]})"),
      "io_bindings[2]: repeats the name 'o' of io_bindings[1]");
  // One TensorRT name space for inputs and outputs.
  EXPECT_ERROR(
      error_for(
          R"({"io_bindings":[{"name":"kv","is_input":true},{"name":"kv","is_input":false}]})"),
      "repeats the name 'kv'");
  // Escaped and raw spellings of one name are one name.
  EXPECT_ERROR(error_for("{\"io_bindings\":[{\"name\":\"\\u00e9\",\"is_input\":true},"
                         "{\"name\":\"\xc3\xa9\",\"is_input\":false}]}"),
               "repeats the name");
}

TEST(BlobReader, MessagesStayOnOneLineAndShort) {
  const std::string error = error_for(
      R"({"io_bindings":[{"name":"a\nb","is_input":true},{"name":"a\nb","is_input":true}]})");
  EXPECT_ERROR(error, "repeats the name 'a\\x0ab'");
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  const std::string long_name(5000, 'n');
  const std::string long_error =
      error_for(R"({"io_bindings":[{"name":")" + long_name + R"(","is_input":true},{"name":")" +
                long_name + R"(","is_input":false}]})");
  EXPECT_ERROR(long_error, "... (5000 bytes)");
  EXPECT_LT(long_error.size(), 400u) << long_error;
}

// Upstream's writer puts every input first, its reader takes them in any
// order: the delegate's arguments are the inputs in order, then the outputs.
TEST(BlobReader, AcceptsInputsAndOutputsInterleaved) {
  const auto result =
      parse(make_blob(R"({"io_bindings":[{"name":"a","is_input":true},)"
                      R"({"name":"y","is_input":false},{"name":"b","is_input":true},)"
                      R"({"name":"z","is_input":false}]})"));
  ASSERT_TRUE(result) << result.error();
  EXPECT_EQ(result.value().metadata.input_names(), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(result.value().metadata.output_names(), (std::vector<std::string>{"y", "z"}));
}

// Upstream writes -1 for an engine whose device had no index.
TEST(BlobReader, ReadsDeviceIdMinusOneAsTheCurrentDevice) {
  const auto result = parse(make_blob(with_bindings(",\"device_id\":-1")));
  ASSERT_TRUE(result) << result.error();
  EXPECT_EQ(result.value().metadata.device_id, kCurrentDevice);
}

TEST(BlobReader, RejectsRepeatedKeys) {
  // Readers disagree on which of two "io_bindings" wins.
  EXPECT_ERROR(error_for(R"({"io_bindings":[],"io_bindings":[{"name":"x","is_input":true}]})"),
               "repeats the key 'io_bindings'");
  EXPECT_ERROR(error_for(R"({"io_bindings":[{"name":"x","name":"y","is_input":true}]})"),
               "repeats the key 'name'");
  EXPECT_ERROR(error_for(R"({"io_bindings":[],"u":{"a":1,"a":2}})"), "repeats the key 'a'");
  // The same key in sibling objects is fine.
  EXPECT_EQ(
      error_for(R"({"io_bindings":[{"name":"x","is_input":true},{"name":"y","is_input":false}]})"),
      "");
}

TEST(BlobReader, RejectsUnknownAliasKind) {
  EXPECT_ERROR(
      error_for(with_bindings(R"(,"aliased_io":[{"output":"y","input":"x","kind":"shared"}])"),
                "TR02"),
      "aliased_io[0].kind: unknown alias kind 'shared', expected 'kv_cache_update' or 'user'");
  EXPECT_ERROR(
      error_for(with_bindings(R"(,"aliased_io":[{"output":"y","input":"x","kind":""}])"), "TR02"),
      "unknown alias kind ''");
}

TEST(BlobReader, RejectsAliasEntriesWithMissingOrBlankNames) {
  EXPECT_ERROR(error_for(with_bindings(R"(,"aliased_io":[{"input":"x"}])"), "TR02"),
               "aliased_io[0]: has no \"output\"");
  EXPECT_ERROR(error_for(with_bindings(R"(,"aliased_io":[{"output":"y"}])"), "TR02"),
               "aliased_io[0]: has no \"input\"");
  EXPECT_ERROR(error_for(with_bindings(R"(,"aliased_io":[{"output":"y","input":""}])"), "TR02"),
               "aliased_io[0].input: is empty");
}

TEST(BlobReader, RejectsAliasesOfUnknownOrWrongDirectionTensors) {
  EXPECT_ERROR(error_for(with_bindings(R"(,"aliased_io":[{"output":"z","input":"x"}])"), "TR02"),
               "aliased_io[0].output: 'z' is not in io_bindings");
  EXPECT_ERROR(error_for(with_bindings(R"(,"aliased_io":[{"output":"y","input":"w"}])"), "TR02"),
               "aliased_io[0].input: 'w' is not in io_bindings");
  EXPECT_ERROR(error_for(with_bindings(R"(,"aliased_io":[{"output":"x","input":"x"}])"), "TR02"),
               "aliased_io[0].output: 'x' is an input, not an output");
  EXPECT_ERROR(error_for(with_bindings(R"(,"aliased_io":[{"output":"y","input":"y"}])"), "TR02"),
               "aliased_io[0].input: 'y' is an output, not an input");
}

TEST(BlobReader, RejectsRepeatedAliases) {
  const std::string bindings =
      R"({"io_bindings":[{"name":"k","is_input":true},{"name":"v","is_input":true},)"
      R"({"name":"ko","is_input":false},{"name":"vo","is_input":false}],"aliased_io":)";
  EXPECT_ERROR(
      error_for(bindings + R"([{"output":"ko","input":"k"},{"output":"ko","input":"k"}]})", "TR02"),
      "aliased_io[1]: aliases output 'ko' again (aliased_io[0] already does)");
  EXPECT_ERROR(
      error_for(bindings + R"([{"output":"ko","input":"k"},{"output":"ko","input":"v"}]})", "TR02"),
      "aliases output 'ko' again");
  EXPECT_ERROR(error_for(bindings + R"([{"output":"ko","input":"k","kind":"user"},)"
                                    R"({"output":"vo","input":"k","kind":"user"}]})",
                         "TR02"),
               "aliased_io[1]: aliases input 'k' again");
  EXPECT_EQ(
      error_for(bindings + R"([{"output":"ko","input":"k"},{"output":"vo","input":"v"}]})", "TR02"),
      "");
}

// TR02 exists so that an old reader, which would bind aliased outputs to their
// own buffers, refuses the blob. Upstream writes TR02 exactly when aliased_io
// is non-empty, and its reader honours aliased_io under either magic: so does
// this one.
TEST(BlobReader, ReadsAliasesUnderTR01) {
  const auto result =
      parse(make_blob(with_bindings(R"(,"aliased_io":[{"output":"y","input":"x"}])"), "TR01"));
  ASSERT_TRUE(result) << result.error();
  ASSERT_EQ(result.value().metadata.aliased_io.size(), 1u);
  EXPECT_EQ(result.value().metadata.aliased_io[0].output, "y");
  EXPECT_EQ(result.value().metadata.aliased_io[0].input, "x");
}

TEST(BlobReader, ReadsTR02WithoutAliasedIoAsNoAliases) {
  const auto result = parse(make_blob(with_bindings(""), "TR02"));
  ASSERT_TRUE(result) << result.error();
  EXPECT_EQ(result.value().header.version, BlobVersion::kTR02);
  EXPECT_TRUE(result.value().metadata.aliased_io.empty());
}

TEST(BlobReader, AcceptsTR02WithAnExplicitlyEmptyAliasedIo) {
  // Not what upstream writes, but it cannot be read two ways: no aliases.
  const auto result = parse(make_blob(with_bindings(R"(,"aliased_io":[])"), "TR02"));
  ASSERT_TRUE(result.ok()) << result.error();
  EXPECT_TRUE(result.value().metadata.aliased_io.empty());
  EXPECT_EQ(result.value().header.version, BlobVersion::kTR02);
}

// ---- Limits ------------------------------------------------------------------

std::string nested_arrays(int depth) {
  return std::string(static_cast<std::size_t>(depth), '[') +
         std::string(static_cast<std::size_t>(depth), ']');
}

TEST(BlobReader, AcceptsNestingUpToTheLimit) {
  // The top-level object is one level.
  const auto result = parse(
      make_blob(R"({"io_bindings":[],"x":)" + nested_arrays(kMaxMetadataJsonDepth - 1) + "}"));
  EXPECT_TRUE(result.ok()) << result.error();
}

TEST(BlobReader, RejectsDeepNesting) {
  EXPECT_ERROR(error_for(R"({"io_bindings":[],"x":)" + nested_arrays(kMaxMetadataJsonDepth) + "}"),
               "nests deeper than 64 levels");
  std::string objects;
  for (int i = 0; i < 1000; ++i) objects += "{\"a\":";
  objects += "1" + std::string(1000, '}');
  EXPECT_ERROR(error_for(R"({"io_bindings":[],"x":)" + objects + "}"),
               "nests deeper than 64 levels");
  // Far deeper than any stack would survive in a recursive reader, and not even closed.
  EXPECT_ERROR(error_for(R"({"io_bindings":[],"x":)" + std::string(1000000, '[')),
               "nests deeper than 64 levels");
}

std::string many_bindings(std::size_t count) {
  std::string json = "{\"io_bindings\":[";
  for (std::size_t i = 0; i < count; ++i) {
    json += (i ? ",{\"name\":\"t" : "{\"name\":\"t") + std::to_string(i) +
            "\",\"is_input\":" + (i < count / 2 ? "true}" : "false}");
  }
  return json + "]}";
}

TEST(BlobReader, AcceptsTheLargestBindingCount) {
  const auto result = parse(make_blob(many_bindings(kMaxBlobBindings)));
  ASSERT_TRUE(result.ok()) << result.error();
  EXPECT_EQ(result.value().metadata.io_bindings.size(), kMaxBlobBindings);
}

TEST(BlobReader, RejectsAbsurdBindingCounts) {
  EXPECT_ERROR(error_for(many_bindings(kMaxBlobBindings + 1)),
               "io_bindings: has 65537 entries, more than the 65536");
  std::string aliases = R"({"io_bindings":[],"aliased_io":[)";
  for (std::size_t i = 0; i <= kMaxBlobBindings; ++i) aliases += (i ? ",{}" : "{}");
  EXPECT_ERROR(error_for(aliases + "]}", "TR02"), "aliased_io: has 65537 entries");
}

TEST(BlobReader, RejectsDocumentsWithTooManyValues) {
  std::string json = R"({"io_bindings":[],"x":[)";
  json.reserve(json.size() + 2 * kMaxMetadataJsonValues + 8);
  for (std::size_t i = 0; i < kMaxMetadataJsonValues; ++i) json += "0,";
  json += "0]}";
  EXPECT_ERROR(error_for(json), "holds more than 2097152 values");
}

TEST(BlobReader, RejectsMetadataLargerThanTheLimit) {
  const std::string huge(kMaxMetadataBytes + 1, ' ');
  EXPECT_ERROR(parse_blob_metadata(huge, BlobVersion::kTR01).error(), "more than the 67108864");
}

TEST(BlobReader, HeaderAloneDoesNotTouchTheMetadata) {
  Bytes blob = make_blob("not json at all");
  const auto header = parse_blob_header(blob.data(), blob.size());
  ASSERT_TRUE(header.ok()) << header.error();
  EXPECT_EQ(header.value().metadata_size, 15u);
}

// ---- Description for tte_blob_describe_json ------------------------------

TEST(BlobReader, DescribesTheBlobInTheDocumentedKeyOrder) {
  const Bytes blob =
      make_blob(upstream_metadata({{"x\xc3\xa9", true}, {"k", true}, {"y", false}, {"ko", false}},
                                  {{"ko", "k", "user"}}, 3),
                "TR02");
  const auto parsed = parse(blob);
  ASSERT_TRUE(parsed.ok()) << parsed.error();
  const std::string json = describe_delegate_blob(parsed.value());
  const std::string prefix = R"({"magic":"TR02","metadata_offset":32,"metadata_size":)";
  EXPECT_EQ(json.substr(0, prefix.size()), prefix);
  EXPECT_NE(json.find(R"("engine_size":12,"io_bindings":[{"name":"x)"
                      "\xc3\xa9"
                      R"(","is_input":true,"dtype":"","shape":[]})"),
            std::string::npos)
      << json;
  EXPECT_NE(
      json.find(
          R"("aliased_io":[{"output":"ko","input":"k","kind":"user"}],"hardware_compatible":false,)"
          R"("device_id":3,"serialized_metadata":"gAR9lC4=","target_platform":"linux_x86_64"})"),
      std::string::npos)
      << json;
}

}  // namespace
}  // namespace tte
