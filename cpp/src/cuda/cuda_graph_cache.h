// Optional CUDA-graph capture of a provider's enqueue (load option
// "cuda_graphs"). A graph bakes in tensor shapes and addresses, so graphs are
// keyed by a signature of both (and the optimization profile) and a new
// signature captures anew; a few recent ones are kept.
//
// Capture follows trtexec (samples/common/sampleInference.cpp): "Avoid
// capturing initialization calls by executing the enqueue function at least
// once before starting CUDA graph capture". TensorRT's first enqueue after a
// shape or profile change does work a capture cannot hold (the profile's
// resources update "on the next call of enqueueV3", NvInferRuntime.h,
// IExecutionContext::setOptimizationProfileAsync). So a signature seen the
// second time runs a plain enqueue (the call's real work), synchronizes, and
// only then captures, without launching what it captured; later calls replay.
// A capture that fails, or an engine that says it cannot be captured, leaves
// that signature to plain enqueues.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <vector>

#include <cuda_runtime_api.h>

#include "common/status.h"

namespace tte {

// The CUDA calls the cache makes; tests replace them to watch the order.
struct CudaGraphCalls {
  cudaError_t (*synchronize)(cudaStream_t stream);
  cudaError_t (*begin_capture)(cudaStream_t stream);
  cudaError_t (*end_capture)(cudaStream_t stream, cudaGraph_t* graph);
  cudaError_t (*instantiate)(cudaGraphExec_t* exec, cudaGraph_t graph);
  cudaError_t (*launch)(cudaGraphExec_t exec, cudaStream_t stream);
  void (*destroy_graph)(cudaGraph_t graph);
  void (*destroy_exec)(cudaGraphExec_t exec);

  // The CUDA runtime's own.
  static const CudaGraphCalls& cuda();
};

class CudaGraphCache {
 public:
  static constexpr size_t kDefaultCapacity = 8;

  explicit CudaGraphCache(size_t capacity = kDefaultCapacity,
                          const CudaGraphCalls& calls = CudaGraphCalls::cuda())
      : capacity_(capacity), calls_(calls) {}
  ~CudaGraphCache();
  CudaGraphCache(const CudaGraphCache&) = delete;
  CudaGraphCache& operator=(const CudaGraphCache&) = delete;

  // Runs `enqueue` (which enqueues the engine on `stream`) for `signature`:
  // plainly the first time; the second time plainly, then synchronized and
  // captured if `capturable()` says so (the captured graph is not launched);
  // later times by replaying the graph. Returns the provider's status, or
  // why a graph launch failed.
  Status run(const std::vector<int64_t>& signature, cudaStream_t stream,
             const std::function<Status()>& enqueue, const std::function<bool()>& capturable);

  size_t num_graphs() const;
  // Launches of a captured graph so far (for tests and benchmarks).
  uint64_t replays() const { return replays_; }

 private:
  struct Entry {
    std::vector<int64_t> signature;
    cudaGraphExec_t graph = nullptr;  // null: not captured (yet)
    bool never_capture = false;       // a capture failed or was refused
  };
  void capture(Entry& entry, cudaStream_t stream, const std::function<Status()>& enqueue,
               const std::function<bool()>& capturable);

  size_t capacity_;
  const CudaGraphCalls& calls_;
  uint64_t replays_ = 0;
  bool warned_ = false;
  std::list<Entry> entries_;  // most recently used first
};

}  // namespace tte
