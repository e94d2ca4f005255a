#include "tools/tte_run/npy_writer.h"

#include <cerrno>
#include <cstring>
#include <fstream>

#include "tools/tte_run/npy_reader.h"

namespace tte::tools {

bool encode_npy(DLDataType dtype, const std::vector<int64_t>& shape, const void* data,
                size_t nbytes, std::vector<uint8_t>* out, std::string* error) {
  const std::optional<std::string> descr = npy_dtype_to_descr(dtype);
  if (!descr) {
    *error = "NumPy has no standard type for dtype (code " + std::to_string(dtype.code) +
             ", bits " + std::to_string(dtype.bits) + ", lanes " + std::to_string(dtype.lanes) +
             ")";
    return false;
  }
  uint64_t count = 1;
  std::string dims;
  for (int64_t dim : shape) {
    if (dim < 0) {
      *error = "negative dimension in shape";
      return false;
    }
    count *= static_cast<uint64_t>(dim);
    dims += std::to_string(dim) + (shape.size() == 1 ? "," : ", ");
  }
  if (shape.size() > 1) {
    dims.resize(dims.size() - 2);
  }
  if (count * dtype_size(dtype) != nbytes) {
    *error = "shape and dtype need " + std::to_string(count * dtype_size(dtype)) + " bytes, got " +
             std::to_string(nbytes);
    return false;
  }
  std::string header =
      "{'descr': '" + *descr + "', 'fortran_order': False, 'shape': (" + dims + "), }";
  // Pad with spaces so the data starts 64-byte aligned; end with a newline.
  const size_t preamble = 10;
  const size_t total = (preamble + header.size() + 1 + 63) / 64 * 64;
  header.append(total - preamble - header.size() - 1, ' ');
  header += '\n';

  out->clear();
  out->reserve(total + nbytes);
  const char magic[] = "\x93NUMPY";
  out->insert(out->end(), magic, magic + 6);
  out->push_back(1);
  out->push_back(0);
  out->push_back(static_cast<uint8_t>(header.size() & 0xff));
  out->push_back(static_cast<uint8_t>(header.size() >> 8));
  out->insert(out->end(), header.begin(), header.end());
  const auto* bytes = static_cast<const uint8_t*>(data);
  if (nbytes > 0) {
    out->insert(out->end(), bytes, bytes + nbytes);
  }
  return true;
}

bool write_npy(const std::string& path, DLDataType dtype, const std::vector<int64_t>& shape,
               const void* data, size_t nbytes, std::string* error) {
  std::vector<uint8_t> bytes;
  if (!encode_npy(dtype, shape, data, nbytes, &bytes, error)) {
    *error = "cannot write '" + path + "': " + *error;
    return false;
  }
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) {
    *error = "cannot write '" + path + "': " + std::strerror(errno);
    return false;
  }
  file.write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
  file.close();
  if (!file) {
    *error = "writing '" + path + "' failed";
    return false;
  }
  return true;
}

}  // namespace tte::tools
