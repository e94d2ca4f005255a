// A flatbuffer table read from raw bytes, every offset checked against the
// buffer: how the plugin reads the fields of a .pte and a .ptd that ExecuTorch
// dereferences unchecked. The executorch wheel ships program.fbs and flatc but
// neither the generated C++ header nor the flatbuffers C++ headers it needs,
// so generated accessors and the flatbuffers Verifier would be a new build
// dependency pinned to flatc's version; this reads only the fields asked for.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

namespace tte {

// Fields of a flatbuffer table, read from raw bytes with every offset checked
// against the buffer (program.fbs: ExecutionPlan.name and .delegates,
// BackendDelegate.id and .processed, CompileSpec.key and .value).
class FlatTable {
 public:
  FlatTable(const uint8_t* data, size_t size, size_t pos) : data_(data), size_(size), pos_(pos) {}
  static std::optional<FlatTable> root(const uint8_t* data, size_t size) {
    FlatTable at(data, size, 0);
    return at.follow(0);
  }
  // The table or vector a reference field points to; nullopt when absent.
  std::optional<FlatTable> field(int index) const {
    const size_t at = field_position(index);
    return at == 0 ? std::nullopt : follow(at);
  }
  // A scalar field, or `fallback` when absent.
  template <typename T>
  T scalar(int index, T fallback) const {
    const size_t at = field_position(index);
    T value = fallback;
    return at != 0 && read(at, &value) ? value : fallback;
  }
  // Element `i` of a vector of tables.
  std::optional<FlatTable> element(uint32_t i) const {
    return follow(pos_ + 4 + static_cast<size_t>(i) * 4);
  }
  uint32_t length() const {
    uint32_t n = 0;
    return read(pos_, &n) ? n : 0;
  }
  // What ExecuTorch's generated accessors read without the flatbuffers
  // Verifier (a .ptd is never verified): the table's vtable and inline part,
  // a field's bytes, a vector's elements (a string's and its NUL).
  bool table_in_bounds() const {
    int32_t back = 0;
    uint16_t vtable_size = 0;
    uint16_t object_size = 0;
    if (!read(pos_, &back)) return false;
    const int64_t vtable = static_cast<int64_t>(pos_) - back;
    return vtable >= 0 && read(static_cast<size_t>(vtable), &vtable_size) &&
           read(static_cast<size_t>(vtable) + 2, &object_size) && vtable_size >= 4 &&
           vtable_size % 2 == 0 && static_cast<size_t>(vtable) + vtable_size <= size_ &&
           object_size >= 4 && pos_ + object_size <= size_;
  }
  bool field_in_bounds(int index, size_t bytes) const {
    const size_t at = field_position(index);
    return at == 0 || (at <= size_ && size_ - at >= bytes);
  }
  bool vector_in_bounds(size_t element_size, size_t trailing = 0) const {
    const uint32_t n = length();
    if (pos_ + 4 > size_) return false;
    const size_t room = size_ - pos_ - 4;
    return room >= trailing && (room - trailing) / element_size >= n;
  }
  // Element `i` of a vector of int32, or nullopt past the buffer.
  std::optional<int32_t> int_at(uint32_t i) const {
    int32_t value = 0;
    if (i >= length() || !read(pos_ + 4 + static_cast<size_t>(i) * 4, &value)) return std::nullopt;
    return value;
  }
  // Element `i` of a vector of int64, or nullopt past the buffer.
  std::optional<int64_t> int64_at(uint32_t i) const {
    int64_t value = 0;
    if (i >= length() || !read(pos_ + 4 + static_cast<size_t>(i) * 8, &value)) return std::nullopt;
    return value;
  }
  // A string field's bytes (check vector_in_bounds(1, 1) first).
  std::string text() const {
    return std::string(reinterpret_cast<const char*>(data_ + pos_ + 4), length());
  }

 private:
  // Where field `index` is stored; 0 when absent.
  size_t field_position(int index) const {
    int32_t back = 0;
    uint16_t vtable_size = 0;
    uint16_t offset = 0;
    if (!read(pos_, &back)) return 0;
    const int64_t vtable = static_cast<int64_t>(pos_) - back;
    const size_t slot = 4 + 2 * static_cast<size_t>(index);
    if (vtable < 0 || !read(static_cast<size_t>(vtable), &vtable_size) || slot + 2 > vtable_size ||
        !read(static_cast<size_t>(vtable) + slot, &offset)) {
      return 0;
    }
    return offset == 0 ? 0 : pos_ + offset;
  }
  template <typename T>
  bool read(size_t at, T* out) const {
    if (at > size_ || size_ - at < sizeof(T)) return false;
    std::memcpy(out, data_ + at, sizeof(T));
    return true;
  }
  std::optional<FlatTable> follow(size_t at) const {
    uint32_t offset = 0;
    if (!read(at, &offset) || at + offset >= size_) return std::nullopt;
    return FlatTable(data_, size_, at + offset);
  }
  const uint8_t* data_;
  size_t size_;
  size_t pos_;
};

// A little-endian u64 at `at` (8 readable bytes).
inline uint64_t read_le64(const uint8_t* at) {
  uint64_t value = 0;
  for (size_t i = 0; i < 8; ++i) {
    value |= static_cast<uint64_t>(at[i]) << (8 * i);
  }
  return value;
}

}  // namespace tte
