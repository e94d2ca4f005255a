#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tools/tte_run/npy_reader.h"
#include "tools/tte_run/npy_writer.h"

namespace tte::tools {
namespace {

// A .npy file as numpy writes it: magic, version, header, data.
std::vector<uint8_t> npy_bytes(const std::string& header, const std::vector<uint8_t>& data,
                               uint8_t major = 1) {
  std::vector<uint8_t> bytes = {0x93, 'N', 'U', 'M', 'P', 'Y', major, 0};
  std::string padded = header;
  const size_t preamble = major == 1 ? 10 : 12;
  while ((preamble + padded.size() + 1) % 64 != 0) {
    padded += ' ';
  }
  padded += '\n';
  const uint32_t size = static_cast<uint32_t>(padded.size());
  bytes.push_back(size & 0xff);
  bytes.push_back((size >> 8) & 0xff);
  if (major != 1) {
    bytes.push_back((size >> 16) & 0xff);
    bytes.push_back((size >> 24) & 0xff);
  }
  bytes.insert(bytes.end(), padded.begin(), padded.end());
  bytes.insert(bytes.end(), data.begin(), data.end());
  return bytes;
}

std::vector<uint8_t> floats(std::initializer_list<float> values) {
  std::vector<uint8_t> data(values.size() * 4);
  std::memcpy(data.data(), values.begin(), data.size());
  return data;
}

TEST(Npy, ParsesFloat32Matrix) {
  const auto bytes = npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
                               floats({1, 2, 3, 4, 5, 6}));
  NpyArray array;
  std::string error;
  ASSERT_TRUE(parse_npy(bytes, &array, &error)) << error;
  EXPECT_EQ(array.dtype.code, kDLFloat);
  EXPECT_EQ(array.dtype.bits, 32);
  EXPECT_EQ(array.shape, (std::vector<int64_t>{2, 3}));
  ASSERT_EQ(array.data.size(), 24u);
  float last;
  std::memcpy(&last, array.data.data() + 20, 4);
  EXPECT_EQ(last, 6.0f);
}

TEST(Npy, ParsesScalarsVectorsAndVersion2) {
  NpyArray array;
  std::string error;
  ASSERT_TRUE(parse_npy(npy_bytes("{'descr': '<i8', 'fortran_order': False, 'shape': (), }",
                                  std::vector<uint8_t>(8, 0)),
                        &array, &error))
      << error;
  EXPECT_TRUE(array.shape.empty());
  ASSERT_TRUE(parse_npy(
      npy_bytes("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", {1, 0, 1}, 2), &array,
      &error))
      << error;
  EXPECT_EQ(array.dtype.code, kDLBool);
  EXPECT_EQ(array.shape, (std::vector<int64_t>{3}));
  ASSERT_TRUE(parse_npy(
      npy_bytes("{'descr': '|u1', 'fortran_order': False, 'shape': (0, 4), }", {}), &array, &error))
      << error;
  EXPECT_EQ(array.shape, (std::vector<int64_t>{0, 4}));
  EXPECT_TRUE(array.data.empty());
}

TEST(Npy, RejectsBigEndianWithAFix) {
  NpyArray array;
  std::string error;
  EXPECT_FALSE(
      parse_npy(npy_bytes("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", floats({1})),
                &array, &error));
  EXPECT_NE(error.find("big-endian"), std::string::npos) << error;
  EXPECT_NE(error.find("newbyteorder"), std::string::npos) << error;
}

TEST(Npy, RejectsFortranOrder) {
  NpyArray array;
  std::string error;
  EXPECT_FALSE(parse_npy(
      npy_bytes("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", floats({1, 2, 3, 4})),
      &array, &error));
  EXPECT_NE(error.find("Fortran-order"), std::string::npos) << error;
}

TEST(Npy, RejectsUnsupportedTypes) {
  NpyArray array;
  std::string error;
  for (const char* descr : {"|O", "<U8", "|V2", "<M8[ns]"}) {
    const std::string header =
        std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (1,), }";
    EXPECT_FALSE(parse_npy(npy_bytes(header, std::vector<uint8_t>(8, 0)), &array, &error)) << descr;
    EXPECT_NE(error.find("not supported"), std::string::npos) << error;
  }
  EXPECT_FALSE(parse_npy(npy_bytes("{'descr': [('a', '<f4')], 'fortran_order': False, "
                                   "'shape': (1,), }",
                                   floats({1})),
                         &array, &error));
  EXPECT_NE(error.find("structured"), std::string::npos) << error;
}

TEST(Npy, RejectsWrongDataSizeAndDamage) {
  NpyArray array;
  std::string error;
  EXPECT_FALSE(parse_npy(
      npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", floats({1, 2})),
      &array, &error));
  EXPECT_NE(error.find("need 12"), std::string::npos) << error;
  EXPECT_FALSE(parse_npy({'n', 'o', 'p', 'e'}, &array, &error));
  EXPECT_NE(error.find("not a .npy file"), std::string::npos) << error;
  const auto good =
      npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", floats({1, 2}));
  for (size_t size = 0; size < good.size(); ++size) {
    std::vector<uint8_t> truncated(good.begin(), good.begin() + size);
    EXPECT_FALSE(parse_npy(truncated, &array, &error)) << "truncated to " << size;
  }
}

TEST(Npy, WriterOutputParsesBackIdentically) {
  const std::vector<int64_t> shape{2, 2};
  const std::vector<uint8_t> data = floats({1.5f, -2, 3, 4});
  std::vector<uint8_t> bytes;
  std::string error;
  ASSERT_TRUE(encode_npy({kDLFloat, 32, 1}, shape, data.data(), data.size(), &bytes, &error))
      << error;
  // NumPy's own layout: data 64-byte aligned, header ends in a newline.
  const size_t header_size = bytes[8] | (bytes[9] << 8);
  EXPECT_EQ((10 + header_size) % 64, 0u);
  EXPECT_EQ(bytes[10 + header_size - 1], '\n');
  NpyArray array;
  ASSERT_TRUE(parse_npy(bytes, &array, &error)) << error;
  EXPECT_EQ(array.shape, shape);
  EXPECT_EQ(array.data, data);
}

TEST(Npy, WriterSpellsShapesLikePython) {
  std::vector<uint8_t> bytes;
  std::string error;
  const uint8_t one = 1;
  ASSERT_TRUE(encode_npy({kDLUInt, 8, 1}, {1}, &one, 1, &bytes, &error)) << error;
  const std::string text(bytes.begin(), bytes.end());
  EXPECT_NE(text.find("'descr': '|u1'"), std::string::npos) << text;
  EXPECT_NE(text.find("'shape': (1,)"), std::string::npos) << text;
  const int64_t value = 5;
  ASSERT_TRUE(encode_npy({kDLInt, 64, 1}, {}, &value, 8, &bytes, &error)) << error;
  EXPECT_NE(std::string(bytes.begin(), bytes.end()).find("'shape': ()"), std::string::npos);
}

TEST(Npy, WriterRefusesTypesNumpyCannotName) {
  std::vector<uint8_t> bytes;
  std::string error;
  const uint16_t value = 0x3f80;
  EXPECT_FALSE(encode_npy({kDLBfloat, 16, 1}, {1}, &value, 2, &bytes, &error));
  EXPECT_NE(error.find("NumPy has no standard type"), std::string::npos) << error;
  EXPECT_FALSE(encode_npy({kDLFloat, 32, 1}, {2}, &value, 2, &bytes, &error));
  EXPECT_NE(error.find("need 8 bytes"), std::string::npos) << error;
}

TEST(Npy, FileRoundTripAndMissingFile) {
  const std::filesystem::path path = std::filesystem::temp_directory_path() /
                                     ("tte_test_npy_" + std::to_string(::getpid()) + ".npy");
  const std::vector<int32_t> values{7, 8, 9};
  std::string error;
  ASSERT_TRUE(write_npy(path.string(), {kDLInt, 32, 1}, {3}, values.data(), 12, &error)) << error;
  NpyArray array;
  ASSERT_TRUE(read_npy(path.string(), &array, &error)) << error;
  EXPECT_EQ(array.dtype.code, kDLInt);
  EXPECT_EQ(array.dtype.bits, 32);
  std::filesystem::remove(path);
  EXPECT_FALSE(read_npy(path.string(), &array, &error));
  EXPECT_NE(error.find("cannot open"), std::string::npos) << error;
}

}  // namespace
}  // namespace tte::tools
