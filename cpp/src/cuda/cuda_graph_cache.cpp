#include "cuda/cuda_graph_cache.h"

#include "cuda/cuda_device.h"
#include "common/logging.h"
#include "common/runtime_stats.h"

namespace tte {
namespace {

// A real (not captured) run of the provider's enqueue.
TteStatus run_plain(const std::function<TteStatus(TteError*)>& enqueue, TteError* error) {
  RuntimeStats::instance().enqueues.fetch_add(1, std::memory_order_relaxed);
  return enqueue(error);
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

TteStatus CudaGraphCache::run(const std::vector<int64_t>& signature, cudaStream_t stream,
                              const std::function<TteStatus(TteError*)>& enqueue,
                              TteError* error) {
  if (!enabled_) {
    return run_plain(enqueue, error);
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
    return run_plain(enqueue, error);
  }
  entries_.splice(entries_.begin(), entries_, it);
  Entry& entry = entries_.front();
  if (entry.graph == nullptr) {
    return capture_and_launch(entry, stream, enqueue, error);
  }
  cudaError_t status = cudaGraphLaunch(entry.graph, stream);
  if (status != cudaSuccess) {
    cudaGetLastError();
    fill_error(error, TTE_ERROR_RUNTIME,
               std::string("cudaGraphLaunch failed: ") + cuda_error_text(status));
    return TTE_ERROR_RUNTIME;
  }
  ++replays_;
  RuntimeStats::instance().graph_replays.fetch_add(1, std::memory_order_relaxed);
  return TTE_OK;
}

TteStatus CudaGraphCache::capture_and_launch(Entry& entry, cudaStream_t stream,
                                             const std::function<TteStatus(TteError*)>& enqueue,
                                             TteError* error) {
  // Thread-local mode: other threads' CUDA calls neither break this capture
  // nor get caught in it.
  cudaError_t status = cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal);
  std::string why;
  cudaGraph_t graph = nullptr;
  if (status != cudaSuccess) {
    why = std::string("cudaStreamBeginCapture: ") + cuda_error_text(status);
  } else {
    TteError capture_error{};
    TteStatus enqueued = enqueue(&capture_error);
    // Capture must be ended whatever the enqueue did.
    status = cudaStreamEndCapture(stream, &graph);
    if (enqueued != TTE_OK) {
      why = std::string("the provider's enqueue failed while capturing: ") + capture_error.message;
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
    return run_plain(enqueue, error);
  }
  entry.graph = exec;
  RuntimeStats::instance().graph_captures.fetch_add(1, std::memory_order_relaxed);
  status = cudaGraphLaunch(exec, stream);
  if (status != cudaSuccess) {
    cudaGetLastError();
    fill_error(error, TTE_ERROR_RUNTIME,
               std::string("cudaGraphLaunch failed: ") + cuda_error_text(status));
    return TTE_ERROR_RUNTIME;
  }
  ++replays_;
  RuntimeStats::instance().graph_replays.fetch_add(1, std::memory_order_relaxed);
  return TTE_OK;
}

}  // namespace tte
