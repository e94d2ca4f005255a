// DLPack <-> ExecuTorch: element types, layouts and devices, the checks the
// Program API runs on every tensor that crosses the C API.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <executorch/runtime/core/exec_aten/exec_aten.h>

#include "torch_tensorrt_executorch/dlpack.h"

namespace tte {

using ScalarType = executorch::aten::ScalarType;

// The ExecuTorch element type of a DLPack dtype; nullopt for vector types
// (lanes != 1) and types ExecuTorch has no equivalent for.
std::optional<ScalarType> scalar_type_from_dlpack(DLDataType dtype);
// The DLPack dtype of an ExecuTorch element type; nullopt for quantized and
// bit-packed types, which DLPack cannot describe.
std::optional<DLDataType> dlpack_from_scalar_type(ScalarType type);

// "float32", "int64", "bfloat16", ...; "ScalarType(N)" for the rest.
std::string scalar_type_name(ScalarType type);
// DLPack dtype as text: "float32", "uint1", "float16x4", "code 9 bits 8".
std::string dlpack_dtype_name(DLDataType dtype);

// "[2, 3, 4]".
std::string format_dims(const int64_t* dims, size_t count);
std::string format_dims(const std::vector<int64_t>& dims);

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
