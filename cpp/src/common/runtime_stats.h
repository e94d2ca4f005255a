// Process-wide counters behind tte_get_runtime_stats: what this library
// copied and launched for callers. Relaxed atomics: they are statistics,
// read by tests and benchmarks, never used for synchronization.
#pragma once

#include <atomic>
#include <cstdint>

namespace tte {

// Mapped: a CPU copy between a host tensor and mapped staging memory, which
// the device reads and writes where it lies (integrated GPUs).
enum class CopyKind { HostToDevice, DeviceToHost, DeviceToDevice, Mapped };

struct RuntimeStats {
  std::atomic<uint64_t> h2d_copies{0}, h2d_bytes{0};
  std::atomic<uint64_t> d2h_copies{0}, d2h_bytes{0};
  std::atomic<uint64_t> d2d_copies{0}, d2d_bytes{0};
  std::atomic<uint64_t> enqueues{0};
  std::atomic<uint64_t> graph_captures{0}, graph_replays{0}, graph_fallbacks{0};
  std::atomic<uint64_t> shared_engine_reuses{0};
  // CUDA graphs: copies into and out of graph-owned I/O buffers (none since
  // graphs are updated to new addresses instead; kept for the C API's
  // struct), and shape sets an engine said it cannot capture.
  std::atomic<uint64_t> graph_io_copies{0}, graph_io_bytes{0}, graph_uncapturable{0};
  // The engine cache: plans it named by a SHA-256 of their bytes (those not
  // read from a file by the Program API), and the bytes hashed.
  std::atomic<uint64_t> plan_digests{0}, plan_digest_bytes{0};
  // CUDA graphs updated in place to a call's new addresses
  // (cudaGraphExecUpdate) before their replay.
  std::atomic<uint64_t> graph_updates{0};
  // Host tensors staged through mapped memory: CPU copies into and out of
  // it (CopyKind::Mapped), in place of host-device copies.
  std::atomic<uint64_t> mapped_copies{0}, mapped_bytes{0};
  // Program API runs that launched their last run's CUDA graph again
  // instead of executing the method (program/repeated_run.h); each is
  // counted in graph_replays too.
  std::atomic<uint64_t> run_repeats{0};

  static RuntimeStats& instance();

  void record_copy(CopyKind kind, uint64_t bytes);
  void reset();
};

}  // namespace tte
