// saturating_add: the sum of a method's planned host buffers, compared with
// the planned-memory bound (method_load_checks.cpp), stops at UINT64_MAX instead of
// wrapping below the bound.
#include <gtest/gtest.h>

#include <cstdint>

#include "common/host_memory.h"

namespace {

TEST(SaturatingAdd, AddsWhatFits) {
  EXPECT_EQ(tte::saturating_add(0, 0), 0u);
  EXPECT_EQ(tte::saturating_add(1, 2), 3u);
  EXPECT_EQ(tte::saturating_add(UINT64_MAX - 1, 1), UINT64_MAX);
}

TEST(SaturatingAdd, StopsAtTheTopInsteadOfWrapping) {
  EXPECT_EQ(tte::saturating_add(UINT64_MAX, 1), UINT64_MAX);
  EXPECT_EQ(tte::saturating_add(1, UINT64_MAX), UINT64_MAX);
  // Three planned buffers of INT64_MAX bytes each, as a damaged file can declare them.
  const uint64_t big = static_cast<uint64_t>(INT64_MAX);
  uint64_t total = 0;
  for (int i = 0; i < 3; ++i) total = tte::saturating_add(total, big);
  EXPECT_EQ(total, UINT64_MAX);
  EXPECT_GT(total, uint64_t{1} << 40);  // above any bound, where a wrapped sum would be below
}

}  // namespace
