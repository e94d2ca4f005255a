// What tte-run prints: each output's dtype, shape, device and checksum, and
// latency percentiles, as text or as one JSON document.
#pragma once

#include <string>
#include <vector>

#include "tools/tte_run/arguments.h"
#include "tools/tte_run/inputs.h"
#include "tools/tte_run/outputs.h"

namespace tte::tools {

struct LatencySummary {
  double p50 = 0, p90 = 0, p99 = 0, mean = 0, min = 0, max = 0;
};

// Of at least one latency, in milliseconds.
LatencySummary summarize(std::vector<double> latencies_ms);

void print_report(const Arguments& args, const std::string& method,
                  const std::vector<InputValue>& inputs, const std::vector<HostOutput>& host,
                  const LatencySummary& latency);

}  // namespace tte::tools
