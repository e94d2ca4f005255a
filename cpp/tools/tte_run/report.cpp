#include "tools/tte_run/report.h"

#include <algorithm>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "common/dtypes.h"
#include "common/percentile.h"
#include "common/text.h"

namespace tte::tools {

namespace {

void print_json(const Arguments& args, const std::string& method,
                const std::vector<InputValue>& inputs, const std::vector<HostOutput>& host,
                const LatencySummary& latency) {
  nlohmann::json doc;
  doc["model"] = args.model;
  doc["method"] = method;
  doc["providers"] = nlohmann::json::array();
  for (size_t i = 0; i < tte_num_engine_providers(); ++i) {
    doc["providers"].push_back(tte_engine_provider_name(i));
  }
  doc["inputs"] = nlohmann::json::array();
  for (const InputValue& value : inputs) {
    doc["inputs"].push_back(value.description);
  }
  doc["outputs"] = nlohmann::json::array();
  for (size_t i = 0; i < host.size(); ++i) {
    nlohmann::json entry;
    entry["index"] = i;
    switch (host[i].tag) {
      case TTE_VALUE_TENSOR:
        entry["tag"] = "tensor";
        entry["dtype"] = output_dtype_name(host[i].dtype);
        entry["shape"] = host[i].shape;
        entry["device"] = host[i].device;
        entry["checksum"] = host[i].checksum;
        break;
      case TTE_VALUE_INT:
      case TTE_VALUE_DOUBLE:
      case TTE_VALUE_BOOL:
        entry["tag"] = "scalar";
        entry["value"] = host[i].checksum;
        break;
      default:
        entry["tag"] = host[i].tag == TTE_VALUE_NONE ? "none" : "other";
    }
    doc["outputs"].push_back(entry);
  }
  doc["runs"] = args.num_runs;
  doc["warmup"] = args.warmup;
  doc["latency_ms"] = {{"p50", latency.p50},   {"p90", latency.p90}, {"p99", latency.p99},
                       {"mean", latency.mean}, {"min", latency.min}, {"max", latency.max}};
  if (!args.save_dir.empty()) {
    doc["saved_outputs"] = args.save_dir;
  }
  std::printf("%s\n", doc.dump(2).c_str());
}

void print_text(const Arguments& args, const std::string& method,
                const std::vector<InputValue>& inputs, const std::vector<HostOutput>& host,
                const LatencySummary& latency) {
  std::printf("model: %s\nmethod: %s (%zu inputs, %zu outputs)\n", args.model.c_str(),
              method.c_str(), inputs.size(), host.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::printf("input %zu: %s\n", i, inputs[i].description.c_str());
  }
  for (size_t i = 0; i < host.size(); ++i) {
    switch (host[i].tag) {
      case TTE_VALUE_TENSOR:
        std::printf("output %zu: %s %s on %s, checksum %.6f\n", i,
                    output_dtype_name(host[i].dtype).c_str(), format_dims(host[i].shape).c_str(),
                    host[i].device.c_str(), host[i].checksum);
        break;
      case TTE_VALUE_INT:
      case TTE_VALUE_DOUBLE:
      case TTE_VALUE_BOOL:
        std::printf("output %zu: scalar %s\n", i, host[i].scalar_text.c_str());
        break;
      default:
        std::printf("output %zu: %s\n", i, host[i].tag == TTE_VALUE_NONE ? "none" : "other");
    }
  }
  std::printf(
      "latency over %d runs (%d warmup): p50 %.3f ms, p90 %.3f ms, p99 %.3f ms, mean %.3f ms\n",
      args.num_runs, args.warmup, latency.p50, latency.p90, latency.p99, latency.mean);
  if (!args.save_dir.empty()) {
    std::printf("outputs saved to %s\n", args.save_dir.c_str());
  }
}

}  // namespace

LatencySummary summarize(std::vector<double> latencies_ms) {
  std::sort(latencies_ms.begin(), latencies_ms.end());
  LatencySummary summary;
  for (double latency : latencies_ms) {
    summary.mean += latency / static_cast<double>(latencies_ms.size());
  }
  summary.p50 = percentile(latencies_ms, 0.50);
  summary.p90 = percentile(latencies_ms, 0.90);
  summary.p99 = percentile(latencies_ms, 0.99);
  summary.min = latencies_ms.front();
  summary.max = latencies_ms.back();
  return summary;
}

void print_report(const Arguments& args, const std::string& method,
                  const std::vector<InputValue>& inputs, const std::vector<HostOutput>& host,
                  const LatencySummary& latency) {
  if (args.json) {
    print_json(args, method, inputs, host, latency);
  } else {
    print_text(args, method, inputs, host, latency);
  }
}

}  // namespace tte::tools
