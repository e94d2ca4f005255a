#include "program/dlpack_convert.h"

#include <limits>

namespace tte {
namespace {

struct TypePair {
  ScalarType scalar_type;
  uint8_t code;
  uint8_t bits;
  const char* name;
};

// One table for both directions, so the mapping cannot drift.
constexpr TypePair kTypes[] = {
    {ScalarType::Bool, kDLBool, 8, "bool"},
    {ScalarType::Byte, kDLUInt, 8, "uint8"},
    {ScalarType::UInt16, kDLUInt, 16, "uint16"},
    {ScalarType::UInt32, kDLUInt, 32, "uint32"},
    {ScalarType::UInt64, kDLUInt, 64, "uint64"},
    {ScalarType::Char, kDLInt, 8, "int8"},
    {ScalarType::Short, kDLInt, 16, "int16"},
    {ScalarType::Int, kDLInt, 32, "int32"},
    {ScalarType::Long, kDLInt, 64, "int64"},
    {ScalarType::Half, kDLFloat, 16, "float16"},
    {ScalarType::Float, kDLFloat, 32, "float32"},
    {ScalarType::Double, kDLFloat, 64, "float64"},
    {ScalarType::BFloat16, kDLBfloat, 16, "bfloat16"},
    {ScalarType::ComplexHalf, kDLComplex, 32, "complex32"},
    {ScalarType::ComplexFloat, kDLComplex, 64, "complex64"},
    {ScalarType::ComplexDouble, kDLComplex, 128, "complex128"},
    {ScalarType::Float8_e5m2, kDLFloat8_e5m2, 8, "float8_e5m2"},
    {ScalarType::Float8_e4m3fn, kDLFloat8_e4m3fn, 8, "float8_e4m3fn"},
    {ScalarType::Float8_e5m2fnuz, kDLFloat8_e5m2fnuz, 8, "float8_e5m2fnuz"},
    {ScalarType::Float8_e4m3fnuz, kDLFloat8_e4m3fnuz, 8, "float8_e4m3fnuz"},
};

const char* dlpack_code_name(uint8_t code) {
  switch (code) {
    case kDLInt: return "int";
    case kDLUInt: return "uint";
    case kDLFloat: return "float";
    case kDLBfloat: return "bfloat";
    case kDLComplex: return "complex";
    case kDLBool: return "bool";
    default: return nullptr;
  }
}

}  // namespace

std::optional<ScalarType> scalar_type_from_dlpack(DLDataType dtype) {
  if (dtype.lanes != 1) {
    return std::nullopt;
  }
  for (const TypePair& t : kTypes) {
    if (t.code == dtype.code && t.bits == dtype.bits) {
      return t.scalar_type;
    }
  }
  return std::nullopt;
}

std::optional<DLDataType> dlpack_from_scalar_type(ScalarType type) {
  for (const TypePair& t : kTypes) {
    if (t.scalar_type == type) {
      return DLDataType{t.code, t.bits, 1};
    }
  }
  return std::nullopt;
}

std::string scalar_type_name(ScalarType type) {
  for (const TypePair& t : kTypes) {
    if (t.scalar_type == type) {
      return t.name;
    }
  }
  return "ScalarType(" + std::to_string(static_cast<int>(type)) + ")";
}

std::string dlpack_dtype_name(DLDataType dtype) {
  std::string name;
  if (dtype.lanes == 1) {
    for (const TypePair& t : kTypes) {
      if (t.code == dtype.code && t.bits == dtype.bits) {
        return t.name;
      }
    }
  }
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

std::string format_dims(const int64_t* dims, size_t count) {
  std::string text = "[";
  for (size_t i = 0; i < count; ++i) {
    if (i > 0) {
      text += ", ";
    }
    text += std::to_string(dims[i]);
  }
  return text + "]";
}

std::string format_dims(const std::vector<int64_t>& dims) {
  return format_dims(dims.data(), dims.size());
}

std::vector<int64_t> dense_strides(const std::vector<int64_t>& sizes,
                                   const std::vector<uint8_t>& dim_order) {
  std::vector<int64_t> strides(sizes.size(), 1);
  const bool use_order = dim_order.size() == sizes.size();
  int64_t step = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    const size_t dim = use_order ? dim_order[i] : i;
    if (dim >= sizes.size()) {
      return dense_strides(sizes, {});
    }
    strides[dim] = step;
    step *= sizes[dim] > 0 ? sizes[dim] : 1;
  }
  return strides;
}

bool strides_match(const DLTensor& tensor,
                   const std::vector<int64_t>& expected) {
  if (tensor.ndim < 0 || static_cast<size_t>(tensor.ndim) != expected.size()) {
    return false;
  }
  for (int32_t i = 0; i < tensor.ndim; ++i) {
    if (tensor.shape[i] == 0) {
      return true;
    }
  }
  const std::vector<int64_t> actual =
      tensor.strides != nullptr
          ? std::vector<int64_t>(tensor.strides, tensor.strides + tensor.ndim)
          : dense_strides(std::vector<int64_t>(tensor.shape, tensor.shape + tensor.ndim), {});
  for (int32_t i = 0; i < tensor.ndim; ++i) {
    if (tensor.shape[i] != 1 && actual[i] != expected[i]) {
      return false;
    }
  }
  return true;
}

std::optional<uint64_t> element_count(const int64_t* shape, int32_t ndim) {
  uint64_t count = 1;
  for (int32_t i = 0; i < ndim; ++i) {
    if (shape[i] < 0) {
      return std::nullopt;
    }
    const uint64_t extent = static_cast<uint64_t>(shape[i]);
    if (extent != 0 && count > std::numeric_limits<uint64_t>::max() / extent) {
      return std::nullopt;
    }
    count *= extent;
  }
  return count;
}

MemorySpace memory_space(DLDeviceType device_type) {
  switch (device_type) {
    case kDLCPU:
    case kDLCUDAHost:
      return MemorySpace::kHost;
    case kDLCUDA:
    case kDLCUDAManaged:
      return MemorySpace::kDevice;
    default:
      return MemorySpace::kUnsupported;
  }
}

std::string device_name(DLDevice device) {
  switch (device.device_type) {
    case kDLCPU: return "cpu";
    case kDLCUDA: return "cuda:" + std::to_string(device.device_id);
    case kDLCUDAHost: return "cuda_host";
    case kDLCUDAManaged: return "cuda_managed:" + std::to_string(device.device_id);
    default:
      return "device type " + std::to_string(static_cast<int>(device.device_type)) + ":" +
             std::to_string(device.device_id);
  }
}

}  // namespace tte
