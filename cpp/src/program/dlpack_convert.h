// DLPack tensors as the Program API takes them: layouts, sizes and devices,
// the checks run on every tensor that crosses the C API. Element types are
// in common/dtypes.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/dtypes.h"
#include "torch_tensorrt_executorch/dlpack.h"

namespace tte {

// Element strides of a dense tensor with `sizes` laid out in `dim_order`
// (outermost dimension first; the identity order is row-major).
std::vector<int64_t> dense_strides(const std::vector<int64_t>& sizes,
                                   const std::vector<uint8_t>& dim_order);

// True when the tensor's element strides match `expected` (NULL strides mean
// row-major, which is what `expected` must then be). Dimensions of extent 1
// may carry any stride and an empty tensor matches any layout: neither
// changes which bytes are read.
bool strides_match(const DLTensor& tensor,
                   const std::vector<int64_t>& expected);

// Number of elements; nullopt on negative extents or overflow.
std::optional<uint64_t> element_count(const int64_t* shape, int32_t ndim);

// Where a DLPack tensor's bytes live, as the Program API sees it.
enum class MemorySpace {
  kHost,    // kDLCPU, kDLCUDAHost: a host memcpy reads them
  kDevice,  // kDLCUDA, kDLCUDAManaged: read through the CUDA runtime
  kUnsupported,
};
MemorySpace memory_space(DLDeviceType device_type);
// "cpu", "cuda:0", "cuda_host", "cuda_managed:1", "device type 4:0".
std::string device_name(DLDevice device);

}  // namespace tte
