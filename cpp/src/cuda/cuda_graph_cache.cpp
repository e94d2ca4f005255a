#include "cuda/cuda_graph_cache.h"

#include "common/logging.h"
#include "common/runtime_stats.h"
#include "cuda/cuda_device.h"

namespace tte {
namespace {

// A real (not captured) run of the provider's enqueue.
Status run_plain(const std::function<Status()>& enqueue) {
  RuntimeStats::instance().enqueues.fetch_add(1, std::memory_order_relaxed);
  return enqueue();
}

// Thread-local mode: other threads' CUDA calls neither break this capture
// nor get caught in it.
cudaError_t cuda_begin_capture(cudaStream_t stream) {
  return cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal);
}

cudaError_t cuda_instantiate(cudaGraphExec_t* exec, cudaGraph_t graph) {
  return cudaGraphInstantiate(exec, graph, 0);
}

void cuda_destroy_graph(cudaGraph_t graph) { cudaGraphDestroy(graph); }
void cuda_destroy_exec(cudaGraphExec_t exec) { cudaGraphExecDestroy(exec); }

}  // namespace

const CudaGraphCalls& CudaGraphCalls::cuda() {
  static const CudaGraphCalls calls{&cudaStreamSynchronize, &cuda_begin_capture,
                                    &cudaStreamEndCapture,  &cuda_instantiate,
                                    &cudaGraphLaunch,       &cuda_destroy_graph,
                                    &cuda_destroy_exec};
  return calls;
}

CudaGraphCache::~CudaGraphCache() {
  for (Entry& entry : entries_) {
    if (entry.graph != nullptr) {
      calls_.destroy_exec(entry.graph);
    }
  }
  cudaGetLastError();
}

size_t CudaGraphCache::num_graphs() const {
  size_t count = 0;
  for (const Entry& entry : entries_) {
    count += entry.graph != nullptr ? 1 : 0;
  }
  return count;
}

Status CudaGraphCache::run(const std::vector<int64_t>& signature, cudaStream_t stream,
                           const std::function<Status()>& enqueue,
                           const std::function<bool()>& capturable) {
  auto it = entries_.begin();
  while (it != entries_.end() && it->signature != signature) {
    ++it;
  }
  if (it == entries_.end()) {
    entries_.push_front(Entry{signature, nullptr, false});
    while (entries_.size() > capacity_) {
      if (entries_.back().graph != nullptr) {
        calls_.destroy_exec(entries_.back().graph);
      }
      entries_.pop_back();
    }
    return run_plain(enqueue);
  }
  entries_.splice(entries_.begin(), entries_, it);
  Entry& entry = entries_.front();
  if (entry.graph == nullptr) {
    // The call's real work, and the warm-up the capture needs right before it.
    Status status = run_plain(enqueue);
    if (status.ok() && !entry.never_capture) {
      capture(entry, stream, enqueue, capturable);
    }
    return status;
  }
  const cudaError_t launched = calls_.launch(entry.graph, stream);
  if (launched != cudaSuccess) {
    cudaGetLastError();
    return Status(TTE_ERROR_RUNTIME,
                  std::string("cudaGraphLaunch failed: ") + cuda_error_text(launched));
  }
  ++replays_;
  RuntimeStats::instance().graph_replays.fetch_add(1, std::memory_order_relaxed);
  return Status::Ok();
}

void CudaGraphCache::capture(Entry& entry, cudaStream_t stream,
                             const std::function<Status()>& enqueue,
                             const std::function<bool()>& capturable) {
  std::string why;
  // The warm-up must have finished: trtexec synchronizes between the two.
  cudaError_t status = calls_.synchronize(stream);
  if (status != cudaSuccess) {
    why = std::string("cudaStreamSynchronize: ") + cuda_error_text(status);
  } else if (!capturable()) {
    entry.never_capture = true;
    TTE_LOG(DEBUG, "the engine says this enqueue cannot be captured; running it without a graph");
    return;
  }
  cudaGraph_t graph = nullptr;
  if (why.empty()) {
    status = calls_.begin_capture(stream);
    if (status != cudaSuccess) {
      why = std::string("cudaStreamBeginCapture: ") + cuda_error_text(status);
    } else {
      const Status enqueued = enqueue();
      // Capture must be ended whatever the enqueue did.
      status = calls_.end_capture(stream, &graph);
      if (!enqueued.ok()) {
        why = "the provider's enqueue failed while capturing: " + enqueued.message();
      } else if (status != cudaSuccess) {
        why = std::string("cudaStreamEndCapture: ") + cuda_error_text(status);
      }
    }
  }
  cudaGraphExec_t exec = nullptr;
  if (why.empty()) {
    status = calls_.instantiate(&exec, graph);
    if (status != cudaSuccess) {
      why = std::string("cudaGraphInstantiate: ") + cuda_error_text(status);
      exec = nullptr;
    }
  }
  if (graph != nullptr) {
    calls_.destroy_graph(graph);
  }
  if (!why.empty()) {
    // Nothing captured ran; the call's work was done by the plain enqueue.
    cudaGetLastError();
    entry.never_capture = true;
    if (!warned_) {
      TTE_LOG(WARNING, "CUDA graph capture failed (%s); these shapes run without a graph",
              why.c_str());
      warned_ = true;
    } else {
      TTE_LOG(DEBUG, "CUDA graph capture failed (%s)", why.c_str());
    }
    RuntimeStats::instance().graph_fallbacks.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  entry.graph = exec;
  RuntimeStats::instance().graph_captures.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace tte
