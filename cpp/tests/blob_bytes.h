// A TensorRTBackend delegate blob laid out as Torch-TensorRT's exporter
// writes it (blob/blob_reader.h reads it): the header `<4sIIIQ8s` (magic,
// metadata offset 32, metadata size, engine offset, engine size, reserved
// 01 00 .. 00), the metadata JSON, zeros to a 16-byte boundary, the engine.
// The one writer of the tests that build blobs byte by byte.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

namespace tte_test {

inline std::vector<uint8_t> blob_bytes(std::string_view magic, std::string_view metadata,
                                       std::string_view engine) {
  const size_t engine_offset = (32 + metadata.size() + 15) / 16 * 16;
  std::vector<uint8_t> blob(engine_offset + engine.size(), 0);
  auto put = [&](size_t offset, uint64_t value, int bytes) {
    for (int i = 0; i < bytes; ++i) blob[offset + i] = static_cast<uint8_t>(value >> (8 * i));
  };
  std::memcpy(blob.data(), magic.data(), 4);
  put(4, 32, 4);
  put(8, metadata.size(), 4);
  put(12, engine_offset, 4);
  put(16, engine.size(), 8);
  blob[24] = 1;
  std::memcpy(blob.data() + 32, metadata.data(), metadata.size());
  std::memcpy(blob.data() + engine_offset, engine.data(), engine.size());
  return blob;
}

}  // namespace tte_test
