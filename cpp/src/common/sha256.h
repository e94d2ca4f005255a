// SHA-256 (FIPS 180-4, section 6.2): the identity of an engine plan in the
// shared-engine cache, where two different plans must never be taken for
// one. Written here: the plugin links no crypto library.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace tte {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t size);
  // The 32-byte digest; the object is spent afterwards.
  std::array<uint8_t, 32> finish();

 private:
  void compress(const uint8_t* block);

  uint32_t state_[8];
  uint8_t buffer_[64];
  size_t buffered_ = 0;
  uint64_t length_ = 0;  // bytes hashed so far
};

// The digest of `size` bytes as 64 lowercase hex digits.
std::string sha256_hex(const void* data, size_t size);

}  // namespace tte
