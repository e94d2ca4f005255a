// DLPack tensors as the Program API takes them: layouts, sizes and devices,
// the checks run on every tensor that crosses the C API. Element types are
// in common/dtypes.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "common/dtypes.h"
#include "torch_tensorrt_executorch/dlpack.h"

namespace tte {

// Element strides of a dense tensor of `rank` dims `sizes` laid out in
// `dim_order` (outermost dimension first; the identity order, or NULL, is
// row-major), written to `out`.
void dense_strides(const int64_t* sizes, const uint8_t* dim_order, size_t rank, int64_t* out);

// True when the tensor's element strides match `expected` (tensor.ndim
// values; NULL strides mean row-major). Dimensions of extent 1 may carry
// any stride and an empty tensor matches any layout: neither changes which
// bytes are read.
bool strides_match(const DLTensor& tensor, const int64_t* expected);

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
