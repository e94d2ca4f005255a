#include "cuda/cuda_graph_cache.h"

#include "cuda/cuda_device.h"
#include "common/logging.h"
#include "common/runtime_stats.h"

namespace tte {
namespace {

// A real (not captured) run of the provider's enqueue.
Status run_plain(const std::function<Status()>& enqueue) {
  RuntimeStats::instance().enqueues.fetch_add(1, std::memory_order_relaxed);
  return enqueue();
}

Status launch_failed(cudaError_t status) {
  cudaGetLastError();
  return Status(TTE_ERROR_RUNTIME, std::string("cudaGraphLaunch failed: ") + cuda_error_text(status));
}

}  // namespace

CudaGraphCache::~CudaGraphCache() {
  for (Entry& entry : entries_) {
    if (entry.graph != nullptr) {
      cudaGraphExecDestroy(entry.graph);
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
                           const std::function<Status()>& enqueue) {
  if (!enabled_) {
    return run_plain(enqueue);
  }
  auto it = entries_.begin();
  while (it != entries_.end() && it->signature != signature) {
    ++it;
  }
  if (it == entries_.end()) {
    entries_.push_front(Entry{signature, nullptr});
    while (entries_.size() > capacity_) {
      if (entries_.back().graph != nullptr) {
        cudaGraphExecDestroy(entries_.back().graph);
      }
      entries_.pop_back();
    }
    return run_plain(enqueue);
  }
  entries_.splice(entries_.begin(), entries_, it);
  Entry& entry = entries_.front();
  if (entry.graph == nullptr) {
    return capture_and_launch(entry, stream, enqueue);
  }
  cudaError_t status = cudaGraphLaunch(entry.graph, stream);
  if (status != cudaSuccess) {
    return launch_failed(status);
  }
  ++replays_;
  RuntimeStats::instance().graph_replays.fetch_add(1, std::memory_order_relaxed);
  return Status::Ok();
}

Status CudaGraphCache::capture_and_launch(Entry& entry, cudaStream_t stream,
                                          const std::function<Status()>& enqueue) {
  // Thread-local mode: other threads' CUDA calls neither break this capture
  // nor get caught in it.
  cudaError_t status = cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal);
  std::string why;
  cudaGraph_t graph = nullptr;
  if (status != cudaSuccess) {
    why = std::string("cudaStreamBeginCapture: ") + cuda_error_text(status);
  } else {
    const Status enqueued = enqueue();
    // Capture must be ended whatever the enqueue did.
    status = cudaStreamEndCapture(stream, &graph);
    if (!enqueued.ok()) {
      why = "the provider's enqueue failed while capturing: " + enqueued.message();
    } else if (status != cudaSuccess) {
      why = std::string("cudaStreamEndCapture: ") + cuda_error_text(status);
    }
  }
  cudaGraphExec_t exec = nullptr;
  if (why.empty()) {
    status = cudaGraphInstantiate(&exec, graph, 0);
    if (status != cudaSuccess) {
      why = std::string("cudaGraphInstantiate: ") + cuda_error_text(status);
      exec = nullptr;
    }
  }
  if (graph != nullptr) {
    cudaGraphDestroy(graph);
  }
  if (!why.empty()) {
    // Nothing captured ran: do the work plainly, and never try again.
    cudaGetLastError();
    enabled_ = false;
    TTE_LOG(WARNING, "CUDA graph capture failed (%s); running without CUDA graphs", why.c_str());
    RuntimeStats::instance().graph_fallbacks.fetch_add(1, std::memory_order_relaxed);
    return run_plain(enqueue);
  }
  entry.graph = exec;
  RuntimeStats::instance().graph_captures.fetch_add(1, std::memory_order_relaxed);
  status = cudaGraphLaunch(exec, stream);
  if (status != cudaSuccess) {
    return launch_failed(status);
  }
  ++replays_;
  RuntimeStats::instance().graph_replays.fetch_add(1, std::memory_order_relaxed);
  return Status::Ok();
}

}  // namespace tte
