#include "program/dlpack_convert.h"

#include <limits>

namespace tte {

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
