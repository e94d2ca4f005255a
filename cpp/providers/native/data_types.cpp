#include "native/data_types.h"

#include <cstdio>

#include <executorch/runtime/core/portable_type/scalar_type.h>

namespace tte::native {
namespace {

using executorch::runtime::etensor::ScalarType;

constexpr int32_t value(ScalarType type) { return static_cast<int32_t>(type); }

}  // namespace

int32_t scalar_type_of(nvinfer1::DataType type) {
  switch (type) {
    case nvinfer1::DataType::kFLOAT:
      return value(ScalarType::Float);
    case nvinfer1::DataType::kHALF:
      return value(ScalarType::Half);
    case nvinfer1::DataType::kBF16:
      return value(ScalarType::BFloat16);
    case nvinfer1::DataType::kINT8:
      return value(ScalarType::Char);
    case nvinfer1::DataType::kUINT8:
      return value(ScalarType::Byte);
    case nvinfer1::DataType::kINT32:
      return value(ScalarType::Int);
    case nvinfer1::DataType::kINT64:
      return value(ScalarType::Long);
    case nvinfer1::DataType::kBOOL:
      return value(ScalarType::Bool);
    // TensorRT's FP8 is E4M3 with NaN and no infinity.
    case nvinfer1::DataType::kFP8:
      return value(ScalarType::Float8_e4m3fn);
    default:
      return -1;
  }
}

const char* data_type_name(nvinfer1::DataType type) {
  // Numbers rather than enumerators for the types older TensorRT 10 headers
  // lack; TensorRT never renumbers them.
  switch (static_cast<int32_t>(type)) {
    case 0:
      return "kFLOAT";
    case 1:
      return "kHALF";
    case 2:
      return "kINT8";
    case 3:
      return "kINT32";
    case 4:
      return "kBOOL";
    case 5:
      return "kUINT8";
    case 6:
      return "kFP8";
    case 7:
      return "kBF16";
    case 8:
      return "kINT64";
    case 9:
      return "kINT4";
    case 10:
      return "kFP4";
    case 11:
      return "kE8M0";
    default: {
      thread_local char name[32];
      std::snprintf(name, sizeof(name), "DataType(%d)", static_cast<int>(type));
      return name;
    }
  }
}

}  // namespace tte::native
