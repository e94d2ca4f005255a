// Optional CUDA-graph capture of a provider's enqueue (load option
// "cuda_graphs"). A graph bakes in tensor shapes and addresses. Graphs are
// kept per shape set: the execution context, the optimization profile and
// every input's dims (a graph is only valid for the shapes it was captured
// with). Each shape set may hold two graphs:
// - a graph on the caller's own addresses, replayed when a call passes the
//   same addresses again (callers that reuse their buffers: no copy at all);
// - a graph on buffers the cache owns for the arguments whose address moves
//   from call to call (callers that pass fresh tensors each call), replayed
//   after copying those inputs in and followed by copying those outputs out
//   (device-to-device on the call's stream, counted in the runtime stats).
//   The other arguments keep the address they had at capture; one that moves
//   later joins the owned ones at a new capture. The owned bytes of all shape
//   sets are bounded: the least recently used shape sets give theirs up
//   first, and a shape set that alone would exceed the bound runs without
//   this graph.
// Arguments the engine writes in place (aliased I/O) are never moved into
// owned buffers: a shape set whose aliased arguments move runs plainly.
//
// Capture follows trtexec (samples/common/sampleInference.cpp): "Avoid
// capturing initialization calls by executing the enqueue function at least
// once before starting CUDA graph capture". TensorRT's first enqueue after a
// shape or profile change does work a capture cannot hold (the profile's
// resources update "on the next call of enqueueV3", NvInferRuntime.h,
// IExecutionContext::setOptimizationProfileAsync). So a shape set's first
// call runs plainly; a capture is always made right after a plain enqueue of
// the same shape set on the same addresses, synchronized, and the captured
// graph is not launched (the plain enqueue did the call's work).
// Whether an engine can be captured is asked before each capture and decided
// per shape set: an engine that says no (or a capture that fails) leaves that
// shape set to plain enqueues while it stays cached; other shape sets, and
// the same one after it was evicted, are asked again. Both are counted in the
// runtime stats (graph_uncapturable, graph_fallbacks).
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
  // Device memory on the current device for owned graph I/O, and the
  // device-to-device copies in and out of it on the call's stream.
  cudaError_t (*allocate)(void** memory, size_t bytes);
  void (*free)(void* memory);
  cudaError_t (*copy)(void* dst, const void* src, size_t bytes, cudaStream_t stream);

  // The CUDA runtime's own.
  static const CudaGraphCalls& cuda();
};

// One delegate argument (inputs first, then outputs) on one call.
struct GraphArgument {
  void* address = nullptr;  // this call's engine address
  size_t nbytes = 0;
  bool is_input = false;
  // False for memory that must stay where it is: arguments of aliased
  // (in-place) I/O and empty tensors' placeholders.
  bool may_move = false;
};

class CudaGraphCache {
 public:
  static constexpr size_t kDefaultCapacity = 8;
  // Owned graph I/O of all shape sets together.
  static constexpr size_t kDefaultMaxOwnedBytes = size_t{256} << 20;
  // Runs the engine with every argument at `addresses` (one per argument).
  using Enqueue = std::function<Status(const std::vector<void*>& addresses)>;

  explicit CudaGraphCache(size_t capacity = kDefaultCapacity,
                          size_t max_owned_bytes = kDefaultMaxOwnedBytes,
                          const CudaGraphCalls& calls = CudaGraphCalls::cuda())
      : capacity_(capacity), max_owned_bytes_(max_owned_bytes), calls_(calls) {}
  ~CudaGraphCache();
  CudaGraphCache(const CudaGraphCache&) = delete;
  CudaGraphCache& operator=(const CudaGraphCache&) = delete;

  // Runs one call of the shape set `shape_key` (context, profile and input
  // dims, as the caller spells them) with `arguments`: plainly, by capturing
  // after a plain enqueue, or by replaying a graph (see above). Returns the
  // provider's status, or why a copy or a graph launch failed.
  Status run(const std::vector<int64_t>& shape_key, const std::vector<GraphArgument>& arguments,
             cudaStream_t stream, const Enqueue& enqueue, const std::function<bool()>& capturable);

  size_t num_graphs() const;
  // Launches of a captured graph so far, and the copies into and out of
  // owned graph I/O they needed (for tests and benchmarks).
  uint64_t replays() const { return replays_; }
  uint64_t copies() const { return copies_; }
  size_t owned_bytes() const { return owned_bytes_; }

 private:
  struct Graph {
    cudaGraphExec_t exec = nullptr;  // null: none
    std::vector<void*> addresses;    // what it was captured with
  };
  struct Entry {
    std::vector<int64_t> key;
    std::vector<void*> last;  // the previous call's addresses
    Graph direct;             // on the caller's addresses
    Graph owned;              // on `buffers` where set, else the caller's
    std::vector<void*> buffers;
    size_t owned_bytes = 0;
    bool cannot_capture = false;
  };
  Status run_plain(const std::vector<void*>& addresses, const Enqueue& enqueue);
  Status launch(cudaGraphExec_t exec, cudaStream_t stream);
  // Captures `enqueue` at `addresses` into `graph` (replacing it); on
  // refusal or failure marks the entry cannot_capture.
  void capture(Entry& entry, Graph& graph, const std::vector<void*>& addresses,
               cudaStream_t stream, const Enqueue& enqueue,
               const std::function<bool()>& capturable);
  // The owned path: copies in, runs (replay, or plain + capture), copies out.
  Status run_owned(Entry& entry, const std::vector<GraphArgument>& arguments, bool replay,
                   cudaStream_t stream, const Enqueue& enqueue,
                   const std::function<bool()>& capturable);
  // Gives `entry` owned buffers for every argument in `moving` (false when
  // they cannot be had within the bound or from the device).
  bool own_buffers(Entry& entry, const std::vector<GraphArgument>& arguments,
                   const std::vector<bool>& moving);
  Status copy(void* dst, const void* src, size_t bytes, cudaStream_t stream, const char* what);
  void release_owned(Entry& entry);
  void release(Entry& entry);

  size_t capacity_;
  size_t max_owned_bytes_;
  const CudaGraphCalls& calls_;
  uint64_t replays_ = 0;
  uint64_t copies_ = 0;
  size_t owned_bytes_ = 0;
  bool warned_ = false;
  bool warned_bound_ = false;
  std::vector<void*> addresses_;       // this call's, kept so a replay allocates nothing
  std::vector<void*> graph_addresses_;  // likewise, for the owned path
  std::list<Entry> entries_;           // most recently used first
};

}  // namespace tte
