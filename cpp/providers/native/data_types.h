// TensorRT tensor data types as ExecuTorch ScalarType values, the type the
// provider ABI carries.
#pragma once

#include <NvInferRuntime.h>

#include <cstdint>

namespace tte::native {

// The ScalarType value for `type`, or -1 when ExecuTorch has no equivalent
// (sub-byte types such as INT4 and FP4, block-scale exponents).
int32_t scalar_type_of(nvinfer1::DataType type);

// "kFLOAT", "kHALF", ... for messages; "DataType(<n>)" for types newer than
// this file.
const char* data_type_name(nvinfer1::DataType type);

}  // namespace tte::native
