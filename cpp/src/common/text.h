// Small pieces of the one-line messages the library writes.
#pragma once

#include <cstddef>
#include <string>
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

}  // namespace tte
