// Writes NumPy .npy files (format 1.0): little-endian, C-order arrays.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "torch_tensorrt_executorch/dlpack.h"

namespace tte::tools {

// The bytes of a .npy file holding `data` (C order, `nbytes` long) with the
// given dtype and shape. False, with a message, for dtypes NumPy has no
// standard name for and for a size that does not match the shape.
bool encode_npy(DLDataType dtype, const std::vector<int64_t>& shape, const void* data,
                size_t nbytes, std::vector<uint8_t>* out, std::string* error);
bool write_npy(const std::string& path, DLDataType dtype, const std::vector<int64_t>& shape,
               const void* data, size_t nbytes, std::string* error);

}  // namespace tte::tools
