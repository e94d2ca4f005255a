// The library's one table of element types: ExecuTorch ScalarType, DLPack
// code and bits, size in bytes, and the name users see (torch's: "float32",
// "int64", "bfloat16"). The plugin, tte-run and the test providers look
// types up here instead of keeping tables of their own.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <executorch/runtime/core/portable_type/scalar_type.h>

#include "torch_tensorrt_executorch/dlpack.h"

namespace tte {

using ScalarType = executorch::runtime::etensor::ScalarType;

struct DtypeInfo {
  ScalarType scalar_type;
  uint8_t dlpack_code;
  uint8_t dlpack_bits;
  uint8_t element_size;  // bytes
  const char* name;
};

// The entry of an ExecuTorch element type, a DLPack dtype (lanes 1 only) or
// a name; nullptr for types the table does not hold (quantized and
// bit-packed types, vector dtypes).
const DtypeInfo* find_dtype(ScalarType type);
const DtypeInfo* find_dtype(DLDataType dtype);
const DtypeInfo* find_dtype(std::string_view name);
// By the ScalarType's numeric value, as C callers (c_api.h) carry it.
const DtypeInfo* find_dtype_by_value(int32_t scalar_type);

std::optional<ScalarType> scalar_type_from_dlpack(DLDataType dtype);
std::optional<DLDataType> dlpack_from_scalar_type(ScalarType type);

// "float32", "int64", ...; "ScalarType(N)" for types outside the table.
std::string scalar_type_name(ScalarType type);
// DLPack dtype as text: "float32", "uint1", "float16x4", "code 9 bits 8".
std::string dlpack_dtype_name(DLDataType dtype);

}  // namespace tte
