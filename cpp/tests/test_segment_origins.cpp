// Where a loaded delegate payload came from (common/segment_origins.h): a
// range inside a recorded segment is named by file and offset, anything
// else is not named, and a forgotten segment names nothing.
#include <gtest/gtest.h>

#include <vector>

#include "common/segment_origins.h"

namespace {

using tte::forget_segment;
using tte::record_segment;
using tte::recorded_segment_count;
using tte::segment_origin;

TEST(SegmentOrigins, RangesInsideARecordedSegmentAreNamedByFileAndOffset) {
  std::vector<char> segment(1000);
  record_segment(segment.data(), segment.size(), "8:1:42:1000:1.2:3.4", 4096);
  EXPECT_EQ(segment_origin(segment.data(), segment.size()), "8:1:42:1000:1.2:3.4@4096:1000");
  EXPECT_EQ(segment_origin(segment.data() + 24, 100), "8:1:42:1000:1.2:3.4@4120:100");
  EXPECT_EQ(segment_origin(segment.data() + 1000, 0), "8:1:42:1000:1.2:3.4@5096:0");
  forget_segment(segment.data());
  EXPECT_EQ(recorded_segment_count(), 0u);
}

TEST(SegmentOrigins, RangesOutsideOrAcrossTheEndAreNotNamed) {
  std::vector<char> memory(3000);
  char* segment = memory.data() + 1000;
  record_segment(segment, 1000, "f", 0);
  EXPECT_FALSE(segment_origin(memory.data(), 10).has_value()) << "before it";
  EXPECT_FALSE(segment_origin(segment - 1, 10).has_value()) << "starts before it";
  EXPECT_FALSE(segment_origin(segment + 990, 11).has_value()) << "runs past its end";
  EXPECT_FALSE(segment_origin(segment + 1001, 1).has_value()) << "after it";
  EXPECT_FALSE(segment_origin(segment, SIZE_MAX).has_value()) << "a size that would wrap";
  forget_segment(segment);
  EXPECT_FALSE(segment_origin(segment, 10).has_value()) << "forgotten";
}

TEST(SegmentOrigins, NeighbouringSegmentsKeepTheirOwnNames) {
  std::vector<char> memory(2000);
  record_segment(memory.data(), 1000, "a", 0);
  record_segment(memory.data() + 1000, 1000, "b", 7);
  EXPECT_EQ(segment_origin(memory.data() + 999, 1), "a@999:1");
  EXPECT_EQ(segment_origin(memory.data() + 1000, 1), "b@7:1");
  EXPECT_FALSE(segment_origin(memory.data() + 999, 2).has_value()) << "spans both";
  forget_segment(memory.data());
  forget_segment(memory.data() + 1000);
  EXPECT_EQ(recorded_segment_count(), 0u);
}

TEST(SegmentOrigins, EmptySegmentsAreNotRecorded) {
  char byte = 0;
  record_segment(&byte, 0, "f", 0);
  record_segment(nullptr, 10, "f", 0);
  EXPECT_EQ(recorded_segment_count(), 0u);
}

}  // namespace
