#include "cuda/cuda_graph_cache.h"

#include <string>

#include "common/logging.h"
#include "common/runtime_stats.h"
#include "cuda/cuda_device.h"

namespace tte {
namespace {

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

// "Updates ... take effect the next time the graph is launched": the
// runtime's guide on updating instantiated graphs; launches already queued
// keep what they had. Every call of the delegate ends with a synchronize
// anyway, so none is in flight here.
cudaError_t cuda_update(cudaGraphExec_t exec, cudaGraph_t graph) {
  cudaGraphExecUpdateResultInfo info{};
  return cudaGraphExecUpdate(exec, graph, &info);
}

}  // namespace

const CudaGraphCalls& CudaGraphCalls::cuda() {
  static const CudaGraphCalls calls{
      &cudaStreamSynchronize, &cuda_begin_capture, &cudaStreamEndCapture, &cuda_instantiate,
      &cudaGraphLaunch,       &cuda_destroy_graph, &cuda_destroy_exec,    &cuda_update};
  return calls;
}

CudaGraphCache::~CudaGraphCache() {
  for (Entry& entry : entries_) {
    release(entry);
  }
  cudaGetLastError();
}

size_t CudaGraphCache::num_graphs() const {
  size_t count = 0;
  for (const Entry& entry : entries_) {
    count += entry.exec != nullptr ? 1 : 0;
  }
  return count;
}

void CudaGraphCache::release(Entry& entry) {
  if (entry.exec != nullptr) {
    calls_.destroy_exec(entry.exec);
    entry.exec = nullptr;
    entry.addresses.clear();
  }
}

Status CudaGraphCache::run_plain(const std::vector<void*>& addresses, const Enqueue& enqueue) {
  RuntimeStats::instance().enqueues.fetch_add(1, std::memory_order_relaxed);
  return enqueue(addresses);
}

Status CudaGraphCache::launch(cudaGraphExec_t exec, cudaStream_t stream) {
  const cudaError_t launched = calls_.launch(exec, stream);
  if (launched != cudaSuccess) {
    cudaGetLastError();
    return Status(TTE_ERROR_RUNTIME,
                  std::string("cudaGraphLaunch failed: ") + cuda_error_text(launched));
  }
  ++replays_;
  RuntimeStats::instance().graph_replays.fetch_add(1, std::memory_order_relaxed);
  last_exec_ = exec;
  last_stream_ = stream;
  return Status::Ok();
}

Status CudaGraphCache::launch_again() {
  if (last_exec_ == nullptr) {
    return Status(TTE_ERROR_INVALID_STATE, "no CUDA graph was launched by the last call");
  }
  return launch(last_exec_, last_stream_);
}

Status CudaGraphCache::run(const std::vector<int64_t>& shape_key,
                           const std::vector<void*>& addresses, cudaStream_t stream,
                           const Enqueue& enqueue, const Capturable& capturable) {
  last_exec_ = nullptr;  // set again by this call's launch, if it makes one
  auto it = entries_.begin();
  while (it != entries_.end() && it->key != shape_key) {
    ++it;
  }
  if (it == entries_.end()) {
    // A new shape set runs plainly first (see the header).
    entries_.push_front(Entry{});
    entries_.front().key = shape_key;
    while (entries_.size() > capacity_) {
      release(entries_.back());
      entries_.pop_back();
    }
    return run_plain(addresses, enqueue);
  }
  entries_.splice(entries_.begin(), entries_, it);
  Entry& entry = entries_.front();
  if (entry.cannot_capture) {
    return run_plain(addresses, enqueue);
  }
  if (entry.exec == nullptr) {
    // The shape set's warm-up ran: a plain enqueue on this call's addresses,
    // then the first capture on the same ones.
    Status status = run_plain(addresses, enqueue);
    if (status.ok()) {
      entry.addresses = addresses;
      capture_first(entry, stream, enqueue, capturable);
    }
    return status;
  }
  if (entry.addresses == addresses) {
    return launch(entry.exec, stream);
  }
  return run_moved(entry, addresses, stream, enqueue, capturable);
}

void CudaGraphCache::give_up(Entry& entry, const std::string& why) {
  // Nothing captured ran; the call's work is done (or still to do) plainly.
  cudaGetLastError();
  entry.cannot_capture = true;
  release(entry);
  if (!warned_) {
    TTE_LOG(WARNING, "CUDA graph capture failed (%s); these shapes run without a graph",
            why.c_str());
    warned_ = true;
  } else {
    TTE_LOG(DEBUG, "CUDA graph capture failed (%s)", why.c_str());
  }
  RuntimeStats::instance().graph_fallbacks.fetch_add(1, std::memory_order_relaxed);
}

cudaGraph_t CudaGraphCache::capture(Entry& entry, const std::vector<void*>& addresses,
                                    cudaStream_t stream, const Enqueue& enqueue,
                                    const Capturable& capturable) {
  if (!capturable()) {
    entry.cannot_capture = true;
    release(entry);
    RuntimeStats::instance().graph_uncapturable.fetch_add(1, std::memory_order_relaxed);
    TTE_LOG(DEBUG,
            "the engine says this enqueue cannot be captured; these shapes run without a graph");
    return nullptr;
  }
  std::string why;
  cudaGraph_t graph = nullptr;
  cudaError_t status = calls_.begin_capture(stream);
  if (status != cudaSuccess) {
    why = std::string("cudaStreamBeginCapture: ") + cuda_error_text(status);
  } else {
    const Status enqueued = enqueue(addresses);
    // Capture must be ended whatever the enqueue did.
    status = calls_.end_capture(stream, &graph);
    if (!enqueued.ok()) {
      why = "the provider's enqueue failed while capturing: " + enqueued.message();
    } else if (status != cudaSuccess) {
      why = std::string("cudaStreamEndCapture: ") + cuda_error_text(status);
    }
  }
  if (!why.empty()) {
    if (graph != nullptr) {
      calls_.destroy_graph(graph);
    }
    give_up(entry, why);
    return nullptr;
  }
  return graph;
}

void CudaGraphCache::capture_first(Entry& entry, cudaStream_t stream, const Enqueue& enqueue,
                                   const Capturable& capturable) {
  // The warm-up must have finished: trtexec synchronizes between the two.
  const cudaError_t synced = calls_.synchronize(stream);
  if (synced != cudaSuccess) {
    give_up(entry, std::string("cudaStreamSynchronize: ") + cuda_error_text(synced));
    return;
  }
  cudaGraph_t graph = capture(entry, entry.addresses, stream, enqueue, capturable);
  if (graph != nullptr) {
    instantiate(entry, graph);
  }
}

bool CudaGraphCache::instantiate(Entry& entry, cudaGraph_t graph) {
  cudaGraphExec_t exec = nullptr;
  const cudaError_t instantiated = calls_.instantiate(&exec, graph);
  calls_.destroy_graph(graph);
  if (instantiated != cudaSuccess) {
    give_up(entry, std::string("cudaGraphInstantiate: ") + cuda_error_text(instantiated));
    return false;
  }
  if (entry.exec != nullptr) {
    calls_.destroy_exec(entry.exec);
  }
  entry.exec = exec;
  RuntimeStats::instance().graph_captures.fetch_add(1, std::memory_order_relaxed);
  return true;
}

Status CudaGraphCache::run_moved(Entry& entry, const std::vector<void*>& addresses,
                                 cudaStream_t stream, const Enqueue& enqueue,
                                 const Capturable& capturable) {
  cudaGraph_t graph = capture(entry, addresses, stream, enqueue, capturable);
  if (graph == nullptr) {
    return run_plain(addresses, enqueue);
  }
  if (calls_.update(entry.exec, graph) != cudaSuccess) {
    // Refused (the capture's work differs, not only its parameters): the
    // new capture replaces the graph.
    cudaGetLastError();
    if (!instantiate(entry, graph)) {
      return run_plain(addresses, enqueue);
    }
    entry.addresses = addresses;
    return launch(entry.exec, stream);
  }
  ++updates_;
  RuntimeStats::instance().graph_updates.fetch_add(1, std::memory_order_relaxed);
  entry.addresses = addresses;
  // The update copied the capture's node parameters into the executable
  // graph, which keeps no reference to it: the capture is destroyed after
  // the launch, while the device runs the graph. The delegate waits for the
  // device next, so the destroy's host time (about 0.3 us on an H100,
  // bench/cuda_call_counts.py) no longer adds to the call's.
  const Status launched = launch(entry.exec, stream);
  calls_.destroy_graph(graph);
  return launched;
}

}  // namespace tte
