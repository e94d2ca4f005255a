// Small pieces of the one-line messages the library writes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tte {

// "[2, 3, 4]".
template <typename T>
std::string format_dims(const T* dims, size_t count) {
  std::string text = "[";
  for (size_t i = 0; i < count; ++i) {
    text += (i == 0 ? "" : ", ") + std::to_string(dims[i]);
  }
  return text + "]";
}
template <typename Container>
std::string format_dims(const Container& dims) {
  return format_dims(dims.data(), dims.size());
}

// "'a', 'b', 'c'"; "" for none.
inline std::string join_quoted(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& name : names) {
    text += (text.empty() ? "'" : ", '") + name + "'";
  }
  return text;
}

// The length of the well-formed UTF-8 sequence at bytes[i] (1 to 4), or 0
// for a malformed one (overlong, surrogate, past U+10FFFF, cut short).
inline size_t utf8_sequence_length(std::string_view bytes, size_t i) {
  const auto lead = static_cast<uint8_t>(bytes[i]);
  size_t extra = 0;
  uint32_t min = 0;
  uint32_t code = 0;
  if (lead < 0x80) {
    return 1;
  } else if ((lead & 0xE0) == 0xC0) {
    extra = 1, min = 0x80, code = lead & 0x1F;
  } else if ((lead & 0xF0) == 0xE0) {
    extra = 2, min = 0x800, code = lead & 0x0F;
  } else if ((lead & 0xF8) == 0xF0) {
    extra = 3, min = 0x10000, code = lead & 0x07;
  } else {
    return 0;
  }
  if (bytes.size() - i <= extra) {
    return 0;
  }
  for (size_t k = 1; k <= extra; ++k) {
    const auto next = static_cast<uint8_t>(bytes[i + k]);
    if ((next & 0xC0) != 0x80) {
      return 0;
    }
    code = (code << 6) | (next & 0x3F);
  }
  if (code < min || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) {
    return 0;
  }
  return extra + 1;
}

// Whether `bytes` is well-formed UTF-8.
inline bool is_utf8(std::string_view bytes) {
  for (size_t i = 0; i < bytes.size();) {
    const size_t length = utf8_sequence_length(bytes, i);
    if (length == 0) {
      return false;
    }
    i += length;
  }
  return true;
}

// `bytes` (a name read from a file, a log line) fit for a one-line message:
// control characters and bytes that are not UTF-8 as \xNN.
inline std::string printable(std::string_view bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string text;
  for (size_t i = 0; i < bytes.size();) {
    const auto byte = static_cast<uint8_t>(bytes[i]);
    const size_t length = utf8_sequence_length(bytes, i);
    if (length == 0 || byte < 0x20 || byte == 0x7F) {
      text += "\\x";
      text += kDigits[byte >> 4];
      text += kDigits[byte & 15];
      ++i;
    } else {
      text.append(bytes.substr(i, length));
      i += length;
    }
  }
  return text;
}

}  // namespace tte
