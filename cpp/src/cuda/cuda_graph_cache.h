// Optional CUDA-graph capture of a provider's enqueue (load option
// "cuda_graphs"). A graph bakes in tensor shapes and addresses, so graphs are
// keyed by a signature of both and a new signature captures anew; a few
// recent ones are kept. If capture fails once, the handle stops trying and
// enqueues plainly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <vector>

#include <cuda_runtime_api.h>

#include "common/status.h"

namespace tte {

class CudaGraphCache {
 public:
  static constexpr size_t kDefaultCapacity = 8;

  explicit CudaGraphCache(size_t capacity = kDefaultCapacity) : capacity_(capacity) {}
  ~CudaGraphCache();
  CudaGraphCache(const CudaGraphCache&) = delete;
  CudaGraphCache& operator=(const CudaGraphCache&) = delete;

  // Runs `enqueue` (which enqueues the engine on `stream`) for `signature`:
  // the first time plainly (TensorRT's first enqueue after a shape change may
  // allocate or synchronize, which capture forbids), the second time captured
  // into a graph that is then launched, later times by replaying the graph.
  // Returns the provider's status, or why a graph launch failed.
  Status run(const std::vector<int64_t>& signature, cudaStream_t stream,
             const std::function<Status()>& enqueue);

  // False once a capture failed.
  bool enabled() const { return enabled_; }
  size_t num_graphs() const;
  // Launches of a captured graph so far (for tests and benchmarks).
  uint64_t replays() const { return replays_; }

 private:
  struct Entry {
    std::vector<int64_t> signature;
    cudaGraphExec_t graph = nullptr;  // null: seen once, not captured yet
  };
  Status capture_and_launch(Entry& entry, cudaStream_t stream,
                            const std::function<Status()>& enqueue);

  size_t capacity_;
  bool enabled_ = true;
  uint64_t replays_ = 0;
  std::list<Entry> entries_;  // most recently used first
};

}  // namespace tte
