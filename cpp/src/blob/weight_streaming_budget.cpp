#include "blob/weight_streaming_budget.h"

#include <charconv>
#include <cstdio>
#include <string>

namespace tte {
namespace {

// The value as it appeared, printable and short, for the message.
std::string shown(const char* text, std::size_t size) {
  constexpr std::size_t kMaxShown = 40;
  std::string out = "'";
  char escaped[8];
  for (std::size_t i = 0; i < size && i < kMaxShown; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\' && c != '\'') {
      out += static_cast<char>(c);
    } else {
      std::snprintf(escaped, sizeof(escaped), "\\x%02x", c);
      out += escaped;
    }
  }
  out += size > kMaxShown ? "...'" : "'";
  return out;
}

}  // namespace

ParseResult<std::int64_t> parse_weight_streaming_budget(const void* data, std::size_t size) {
  const char* text = static_cast<const char*>(data);
  const std::string expected =
      "weight_streaming_budget must be a decimal byte count from 0 to 9223372036854775807";
  if (size == 0 || text == nullptr)
    return ParseResult<std::int64_t>::failure(expected + ", got an empty value");
  // from_chars would accept a leading '-'; the budget is never negative.
  if (text[0] == '-') {
    return ParseResult<std::int64_t>::failure(expected + ", got " + shown(text, size) +
                                              ", which has a minus sign");
  }
  std::int64_t bytes = 0;
  const auto [ptr, ec] = std::from_chars(text, text + size, bytes);
  if (ec == std::errc::result_out_of_range) {
    return ParseResult<std::int64_t>::failure(expected + ", got " + shown(text, size) +
                                              ", which is too large");
  }
  if (ec != std::errc() || ptr != text + size) {
    return ParseResult<std::int64_t>::failure(expected + ", got " + shown(text, size));
  }
  return ParseResult<std::int64_t>::success(bytes);
}

}  // namespace tte
