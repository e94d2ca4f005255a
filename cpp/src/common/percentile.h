// The one percentile of latency samples the project's reports print (tte-run,
// the CUDA baselines); `torch-tensorrt-executorch run` computes the same.
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

namespace tte {

// The q-th quantile (0 <= q <= 1) of `sorted` (ascending, not empty), by
// linear interpolation between the closest ranks: numpy's default method.
inline double percentile(const std::vector<double>& sorted, double q) {
  const double position = static_cast<double>(sorted.size() - 1) * q;
  const size_t low = static_cast<size_t>(std::floor(position));
  const size_t high = static_cast<size_t>(std::ceil(position));
  return sorted[low] + (sorted[high] - sorted[low]) * (position - static_cast<double>(low));
}

}  // namespace tte
