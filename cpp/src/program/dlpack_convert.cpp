#include "program/dlpack_convert.h"

#include <limits>

namespace tte {

void dense_strides(const int64_t* sizes, const uint8_t* dim_order, size_t rank, int64_t* out) {
  bool valid_order = dim_order != nullptr;
  for (size_t i = 0; valid_order && i < rank; ++i) {
    valid_order = dim_order[i] < rank;
  }
  int64_t step = 1;
  for (size_t i = rank; i-- > 0;) {
    const size_t dim = valid_order ? dim_order[i] : i;
    out[dim] = step;
    step *= sizes[dim] > 0 ? sizes[dim] : 1;
  }
}

bool strides_match(const DLTensor& tensor, const int64_t* expected) {
  if (tensor.ndim < 0) {
    return false;
  }
  for (int32_t i = 0; i < tensor.ndim; ++i) {
    if (tensor.shape[i] == 0) {
      return true;
    }
  }
  // Row-major strides of NULL-stride tensors, built from the innermost dim.
  int64_t row_major = 1;
  for (int32_t i = tensor.ndim; i-- > 0;) {
    const int64_t actual = tensor.strides != nullptr ? tensor.strides[i] : row_major;
    if (tensor.shape[i] != 1 && actual != expected[i]) {
      return false;
    }
    row_major *= tensor.shape[i];
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
    case kDLCPU:
      return "cpu";
    case kDLCUDA:
      return "cuda:" + std::to_string(device.device_id);
    case kDLCUDAHost:
      return "cuda_host";
    case kDLCUDAManaged:
      return "cuda_managed:" + std::to_string(device.device_id);
    default:
      return "device type " + std::to_string(static_cast<int>(device.device_type)) + ":" +
             std::to_string(device.device_id);
  }
}

}  // namespace tte
