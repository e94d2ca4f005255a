#include "program/dlpack_convert.h"

#include <gtest/gtest.h>

namespace tte {
namespace {

DLTensor make_tensor(std::vector<int64_t>& shape, int64_t* strides) {
  DLTensor tensor{};
  tensor.device = DLDevice{kDLCPU, 0};
  tensor.ndim = static_cast<int32_t>(shape.size());
  tensor.dtype = DLDataType{kDLFloat, 32, 1};
  tensor.shape = shape.data();
  tensor.strides = strides;
  return tensor;
}

TEST(DlpackConvert, EveryMappedTypeRoundTrips) {
  const ScalarType types[] = {
      ScalarType::Bool,        ScalarType::Byte,          ScalarType::Char,
      ScalarType::Short,       ScalarType::Int,           ScalarType::Long,
      ScalarType::Half,        ScalarType::Float,         ScalarType::Double,
      ScalarType::BFloat16,    ScalarType::UInt16,        ScalarType::UInt32,
      ScalarType::UInt64,      ScalarType::ComplexFloat,  ScalarType::ComplexDouble,
      ScalarType::Float8_e5m2, ScalarType::Float8_e4m3fn,
  };
  for (ScalarType type : types) {
    const std::optional<DLDataType> dtype = dlpack_from_scalar_type(type);
    ASSERT_TRUE(dtype.has_value()) << scalar_type_name(type);
    EXPECT_EQ(dtype->lanes, 1);
    EXPECT_EQ(scalar_type_from_dlpack(*dtype), type) << scalar_type_name(type);
  }
}

// One table serves every lookup: by ScalarType, by its value (the C API's),
// by DLPack dtype and by name, with sizes that match the DLPack bits.
TEST(DlpackConvert, EveryLookupOfTheDtypeTableAgrees) {
  const ScalarType types[] = {ScalarType::Bool,          ScalarType::Byte,
                              ScalarType::Long,          ScalarType::Half,
                              ScalarType::Float,         ScalarType::BFloat16,
                              ScalarType::ComplexDouble, ScalarType::Float8_e4m3fn};
  for (ScalarType type : types) {
    const DtypeInfo* entry = find_dtype(type);
    ASSERT_NE(entry, nullptr) << static_cast<int>(type);
    EXPECT_EQ(entry->element_size * 8, entry->dlpack_bits) << entry->name;
    EXPECT_EQ(find_dtype(std::string_view(entry->name)), entry) << entry->name;
    EXPECT_EQ(find_dtype_by_value(static_cast<int32_t>(type)), entry) << entry->name;
    EXPECT_EQ(find_dtype(DLDataType{entry->dlpack_code, entry->dlpack_bits, 1}), entry)
        << entry->name;
  }
  EXPECT_EQ(find_dtype(std::string_view("float")), nullptr);
  EXPECT_EQ(find_dtype_by_value(static_cast<int32_t>(ScalarType::QInt8)), nullptr);
}

TEST(DlpackConvert, CommonTypesMapToTheirDlpackCodes) {
  EXPECT_EQ(scalar_type_from_dlpack({kDLFloat, 32, 1}), ScalarType::Float);
  EXPECT_EQ(scalar_type_from_dlpack({kDLFloat, 16, 1}), ScalarType::Half);
  EXPECT_EQ(scalar_type_from_dlpack({kDLBfloat, 16, 1}), ScalarType::BFloat16);
  EXPECT_EQ(scalar_type_from_dlpack({kDLInt, 64, 1}), ScalarType::Long);
  EXPECT_EQ(scalar_type_from_dlpack({kDLInt, 8, 1}), ScalarType::Char);
  EXPECT_EQ(scalar_type_from_dlpack({kDLUInt, 8, 1}), ScalarType::Byte);
  EXPECT_EQ(scalar_type_from_dlpack({kDLBool, 8, 1}), ScalarType::Bool);
}

TEST(DlpackConvert, RejectsVectorAndUnknownTypes) {
  EXPECT_FALSE(scalar_type_from_dlpack({kDLFloat, 32, 4}).has_value());
  EXPECT_FALSE(scalar_type_from_dlpack({kDLFloat, 8, 1}).has_value());
  EXPECT_FALSE(scalar_type_from_dlpack({kDLUInt, 1, 1}).has_value());
  EXPECT_FALSE(scalar_type_from_dlpack({kDLOpaqueHandle, 64, 1}).has_value());
  EXPECT_FALSE(dlpack_from_scalar_type(ScalarType::QInt8).has_value());
  EXPECT_FALSE(dlpack_from_scalar_type(ScalarType::Bits16).has_value());
}

TEST(DlpackConvert, NamesReadLikeNumpy) {
  EXPECT_EQ(scalar_type_name(ScalarType::Float), "float32");
  EXPECT_EQ(scalar_type_name(ScalarType::Long), "int64");
  EXPECT_EQ(scalar_type_name(ScalarType::QInt8), "ScalarType(12)");
  EXPECT_EQ(dlpack_dtype_name({kDLInt, 64, 1}), "int64");
  EXPECT_EQ(dlpack_dtype_name({kDLFloat, 16, 4}), "float16x4");
  EXPECT_EQ(dlpack_dtype_name({kDLUInt, 1, 1}), "uint1");
  EXPECT_EQ(dlpack_dtype_name({99, 8, 1}), "code 99 bits 8");
}

// dense_strides of `sizes` in `order` (empty: row-major), as a vector.
std::vector<int64_t> strides_of(const std::vector<int64_t>& sizes,
                                const std::vector<uint8_t>& order) {
  std::vector<int64_t> out(sizes.size());
  dense_strides(sizes.data(), order.empty() ? nullptr : order.data(), sizes.size(), out.data());
  return out;
}

TEST(DlpackConvert, DenseStridesFollowTheDimOrder) {
  EXPECT_EQ(strides_of({2, 3, 4}, {}), (std::vector<int64_t>{12, 4, 1}));
  EXPECT_EQ(strides_of({2, 3, 4}, {0, 1, 2}), (std::vector<int64_t>{12, 4, 1}));
  // Channels last for NCHW [2, 3, 4, 5]: dim order N, H, W, C.
  EXPECT_EQ(strides_of({2, 3, 4, 5}, {0, 2, 3, 1}), (std::vector<int64_t>{60, 1, 15, 3}));
  EXPECT_EQ(strides_of({}, {}), std::vector<int64_t>{});
  // An order that names a dim the tensor lacks is ignored (row-major).
  EXPECT_EQ(strides_of({2, 3}, {0, 7}), (std::vector<int64_t>{3, 1}));
}

TEST(DlpackConvert, NullStridesAreRowMajor) {
  std::vector<int64_t> shape{2, 3};
  DLTensor tensor = make_tensor(shape, nullptr);
  EXPECT_TRUE(strides_match(tensor, strides_of({2, 3}, {}).data()));
  const int64_t column_major[] = {1, 2};
  EXPECT_FALSE(strides_match(tensor, column_major));
}

TEST(DlpackConvert, TransposedStridesDoNotMatch) {
  std::vector<int64_t> shape{2, 3};
  int64_t strides[] = {1, 2};
  DLTensor tensor = make_tensor(shape, strides);
  EXPECT_FALSE(strides_match(tensor, strides_of({2, 3}, {}).data()));
}

TEST(DlpackConvert, UnitDimsAndEmptyTensorsMatchAnyStride) {
  std::vector<int64_t> shape{1, 3};
  int64_t strides[] = {77, 1};
  DLTensor tensor = make_tensor(shape, strides);
  EXPECT_TRUE(strides_match(tensor, strides_of({1, 3}, {}).data()));

  std::vector<int64_t> empty{0, 3};
  int64_t odd[] = {5, 9};
  DLTensor zero = make_tensor(empty, odd);
  EXPECT_TRUE(strides_match(zero, strides_of({0, 3}, {}).data()));
}

TEST(DlpackConvert, ElementCountChecksSignAndOverflow) {
  const int64_t shape[] = {2, 3, 4};
  EXPECT_EQ(element_count(shape, 3), 24u);
  EXPECT_EQ(element_count(shape, 0), 1u);
  const int64_t negative[] = {2, -1};
  EXPECT_FALSE(element_count(negative, 2).has_value());
  const int64_t huge[] = {int64_t{1} << 40, int64_t{1} << 40};
  EXPECT_FALSE(element_count(huge, 2).has_value());
  const int64_t with_zero[] = {int64_t{1} << 62, 0, int64_t{1} << 62};
  EXPECT_EQ(element_count(with_zero, 3), 0u);
}

TEST(DlpackConvert, MemorySpaces) {
  EXPECT_EQ(memory_space(kDLCPU), MemorySpace::kHost);
  EXPECT_EQ(memory_space(kDLCUDAHost), MemorySpace::kHost);
  EXPECT_EQ(memory_space(kDLCUDA), MemorySpace::kDevice);
  EXPECT_EQ(memory_space(kDLCUDAManaged), MemorySpace::kDevice);
  EXPECT_EQ(memory_space(kDLROCM), MemorySpace::kUnsupported);
  EXPECT_EQ(device_name({kDLCUDA, 1}), "cuda:1");
  EXPECT_EQ(device_name({kDLCPU, 0}), "cpu");
  EXPECT_EQ(device_name({kDLOpenCL, 2}), "device type 4:2");
}

}  // namespace
}  // namespace tte
