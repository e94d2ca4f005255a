// What the C++ tests ask of a message or a log: that it holds a piece of text.
#pragma once

#include <string>

namespace tte_test {

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace tte_test
