// The weight_streaming_budget compile spec / load option value.
#include "blob/weight_streaming_budget.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>

namespace tte {
namespace {

// Copies into a heap buffer of exactly the value's length, with no NUL after
// it, so a reader that scans for a terminator reads out of bounds (and a
// sanitizer build says so).
ParseResult<std::int64_t> parse(const std::string& text) {
  std::unique_ptr<char[]> exact(new char[text.size() ? text.size() : 1]);
  std::memcpy(exact.get(), text.data(), text.size());
  return parse_weight_streaming_budget(exact.get(), text.size());
}

TEST(WeightStreamingBudget, ParsesByteCounts) {
  EXPECT_EQ(parse("0").value(), 0);
  EXPECT_EQ(parse("1").value(), 1);
  EXPECT_EQ(parse("8589934592").value(), 8589934592LL);
  EXPECT_EQ(parse("9223372036854775807").value(), std::numeric_limits<std::int64_t>::max());
}

TEST(WeightStreamingBudget, ParsesLeadingZeros) {
  EXPECT_EQ(parse("0000000001").value(), 1);
  EXPECT_EQ(parse("00").value(), 0);
  EXPECT_EQ(parse("000009223372036854775807").value(), std::numeric_limits<std::int64_t>::max());
}

TEST(WeightStreamingBudget, RejectsNegative) {
  for (const char* text : {"-1", "-0", "-9223372036854775808"}) {
    const auto result = parse(text);
    ASSERT_FALSE(result.ok()) << text;
    EXPECT_NE(result.error().find("minus sign"), std::string::npos) << result.error();
  }
}

TEST(WeightStreamingBudget, RejectsOverflow) {
  for (const char* text :
       {"9223372036854775808", "18446744073709551616", "99999999999999999999999"}) {
    const auto result = parse(text);
    ASSERT_FALSE(result.ok()) << text;
    EXPECT_NE(result.error().find("too large"), std::string::npos) << result.error();
  }
}

TEST(WeightStreamingBudget, RejectsEmptyAndZeroLength) {
  EXPECT_NE(parse("").error().find("empty"), std::string::npos);
  EXPECT_FALSE(parse_weight_streaming_budget("0", 0).ok());
  EXPECT_FALSE(parse_weight_streaming_budget(nullptr, 0).ok());
}

TEST(WeightStreamingBudget, RejectsAnythingButDigits) {
  for (const char* text : {"garbage", "12x", "12 34", "42 ", " 42", "+42", "4.5", "1e9", "0x10",
                           "\t1", "1\n", "\xef\xbc\x91"}) {
    const auto result = parse(text);
    EXPECT_FALSE(result.ok()) << "'" << text << "'";
    EXPECT_NE(result.error().find("decimal byte count"), std::string::npos) << result.error();
  }
}

TEST(WeightStreamingBudget, RejectsEmbeddedNul) {
  const char raw[] = {'1', '2', '3', '\0', 'x'};
  const auto result = parse_weight_streaming_budget(raw, sizeof(raw));
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().find("'123\\x00x'"), std::string::npos) << result.error();
}

TEST(WeightStreamingBudget, ReadsOnlyTheGivenBytes) {
  // Digits after the value: a reader that ignored the length would get 128999.
  const char digits[] = {'1', '2', '8', '9', '9', '9', '\0'};
  EXPECT_EQ(parse_weight_streaming_budget(digits, 3).value(), 128);
  const char letters[] = {'1', '2', '8', 'X', 'Y', 'Z'};
  EXPECT_EQ(parse_weight_streaming_budget(letters, 3).value(), 128);
}

TEST(WeightStreamingBudget, ShowsALongValueShortened) {
  const auto result = parse(std::string(1000, '7') + "x");
  ASSERT_FALSE(result.ok());
  EXPECT_LT(result.error().size(), 200u) << result.error();
}

}  // namespace
}  // namespace tte
