// Reads NumPy .npy files (format 1.0, 2.0 and 3.0): little-endian, C-order
// arrays of the element types the Program API takes. Anything else is
// refused with a message that says what to convert it to.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "torch_tensorrt_executorch/dlpack.h"

namespace tte::tools {

struct NpyArray {
  DLDataType dtype{};
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;  // C order, little-endian
};

// The DLPack dtype of a NumPy type string ("<f4", "|b1", ...); nullopt for
// big-endian, structured, object and other types.
std::optional<DLDataType> npy_descr_to_dtype(const std::string& descr);
// The NumPy type string of a DLPack dtype; nullopt for types NumPy has no
// standard name for (bfloat16, float8).
std::optional<std::string> npy_dtype_to_descr(DLDataType dtype);

// Bytes per element of a DLPack dtype (bits rounded up to bytes, times lanes).
size_t dtype_size(DLDataType dtype);

// Parses the bytes of a .npy file.
bool parse_npy(const std::vector<uint8_t>& bytes, NpyArray* out, std::string* error);
// Reads and parses a .npy file; errors name the file.
bool read_npy(const std::string& path, NpyArray* out, std::string* error);

}  // namespace tte::tools
