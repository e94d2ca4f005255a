// The physical baselines the benchmarks divide by, measured on this GPU in
// the same run as the benchmark itself:
//   launch:   an empty kernel launch + cudaStreamSynchronize
//   graph:    cudaGraphLaunch of a captured empty kernel + cudaStreamSynchronize
//   pinned:   cudaMemcpyAsync H2D / D2H of BYTES between pinned host memory and
//             the device, + cudaStreamSynchronize (the peak staging can reach)
//   pageable: the same from malloc'd host memory (what upstream's runtime does)
//   d2d:      cudaMemcpyAsync device to device of BYTES (the bandwidth graph
//             I/O copies are bound by)
// and the ways a CUDA graph can serve callers whose tensors move between
// calls (a small add-one kernel over FRESH_BYTES, the source and destination
// rotating over 64 buffers, + cudaStreamSynchronize each):
//   fresh_stream_copies:  copy in, cudaGraphLaunch on fixed buffers, copy
//                         out (what the delegate's graph cache does)
//   fresh_memcpy_nodes:   one graph holding the two copies as memcpy nodes,
//                         re-pointed with cudaGraphExecMemcpyNodeSetParams1D
//   fresh_exec_update:    the kernel captured again on the new addresses and
//                         cudaGraphExecUpdate (TensorRT's enqueueV3 inside
//                         the capture would add its own host time)
//   fresh_plain_launch:   the kernel launched on the new addresses, no graph
// Prints one JSON object on stdout. Times are wall clock, per iteration.
//
// Usage: tte-cuda-baselines [--device N] [--iterations N] [--copy-iterations N]
//                           [--bytes N] [--fresh-bytes N]
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "common/percentile.h"

namespace {

__global__ void null_kernel() {}

__global__ void add_one_kernel(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] + 1.0f;
}

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    std::fprintf(stderr, "tte-cuda-baselines: %s failed: %s (%s)\n", what, cudaGetErrorName(status),
                 cudaGetErrorString(status));
    std::exit(1);
  }
}

struct Options {
  int device = 0;
  int iterations = 20000;
  int copy_iterations = 40;
  size_t bytes = size_t{64} << 20;
  size_t fresh_bytes = 1024;
};

Options parse_options(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> long long {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "tte-cuda-baselines: %s needs a value\n", arg.c_str());
        std::exit(2);
      }
      char* end = nullptr;
      long long v = std::strtoll(argv[++i], &end, 10);
      if (*end != '\0' || v <= 0) {
        std::fprintf(stderr, "tte-cuda-baselines: %s needs a positive integer, got '%s'\n",
                     arg.c_str(), argv[i]);
        std::exit(2);
      }
      return v;
    };
    if (arg == "--device") {
      options.device = static_cast<int>(value());
    } else if (arg == "--iterations") {
      options.iterations = static_cast<int>(value());
    } else if (arg == "--copy-iterations") {
      options.copy_iterations = static_cast<int>(value());
    } else if (arg == "--bytes") {
      options.bytes = static_cast<size_t>(value());
    } else if (arg == "--fresh-bytes") {
      options.fresh_bytes = static_cast<size_t>(value());
    } else {
      std::fprintf(stderr,
                   "usage: tte-cuda-baselines [--device N] [--iterations N] [--copy-iterations N] "
                   "[--bytes N] "
                   "[--fresh-bytes N]\n");
      std::exit(2);
    }
  }
  return options;
}

using Clock = std::chrono::steady_clock;

// Seconds per call of `body`, after `warmup` untimed calls.
template <typename Body>
std::vector<double> time_calls(int iterations, int warmup, Body&& body) {
  for (int i = 0; i < warmup; ++i) body();
  std::vector<double> seconds(iterations);
  for (int i = 0; i < iterations; ++i) {
    Clock::time_point start = Clock::now();
    body();
    seconds[i] = std::chrono::duration<double>(Clock::now() - start).count();
  }
  return seconds;
}

// The project's one percentile definition (numpy's linear), over a sorted copy.
double percentile(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  return tte::percentile(values, q);
}

double mean(const std::vector<double>& values) {
  double sum = 0;
  for (double v : values) sum += v;
  return sum / static_cast<double>(values.size());
}

// {"median": .., "p10": .., "p90": .., "p99": .., "mean": .., "min": ..} in microseconds.
std::string latency_json(const std::vector<double>& seconds) {
  char buffer[256];
  std::snprintf(buffer, sizeof(buffer),
                "{\"median\": %.3f, \"p10\": %.3f, \"p90\": %.3f, \"p99\": %.3f, \"mean\": %.3f, "
                "\"min\": %.3f}",
                percentile(seconds, 0.5) * 1e6, percentile(seconds, 0.1) * 1e6,
                percentile(seconds, 0.9) * 1e6, percentile(seconds, 0.99) * 1e6,
                mean(seconds) * 1e6, *std::min_element(seconds.begin(), seconds.end()) * 1e6);
  return buffer;
}

// {"median": .., "best": ..} in GB/s (10^9 bytes per second).
std::string bandwidth_json(const std::vector<double>& seconds, size_t bytes) {
  char buffer[128];
  double gb = static_cast<double>(bytes) / 1e9;
  std::snprintf(buffer, sizeof(buffer), "{\"median\": %.3f, \"best\": %.3f}",
                gb / percentile(seconds, 0.5),
                gb / *std::min_element(seconds.begin(), seconds.end()));
  return buffer;
}

struct FreshResults {
  std::vector<double> stream_copies, memcpy_nodes, exec_update, plain_launch, fixed_graph;
};

// Callers' tensors at a new address each call: 64 input and 64 output
// buffers used in turn, against a graph whose kernel works on fixed buffers.
// The alternatives run interleaved in rounds, so they see the same GPU state.
FreshResults time_fresh_alternatives(const Options& options, cudaStream_t stream, int warmup) {
  constexpr int kBuffers = 64;
  const int n = static_cast<int>(options.fresh_bytes / sizeof(float));
  const int blocks = (n + 255) / 256;
  std::vector<float*> xs(kBuffers), ys(kBuffers);
  for (int b = 0; b < kBuffers; ++b) {
    check(cudaMalloc(&xs[b], options.fresh_bytes), "cudaMalloc");
    check(cudaMalloc(&ys[b], options.fresh_bytes), "cudaMalloc");
  }
  float* fixed_x = nullptr;
  float* fixed_y = nullptr;
  check(cudaMalloc(&fixed_x, options.fresh_bytes), "cudaMalloc");
  check(cudaMalloc(&fixed_y, options.fresh_bytes), "cudaMalloc");

  // The kernel alone on the fixed buffers.
  cudaGraph_t kernel_graph = nullptr;
  cudaGraphExec_t kernel_exec = nullptr;
  check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
  add_one_kernel<<<blocks, 256, 0, stream>>>(fixed_x, fixed_y, n);
  check(cudaStreamEndCapture(stream, &kernel_graph), "cudaStreamEndCapture");
  check(cudaGraphInstantiate(&kernel_exec, kernel_graph, 0), "cudaGraphInstantiate");

  // Copy in, kernel, copy out as one graph with memcpy nodes.
  cudaGraph_t whole = nullptr;
  cudaGraphExec_t whole_exec = nullptr;
  cudaGraphNode_t copy_in = nullptr, kernel_node = nullptr, copy_out = nullptr;
  check(cudaGraphCreate(&whole, 0), "cudaGraphCreate");
  check(cudaGraphAddMemcpyNode1D(&copy_in, whole, nullptr, 0, fixed_x, xs[0], options.fresh_bytes,
                                 cudaMemcpyDeviceToDevice),
        "cudaGraphAddMemcpyNode1D");
  check(cudaGraphAddChildGraphNode(&kernel_node, whole, &copy_in, 1, kernel_graph),
        "cudaGraphAddChildGraphNode");
  check(cudaGraphAddMemcpyNode1D(&copy_out, whole, &kernel_node, 1, ys[0], fixed_y,
                                 options.fresh_bytes, cudaMemcpyDeviceToDevice),
        "cudaGraphAddMemcpyNode1D");
  check(cudaGraphInstantiate(&whole_exec, whole, 0), "cudaGraphInstantiate");

  cudaGraphExec_t update_exec = nullptr;
  check(cudaGraphInstantiate(&update_exec, kernel_graph, 0), "cudaGraphInstantiate");

  int call = 0;
  auto next = [&] { return call++ % kBuffers; };
  auto stream_copies = [&] {
    const int b = next();
    check(cudaMemcpyAsync(fixed_x, xs[b], options.fresh_bytes, cudaMemcpyDeviceToDevice, stream),
          "copy in");
    check(cudaGraphLaunch(kernel_exec, stream), "cudaGraphLaunch");
    check(cudaMemcpyAsync(ys[b], fixed_y, options.fresh_bytes, cudaMemcpyDeviceToDevice, stream),
          "copy out");
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  };
  auto memcpy_nodes = [&] {
    const int b = next();
    check(cudaGraphExecMemcpyNodeSetParams1D(whole_exec, copy_in, fixed_x, xs[b],
                                             options.fresh_bytes, cudaMemcpyDeviceToDevice),
          "cudaGraphExecMemcpyNodeSetParams1D");
    check(cudaGraphExecMemcpyNodeSetParams1D(whole_exec, copy_out, ys[b], fixed_y,
                                             options.fresh_bytes, cudaMemcpyDeviceToDevice),
          "cudaGraphExecMemcpyNodeSetParams1D");
    check(cudaGraphLaunch(whole_exec, stream), "cudaGraphLaunch");
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  };
  auto exec_update = [&] {
    const int b = next();
    cudaGraph_t graph = nullptr;
    check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal),
          "cudaStreamBeginCapture");
    add_one_kernel<<<blocks, 256, 0, stream>>>(xs[b], ys[b], n);
    check(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture");
    cudaGraphExecUpdateResultInfo info{};
    check(cudaGraphExecUpdate(update_exec, graph, &info), "cudaGraphExecUpdate");
    check(cudaGraphDestroy(graph), "cudaGraphDestroy");
    check(cudaGraphLaunch(update_exec, stream), "cudaGraphLaunch");
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  };
  auto plain_launch = [&] {
    const int b = next();
    add_one_kernel<<<blocks, 256, 0, stream>>>(xs[b], ys[b], n);
    check(cudaGetLastError(), "add_one launch");
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  };
  auto fixed_graph = [&] {
    check(cudaGraphLaunch(kernel_exec, stream), "cudaGraphLaunch");
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  };
  FreshResults results;
  const int rounds = 10;
  const int per_round = std::max(1, options.iterations / rounds);
  for (int r = 0; r < rounds; ++r) {
    const int w = r == 0 ? warmup : 0;
    for (auto& [samples, body] :
         std::vector<std::pair<std::vector<double>*, std::function<void()>>>{
             {&results.stream_copies, stream_copies},
             {&results.memcpy_nodes, memcpy_nodes},
             {&results.exec_update, exec_update},
             {&results.plain_launch, plain_launch},
             {&results.fixed_graph, fixed_graph}}) {
      std::vector<double> round = time_calls(per_round, w, body);
      samples->insert(samples->end(), round.begin(), round.end());
    }
  }
  cudaGraphExecDestroy(update_exec);
  cudaGraphExecDestroy(whole_exec);
  cudaGraphDestroy(whole);
  cudaGraphExecDestroy(kernel_exec);
  cudaGraphDestroy(kernel_graph);
  for (int b = 0; b < kBuffers; ++b) {
    cudaFree(xs[b]);
    cudaFree(ys[b]);
  }
  cudaFree(fixed_x);
  cudaFree(fixed_y);
  return results;
}

}  // namespace

int main(int argc, char** argv) {
  Options options = parse_options(argc, argv);
  int count = 0;
  cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    std::fprintf(stderr,
                 "tte-cuda-baselines: no CUDA device (%s): the baselines need an NVIDIA GPU\n",
                 status != cudaSuccess ? cudaGetErrorString(status) : "0 devices");
    return 1;
  }
  check(cudaSetDevice(options.device), "cudaSetDevice");
  cudaDeviceProp properties{};
  check(cudaGetDeviceProperties(&properties, options.device), "cudaGetDeviceProperties");
  cudaStream_t stream = nullptr;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  int warmup = std::max(10, options.iterations / 20);

  std::vector<double> launch = time_calls(options.iterations, warmup, [&] {
    null_kernel<<<1, 1, 0, stream>>>();
    check(cudaGetLastError(), "null kernel launch");
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  });

  cudaGraph_t graph = nullptr;
  cudaGraphExec_t graph_exec = nullptr;
  check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
  null_kernel<<<1, 1, 0, stream>>>();
  check(cudaGetLastError(), "null kernel launch (capture)");
  check(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture");
  check(cudaGraphInstantiate(&graph_exec, graph, 0), "cudaGraphInstantiate");
  std::vector<double> graph_launch = time_calls(options.iterations, warmup, [&] {
    check(cudaGraphLaunch(graph_exec, stream), "cudaGraphLaunch");
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  });

  void* device_buffer = nullptr;
  void* pinned = nullptr;
  check(cudaMalloc(&device_buffer, options.bytes), "cudaMalloc");
  check(cudaMallocHost(&pinned, options.bytes), "cudaMallocHost");
  std::vector<unsigned char> pageable(options.bytes,
                                      1);  // touched, so no first-use page faults are timed
  std::memset(pinned, 1, options.bytes);
  auto copy = [&](void* dst, const void* src, cudaMemcpyKind kind) {
    return [=] {
      check(cudaMemcpyAsync(dst, src, options.bytes, kind, stream), "cudaMemcpyAsync");
      check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    };
  };
  int copy_warmup = 3;
  std::vector<double> pinned_h2d = time_calls(options.copy_iterations, copy_warmup,
                                              copy(device_buffer, pinned, cudaMemcpyHostToDevice));
  std::vector<double> pinned_d2h = time_calls(options.copy_iterations, copy_warmup,
                                              copy(pinned, device_buffer, cudaMemcpyDeviceToHost));
  std::vector<double> pageable_h2d =
      time_calls(options.copy_iterations, copy_warmup,
                 copy(device_buffer, pageable.data(), cudaMemcpyHostToDevice));
  std::vector<double> pageable_d2h =
      time_calls(options.copy_iterations, copy_warmup,
                 copy(pageable.data(), device_buffer, cudaMemcpyDeviceToHost));

  void* device_other = nullptr;
  check(cudaMalloc(&device_other, options.bytes), "cudaMalloc");
  std::vector<double> d2d = time_calls(options.copy_iterations, copy_warmup,
                                       copy(device_other, device_buffer, cudaMemcpyDeviceToDevice));

  FreshResults fresh = time_fresh_alternatives(options, stream, warmup);

  int runtime_version = 0;
  int driver_version = 0;
  cudaRuntimeGetVersion(&runtime_version);
  cudaDriverGetVersion(&driver_version);
  std::printf("{\n");
  std::printf(
      "  \"device\": {\"index\": %d, \"name\": \"%s\", \"compute_capability\": \"%d.%d\", "
      "\"cuda_runtime\": %d, \"cuda_driver\": %d},\n",
      options.device, properties.name, properties.major, properties.minor, runtime_version,
      driver_version);
  std::printf("  \"iterations\": %d,\n", options.iterations);
  std::printf("  \"null_kernel_launch_sync_us\": %s,\n", latency_json(launch).c_str());
  std::printf("  \"graph_launch_sync_us\": %s,\n", latency_json(graph_launch).c_str());
  std::printf("  \"copy_bytes\": %zu,\n", options.bytes);
  std::printf("  \"copy_iterations\": %d,\n", options.copy_iterations);
  std::printf("  \"pinned_h2d_gbps\": %s,\n", bandwidth_json(pinned_h2d, options.bytes).c_str());
  std::printf("  \"pinned_d2h_gbps\": %s,\n", bandwidth_json(pinned_d2h, options.bytes).c_str());
  std::printf("  \"pageable_h2d_gbps\": %s,\n",
              bandwidth_json(pageable_h2d, options.bytes).c_str());
  std::printf("  \"pageable_d2h_gbps\": %s,\n",
              bandwidth_json(pageable_d2h, options.bytes).c_str());
  std::printf("  \"d2d_gbps\": %s,\n", bandwidth_json(d2d, options.bytes).c_str());
  std::printf("  \"fresh_bytes\": %zu,\n", options.fresh_bytes);
  std::printf("  \"fresh_stream_copies_us\": %s,\n", latency_json(fresh.stream_copies).c_str());
  std::printf("  \"fresh_memcpy_nodes_us\": %s,\n", latency_json(fresh.memcpy_nodes).c_str());
  std::printf("  \"fresh_exec_update_us\": %s,\n", latency_json(fresh.exec_update).c_str());
  std::printf("  \"fresh_plain_launch_us\": %s,\n", latency_json(fresh.plain_launch).c_str());
  std::printf("  \"fixed_graph_launch_us\": %s\n", latency_json(fresh.fixed_graph).c_str());
  std::printf("}\n");

  cudaGraphExecDestroy(graph_exec);
  cudaGraphDestroy(graph);
  cudaFreeHost(pinned);
  cudaFree(device_buffer);
  cudaFree(device_other);
  cudaStreamDestroy(stream);
  return 0;
}
