#include "common/dtypes.h"

namespace tte {
namespace {

// One table for every direction, so the mappings cannot drift.
constexpr DtypeInfo kDtypes[] = {
    {ScalarType::Bool, kDLBool, 8, 1, "bool"},
    {ScalarType::Byte, kDLUInt, 8, 1, "uint8"},
    {ScalarType::UInt16, kDLUInt, 16, 2, "uint16"},
    {ScalarType::UInt32, kDLUInt, 32, 4, "uint32"},
    {ScalarType::UInt64, kDLUInt, 64, 8, "uint64"},
    {ScalarType::Char, kDLInt, 8, 1, "int8"},
    {ScalarType::Short, kDLInt, 16, 2, "int16"},
    {ScalarType::Int, kDLInt, 32, 4, "int32"},
    {ScalarType::Long, kDLInt, 64, 8, "int64"},
    {ScalarType::Half, kDLFloat, 16, 2, "float16"},
    {ScalarType::Float, kDLFloat, 32, 4, "float32"},
    {ScalarType::Double, kDLFloat, 64, 8, "float64"},
    {ScalarType::BFloat16, kDLBfloat, 16, 2, "bfloat16"},
    {ScalarType::ComplexHalf, kDLComplex, 32, 4, "complex32"},
    {ScalarType::ComplexFloat, kDLComplex, 64, 8, "complex64"},
    {ScalarType::ComplexDouble, kDLComplex, 128, 16, "complex128"},
    {ScalarType::Float8_e5m2, kDLFloat8_e5m2, 8, 1, "float8_e5m2"},
    {ScalarType::Float8_e4m3fn, kDLFloat8_e4m3fn, 8, 1, "float8_e4m3fn"},
    {ScalarType::Float8_e5m2fnuz, kDLFloat8_e5m2fnuz, 8, 1, "float8_e5m2fnuz"},
    {ScalarType::Float8_e4m3fnuz, kDLFloat8_e4m3fnuz, 8, 1, "float8_e4m3fnuz"},
};

const char* dlpack_code_name(uint8_t code) {
  switch (code) {
    case kDLInt:
      return "int";
    case kDLUInt:
      return "uint";
    case kDLFloat:
      return "float";
    case kDLBfloat:
      return "bfloat";
    case kDLComplex:
      return "complex";
    case kDLBool:
      return "bool";
    default:
      return nullptr;
  }
}

}  // namespace

const DtypeInfo* find_dtype(ScalarType type) {
  for (const DtypeInfo& entry : kDtypes) {
    if (entry.scalar_type == type) {
      return &entry;
    }
  }
  return nullptr;
}

const DtypeInfo* find_dtype(DLDataType dtype) {
  if (dtype.lanes != 1) {
    return nullptr;
  }
  for (const DtypeInfo& entry : kDtypes) {
    if (entry.dlpack_code == dtype.code && entry.dlpack_bits == dtype.bits) {
      return &entry;
    }
  }
  return nullptr;
}

const DtypeInfo* find_dtype(std::string_view name) {
  for (const DtypeInfo& entry : kDtypes) {
    if (name == entry.name) {
      return &entry;
    }
  }
  return nullptr;
}

const DtypeInfo* find_dtype_by_value(int32_t scalar_type) {
  for (const DtypeInfo& entry : kDtypes) {
    if (static_cast<int32_t>(entry.scalar_type) == scalar_type) {
      return &entry;
    }
  }
  return nullptr;
}

std::optional<ScalarType> scalar_type_from_dlpack(DLDataType dtype) {
  const DtypeInfo* entry = find_dtype(dtype);
  return entry != nullptr ? std::optional<ScalarType>(entry->scalar_type) : std::nullopt;
}

std::optional<DLDataType> dlpack_from_scalar_type(ScalarType type) {
  const DtypeInfo* entry = find_dtype(type);
  if (entry == nullptr) {
    return std::nullopt;
  }
  return DLDataType{entry->dlpack_code, entry->dlpack_bits, 1};
}

std::string scalar_type_name(ScalarType type) {
  const DtypeInfo* entry = find_dtype(type);
  return entry != nullptr ? entry->name
                          : "ScalarType(" + std::to_string(static_cast<int>(type)) + ")";
}

std::string dlpack_dtype_name(DLDataType dtype) {
  if (const DtypeInfo* entry = find_dtype(dtype)) {
    return entry->name;
  }
  std::string name;
  if (const char* code = dlpack_code_name(dtype.code)) {
    name = std::string(code) + std::to_string(dtype.bits);
  } else {
    name = "code " + std::to_string(dtype.code) + " bits " + std::to_string(dtype.bits);
  }
  if (dtype.lanes != 1) {
    name += "x" + std::to_string(dtype.lanes);
  }
  return name;
}

}  // namespace tte
