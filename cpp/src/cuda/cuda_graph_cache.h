// Optional CUDA-graph capture of a provider's enqueue (load option
// "cuda_graphs"). A graph bakes in tensor shapes and addresses. Graphs are
// kept per shape set: the execution context, the optimization profile and
// every input's dims (a graph is only valid for the shapes it was captured
// with). Each shape set holds one executable graph:
// - a call on the addresses it holds replays it (callers that reuse their
//   buffers);
// - a call on other addresses (callers that pass fresh tensors each call)
//   captures the enqueue again at the new addresses, which runs nothing, and
//   updates the executable graph in place with that capture
//   (cudaGraphExecUpdate: the same kernels with new parameters, far cheaper
//   than an instantiate), then launches it. An update the runtime refuses
//   (the engine chose other work for these addresses) instantiates the new
//   capture instead. No copies and no memory of the cache's own: measured
//   against copying fresh tensors through graph-owned buffers and against
//   plain enqueues, this was the cheapest per step (docs/benchmarks.md).
//   Counted in the runtime stats (graph_updates).
//
// Capture follows trtexec (samples/common/sampleInference.cpp): "Avoid
// capturing initialization calls by executing the enqueue function at least
// once before starting CUDA graph capture". TensorRT's first enqueue after a
// shape or profile change does work a capture cannot hold (the profile's
// resources update "on the next call of enqueueV3", NvInferRuntime.h,
// IExecutionContext::setOptimizationProfileAsync). So a shape set's first
// call runs plainly; its first capture is made right after a plain enqueue of
// the same shape set on the same addresses, synchronized, and that captured
// graph is not launched (the plain enqueue did the call's work). Later
// captures of the shape set change only addresses, which needs no such
// warm-up (TensorRT binds addresses per enqueue: setTensorAddress).
// Whether an engine can be captured is asked before each capture and decided
// per shape set: an engine that says no (or a capture that fails) leaves that
// shape set to plain enqueues while it stays cached; other shape sets, and
// the same one after it was evicted, are asked again. Both are counted in the
// runtime stats (graph_uncapturable, graph_fallbacks).
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "common/function_ref.h"
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
  // cudaGraphExecUpdate: cudaSuccess when `exec` now runs `graph`'s work.
  cudaError_t (*update)(cudaGraphExec_t exec, cudaGraph_t graph);

  // The CUDA runtime's own.
  static const CudaGraphCalls& cuda();
};

class CudaGraphCache {
 public:
  static constexpr size_t kDefaultCapacity = 8;
  // Runs the engine with every argument at `addresses` (one per argument).
  using Enqueue = FunctionRef<Status(const std::vector<void*>& addresses)>;
  // Whether the engine can be captured now (asked before each capture).
  using Capturable = FunctionRef<bool()>;

  explicit CudaGraphCache(size_t capacity = kDefaultCapacity,
                          const CudaGraphCalls& calls = CudaGraphCalls::cuda())
      : capacity_(capacity), calls_(calls) {}
  ~CudaGraphCache();
  CudaGraphCache(const CudaGraphCache&) = delete;
  CudaGraphCache& operator=(const CudaGraphCache&) = delete;

  // Runs one call of the shape set `shape_key` (context, profile and input
  // dims, as the caller spells them) with every delegate argument at
  // `addresses` (inputs first, then outputs): plainly, by capturing after a
  // plain enqueue, or by replaying a graph, updated first when the addresses
  // moved (see above). Returns the provider's status, or why a graph launch
  // failed.
  Status run(const std::vector<int64_t>& shape_key, const std::vector<void*>& addresses,
             cudaStream_t stream, const Enqueue& enqueue, const Capturable& capturable);

  // Whether the last call of run() ended by launching a graph (a replay,
  // or an update and its launch), which launch_again can launch once more.
  // Any later run() decides anew; nothing else changes the cache.
  bool last_call_launched() const { return last_exec_ != nullptr; }
  // The stream that launch went on (meaningful while last_call_launched()).
  cudaStream_t last_stream() const { return last_stream_; }
  // Launches the graph the last call of run() launched, on the same stream
  // and addresses, as that call would have if made again (counted as a
  // replay). The caller knows nothing it reads or writes has moved since.
  Status launch_again();

  size_t num_graphs() const;
  // Launches of a captured graph so far, and how many of them first updated
  // it to new addresses (for tests and benchmarks).
  uint64_t replays() const { return replays_; }
  uint64_t updates() const { return updates_; }

 private:
  struct Entry {
    std::vector<int64_t> key;
    cudaGraphExec_t exec = nullptr;  // null: none yet
    std::vector<void*> addresses;    // what `exec` runs on
    bool cannot_capture = false;
  };
  Status run_plain(const std::vector<void*>& addresses, const Enqueue& enqueue);
  Status launch(cudaGraphExec_t exec, cudaStream_t stream);
  // Captures `enqueue` at `addresses` (nothing runs); null, with the entry
  // marked cannot_capture, on refusal or failure.
  cudaGraph_t capture(Entry& entry, const std::vector<void*>& addresses, cudaStream_t stream,
                      const Enqueue& enqueue, const Capturable& capturable);
  // Instantiates `graph` (destroyed either way) as the entry's executable
  // graph, replacing the one it had; false, with the entry given up, when
  // the runtime refuses.
  bool instantiate(Entry& entry, cudaGraph_t graph);
  // The first graph of a shape set, right after its plain warm-up enqueue.
  void capture_first(Entry& entry, cudaStream_t stream, const Enqueue& enqueue,
                     const Capturable& capturable);
  // A call on addresses the graph does not hold: re-capture, update (or
  // instantiate anew), launch; plainly when no graph can be had.
  Status run_moved(Entry& entry, const std::vector<void*>& addresses, cudaStream_t stream,
                   const Enqueue& enqueue, const Capturable& capturable);
  void give_up(Entry& entry, const std::string& why);
  void release(Entry& entry);

  size_t capacity_;
  const CudaGraphCalls& calls_;
  uint64_t replays_ = 0;
  uint64_t updates_ = 0;
  bool warned_ = false;
  // What the last call of run() launched (null: it launched nothing).
  cudaGraphExec_t last_exec_ = nullptr;
  cudaStream_t last_stream_ = nullptr;
  std::list<Entry> entries_;  // most recently used first
};

}  // namespace tte
