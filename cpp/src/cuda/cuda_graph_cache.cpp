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
cudaError_t cuda_allocate(void** memory, size_t bytes) { return cudaMalloc(memory, bytes); }
void cuda_free(void* memory) { cudaFree(memory); }
cudaError_t cuda_copy(void* dst, const void* src, size_t bytes, cudaStream_t stream) {
  // Default: on integrated GPUs an engine address may be mapped host memory.
  return cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream);
}

}  // namespace

const CudaGraphCalls& CudaGraphCalls::cuda() {
  static const CudaGraphCalls calls{&cudaStreamSynchronize, &cuda_begin_capture,
                                    &cudaStreamEndCapture,  &cuda_instantiate,
                                    &cudaGraphLaunch,       &cuda_destroy_graph,
                                    &cuda_destroy_exec,     &cuda_allocate,
                                    &cuda_free,             &cuda_copy};
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
    count += (entry.direct.exec != nullptr ? 1 : 0) + (entry.owned.exec != nullptr ? 1 : 0);
  }
  return count;
}

void CudaGraphCache::release_owned(Entry& entry) {
  if (entry.owned.exec != nullptr) {
    calls_.destroy_exec(entry.owned.exec);
    entry.owned = Graph{};
  }
  for (void*& buffer : entry.buffers) {
    if (buffer != nullptr) {
      calls_.free(buffer);
      buffer = nullptr;
    }
  }
  owned_bytes_ -= entry.owned_bytes;
  entry.owned_bytes = 0;
}

void CudaGraphCache::release(Entry& entry) {
  if (entry.direct.exec != nullptr) {
    calls_.destroy_exec(entry.direct.exec);
    entry.direct = Graph{};
  }
  release_owned(entry);
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
  return Status::Ok();
}

Status CudaGraphCache::copy(void* dst, const void* src, size_t bytes, cudaStream_t stream,
                            const char* what) {
  const cudaError_t status = calls_.copy(dst, src, bytes, stream);
  if (status != cudaSuccess) {
    cudaGetLastError();
    return Status(TTE_ERROR_RUNTIME, std::string("copying ") + what + " a CUDA graph's own " +
                                         std::to_string(bytes) + "-byte buffer failed: " +
                                         cuda_error_text(status));
  }
  ++copies_;
  RuntimeStats& stats = RuntimeStats::instance();
  stats.record_copy(CopyKind::DeviceToDevice, bytes);
  stats.graph_io_copies.fetch_add(1, std::memory_order_relaxed);
  stats.graph_io_bytes.fetch_add(bytes, std::memory_order_relaxed);
  return Status::Ok();
}

Status CudaGraphCache::run(const std::vector<int64_t>& shape_key,
                           const std::vector<GraphArgument>& arguments, cudaStream_t stream,
                           const Enqueue& enqueue, const std::function<bool()>& capturable) {
  const size_t n = arguments.size();
  addresses_.resize(n);
  for (size_t a = 0; a < n; ++a) {
    addresses_[a] = arguments[a].address;
  }
  auto it = entries_.begin();
  while (it != entries_.end() && it->key != shape_key) {
    ++it;
  }
  if (it == entries_.end()) {
    // A new shape set runs plainly first (see the header).
    entries_.push_front(Entry{});
    entries_.front().key = shape_key;
    entries_.front().last = addresses_;
    while (entries_.size() > capacity_) {
      release(entries_.back());
      entries_.pop_back();
    }
    return run_plain(addresses_, enqueue);
  }
  entries_.splice(entries_.begin(), entries_, it);
  Entry& entry = entries_.front();
  if (entry.last.size() != n) {
    return Status(TTE_ERROR_INTERNAL, "a CUDA graph's shape set was run with " +
                                          std::to_string(n) + " arguments, earlier with " +
                                          std::to_string(entry.last.size()));
  }
  if (entry.direct.exec != nullptr && entry.direct.addresses == addresses_) {
    entry.last = addresses_;
    return launch(entry.direct.exec, stream);
  }
  const bool repeated = addresses_ == entry.last;
  if (entry.cannot_capture) {
    entry.last = addresses_;
    return run_plain(addresses_, enqueue);
  }
  if (repeated) {
    // The caller reuses its buffers: a graph on them needs no copies.
    Status status = run_plain(addresses_, enqueue);
    if (status.ok()) {
      capture(entry, entry.direct, addresses_, stream, enqueue, capturable);
    }
    return status;
  }
  // Fresh addresses: the owned graph serves them if every argument it does
  // not own is where it was at capture.
  bool fits = entry.owned.exec != nullptr;
  for (size_t a = 0; fits && a < n; ++a) {
    fits = entry.buffers[a] != nullptr || addresses_[a] == entry.owned.addresses[a];
  }
  if (fits) {
    entry.last = addresses_;
    return run_owned(entry, arguments, /*replay=*/true, stream, enqueue, capturable);
  }
  // Own what moved since the previous call, what was owned already, and
  // what moved away from the owned graph's addresses.
  std::vector<bool> moving(n, false);
  bool possible = true;
  for (size_t a = 0; a < n; ++a) {
    moving[a] = addresses_[a] != entry.last[a] ||
                (!entry.buffers.empty() && entry.buffers[a] != nullptr) ||
                (entry.owned.exec != nullptr && addresses_[a] != entry.owned.addresses[a]);
    possible = possible && (!moving[a] || arguments[a].may_move);
  }
  entry.last = addresses_;
  if (!possible || !own_buffers(entry, arguments, moving)) {
    return run_plain(addresses_, enqueue);
  }
  return run_owned(entry, arguments, /*replay=*/false, stream, enqueue, capturable);
}

bool CudaGraphCache::own_buffers(Entry& entry, const std::vector<GraphArgument>& arguments,
                                 const std::vector<bool>& moving) {
  release_owned(entry);
  size_t need = 0;
  for (size_t a = 0; a < arguments.size(); ++a) {
    need += moving[a] ? arguments[a].nbytes : 0;
  }
  if (need > max_owned_bytes_) {
    if (!warned_bound_) {
      TTE_LOG(INFO,
              "CUDA graphs: a shape set whose tensors move between calls needs %zu bytes of graph "
              "I/O buffers, over the bound of %zu; it runs without a graph (pass the same "
              "buffers on every call to replay one without copies)",
              need, max_owned_bytes_);
      warned_bound_ = true;
    }
    return false;
  }
  // The least recently used shape sets give their buffers up first.
  for (auto it = entries_.rbegin(); owned_bytes_ + need > max_owned_bytes_ && it != entries_.rend();
       ++it) {
    if (&*it != &entry) {
      release_owned(*it);
    }
  }
  entry.buffers.assign(arguments.size(), nullptr);
  for (size_t a = 0; a < arguments.size(); ++a) {
    if (!moving[a]) {
      continue;
    }
    const cudaError_t status = calls_.allocate(&entry.buffers[a], arguments[a].nbytes);
    if (status != cudaSuccess) {
      cudaGetLastError();
      entry.buffers[a] = nullptr;
      TTE_LOG(DEBUG, "CUDA graphs: cannot allocate %zu bytes of graph I/O (%s); running plainly",
              arguments[a].nbytes, cuda_error_text(status));
      release_owned(entry);
      return false;
    }
    entry.owned_bytes += arguments[a].nbytes;
    owned_bytes_ += arguments[a].nbytes;
  }
  return true;
}

Status CudaGraphCache::run_owned(Entry& entry, const std::vector<GraphArgument>& arguments,
                                 bool replay, cudaStream_t stream, const Enqueue& enqueue,
                                 const std::function<bool()>& capturable) {
  const size_t n = arguments.size();
  graph_addresses_.resize(n);
  Status status;
  for (size_t a = 0; a < n && status.ok(); ++a) {
    void* buffer = entry.buffers[a];
    graph_addresses_[a] = buffer != nullptr ? buffer : arguments[a].address;
    if (buffer != nullptr && arguments[a].is_input) {
      status = copy(buffer, arguments[a].address, arguments[a].nbytes, stream, "an input into");
    }
  }
  if (!status.ok()) {
    return status;
  }
  if (replay) {
    status = launch(entry.owned.exec, stream);
  } else {
    status = run_plain(graph_addresses_, enqueue);
    if (status.ok()) {
      capture(entry, entry.owned, graph_addresses_, stream, enqueue, capturable);
    }
  }
  for (size_t a = 0; a < n && status.ok(); ++a) {
    if (entry.buffers[a] != nullptr && !arguments[a].is_input) {
      status = copy(arguments[a].address, entry.buffers[a], arguments[a].nbytes, stream,
                    "an output out of");
    }
  }
  // Buffers of a shape set that cannot be captured stay until it is evicted:
  // this call's copies may still be in flight.
  return status;
}

void CudaGraphCache::capture(Entry& entry, Graph& target, const std::vector<void*>& addresses,
                             cudaStream_t stream, const Enqueue& enqueue,
                             const std::function<bool()>& capturable) {
  if (target.exec != nullptr) {
    calls_.destroy_exec(target.exec);
    target = Graph{};
  }
  std::string why;
  // The warm-up must have finished: trtexec synchronizes between the two.
  cudaError_t status = calls_.synchronize(stream);
  if (status != cudaSuccess) {
    why = std::string("cudaStreamSynchronize: ") + cuda_error_text(status);
  } else if (!capturable()) {
    entry.cannot_capture = true;
    RuntimeStats::instance().graph_uncapturable.fetch_add(1, std::memory_order_relaxed);
    TTE_LOG(DEBUG,
            "the engine says this enqueue cannot be captured; these shapes run without a graph");
    return;
  }
  cudaGraph_t graph = nullptr;
  if (why.empty()) {
    status = calls_.begin_capture(stream);
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
    entry.cannot_capture = true;
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
  target.exec = exec;
  target.addresses = addresses;
  RuntimeStats::instance().graph_captures.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace tte
