// A value parsed from untrusted bytes, or the one-line reason it could not be.
#pragma once

#include <optional>
#include <string>
#include <utility>

namespace tte {

template <typename T>
class ParseResult {
 public:
  static ParseResult success(T value) {
    ParseResult result;
    result.value_.emplace(std::move(value));
    return result;
  }
  static ParseResult failure(std::string message) {
    ParseResult result;
    result.error_ = std::move(message);
    return result;
  }

  bool ok() const { return value_.has_value(); }
  explicit operator bool() const { return ok(); }

  // Only valid when ok().
  const T& value() const& { return *value_; }
  T& value() & { return *value_; }
  T&& value() && { return std::move(*value_); }

  // "" when ok().
  const std::string& error() const { return error_; }

 private:
  ParseResult() = default;
  std::optional<T> value_;
  std::string error_;
};

}  // namespace tte
