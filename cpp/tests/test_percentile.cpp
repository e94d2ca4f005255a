// common/percentile.h, what tte-run and the CUDA baselines print: numpy's
// default percentile (linear interpolation), as `torch-tensorrt-executorch
// run` computes it (tests/python/test_cli.py checks that side).
#include <gtest/gtest.h>

#include <vector>

#include "common/percentile.h"

namespace {

TEST(Percentile, InterpolatesBetweenTheClosestRanksAsNumpy) {
  // numpy.percentile(range(1, 12), [0, 10, 50, 90, 99, 100]).
  const std::vector<double> samples = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  EXPECT_DOUBLE_EQ(tte::percentile(samples, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(tte::percentile(samples, 0.1), 2.0);
  EXPECT_DOUBLE_EQ(tte::percentile(samples, 0.5), 6.0);
  EXPECT_DOUBLE_EQ(tte::percentile(samples, 0.9), 10.0);
  EXPECT_NEAR(tte::percentile(samples, 0.99), 10.9, 1e-12);
  EXPECT_DOUBLE_EQ(tte::percentile(samples, 1.0), 11.0);
  // numpy.percentile([1, 2, 4, 8], [50, 90]): 3.0, 6.8 (not a sample).
  const std::vector<double> four = {1, 2, 4, 8};
  EXPECT_DOUBLE_EQ(tte::percentile(four, 0.5), 3.0);
  EXPECT_NEAR(tte::percentile(four, 0.9), 6.8, 1e-12);
}

TEST(Percentile, OneSampleIsEveryPercentile) {
  const std::vector<double> one = {3.5};
  EXPECT_DOUBLE_EQ(tte::percentile(one, 0.5), 3.5);
  EXPECT_DOUBLE_EQ(tte::percentile(one, 0.99), 3.5);
}

}  // namespace
