#include "backend/scratch_arenas.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <utility>

#include "common/logging.h"
#include "cuda/cuda_device.h"
#include "cuda/device_buffers.h"

namespace tte {

namespace {

// Every block of arena memory gets a number of its own.
uint64_t next_generation() {
  static std::atomic<uint64_t> counter{0};
  return counter.fetch_add(1, std::memory_order_relaxed) + 1;
}

int64_t round_up(int64_t bytes) { return (bytes + 255) / 256 * 256; }

}  // namespace

ScratchArenas& ScratchArenas::instance() {
  // Never destroyed: delegates may outlive static destruction order.
  static ScratchArenas* arenas = new ScratchArenas();
  return *arenas;
}

void ScratchArenas::add_user() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++users_;
}

void ScratchArenas::remove_user() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (--users_ > 0) {
    return;
  }
  users_ = 0;
  evict_idle_locked(0);
}

ScratchArenas::Arena* ScratchArenas::borrow(int device, void* stream) {
  // cudaStreamPerThread is the same handle in every thread for a stream of
  // each thread's own: its arenas are per thread.
  thread_local const char per_thread_key = 0;
  const void* key = stream == static_cast<void*>(cudaStreamPerThread) ? &per_thread_key : stream;
  std::lock_guard<std::mutex> lock(mutex_);
  ++clock_;
  for (const auto& arena : arenas_) {
    if (arena->device == device && arena->key == key) {
      ++arena->busy;
      arena->last_use = clock_;
      return arena.get();
    }
  }
  if (arenas_.size() >= kMaxArenas) {
    evict_idle_locked(kMaxArenas - 1);
  }
  arenas_.push_back(std::make_unique<Arena>());
  Arena* arena = arenas_.back().get();
  arena->device = device;
  arena->stream = stream;
  arena->key = key;
  arena->busy = 1;
  arena->last_use = clock_;
  return arena;
}

void ScratchArenas::give_back(Arena* arena) {
  std::lock_guard<std::mutex> lock(mutex_);
  --arena->busy;
}

void ScratchArenas::release_stream(int device, const void* stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = arenas_.begin(); it != arenas_.end();) {
    if ((*it)->device == device && (*it)->key == stream && (*it)->busy == 0) {
      free_memory(it->get());
      it = arenas_.erase(it);
    } else {
      ++it;
    }
  }
}

void ScratchArenas::evict_idle_locked(size_t keep) {
  while (arenas_.size() > keep) {
    auto oldest = arenas_.end();
    for (auto it = arenas_.begin(); it != arenas_.end(); ++it) {
      if ((*it)->busy == 0 && (oldest == arenas_.end() || (*it)->last_use < (*oldest)->last_use)) {
        oldest = it;
      }
    }
    if (oldest == arenas_.end()) {
      return;  // all busy: kept until given back
    }
    // Idle: every borrower synchronized its stream before giving it back,
    // so no work uses the memory.
    free_memory(oldest->get());
    arenas_.erase(oldest);
  }
}

void ScratchArenas::free_memory(Arena* arena) {
  if (arena->memory == nullptr) {
    return;
  }
  if (arena->device < 0) {
    AlignedHostMemory::free(arena->memory, arena->device);
  } else {
    DeviceMemory::free(arena->memory, arena->device);
  }
  {
    std::lock_guard<std::mutex> lock(bytes_mutex_);
    total_bytes_ -= arena->bytes;
  }
  arena->memory = nullptr;
  arena->bytes = 0;
  arena->generation = 0;
}

Status ScratchArenas::reserve(Arena* arena, int64_t bytes) {
  if (bytes <= arena->bytes) {
    return Status::Ok();
  }
  const int64_t size = round_up(bytes);
  if (arena->memory != nullptr && arena->device >= 0) {
    // Engines enqueued earlier on this stream may still use the old memory.
    const cudaError_t synced = cudaStreamSynchronize(static_cast<cudaStream_t>(arena->stream));
    if (synced != cudaSuccess) {
      return cuda_failure(synced, "synchronizing the stream before growing its scratch arena");
    }
  }
  // Freed before the new one is allocated: the peak stays at the new size.
  free_memory(arena);
  void* memory = nullptr;
  if (arena->device < 0) {
    if (AlignedHostMemory::allocate(&memory, static_cast<size_t>(size)) != cudaSuccess) {
      return Status(TTE_ERROR_HOST_OUT_OF_MEMORY,
                    "could not allocate " + std::to_string(size) + " bytes of host scratch memory");
    }
  } else {
    // cudaMalloc's alignment (256 bytes and more) is what TensorRT asks of
    // setDeviceMemoryV2's memory (NvInferRuntime.h, IExecutionContext::
    // setDeviceMemoryV2: "The memory must be aligned with CUDA memory
    // alignment property").
    const cudaError_t allocated = DeviceMemory::allocate(&memory, static_cast<size_t>(size));
    if (allocated != cudaSuccess) {
      return cuda_failure(allocated,
                          "allocating " + std::to_string(size) +
                              " bytes of scratch memory on cuda:" + std::to_string(arena->device));
    }
  }
  arena->memory = memory;
  arena->bytes = size;
  arena->generation = next_generation();
  {
    std::lock_guard<std::mutex> lock(bytes_mutex_);
    total_bytes_ += size;
    peak_bytes_ = std::max(peak_bytes_, total_bytes_);
  }
  TTE_LOG(DEBUG, "scratch arena of %s, stream %p: %lld bytes",
          arena->device < 0 ? "the host" : ("cuda:" + std::to_string(arena->device)).c_str(),
          arena->stream, static_cast<long long>(size));
  return Status::Ok();
}

size_t ScratchArenas::arena_count() {
  std::lock_guard<std::mutex> lock(mutex_);
  return arenas_.size();
}

int64_t ScratchArenas::total_bytes() {
  std::lock_guard<std::mutex> lock(bytes_mutex_);
  return total_bytes_;
}

int64_t ScratchArenas::peak_bytes() {
  std::lock_guard<std::mutex> lock(bytes_mutex_);
  return peak_bytes_;
}

void ScratchArenas::reset_peak() {
  std::lock_guard<std::mutex> lock(bytes_mutex_);
  peak_bytes_ = total_bytes_;
}

namespace {

struct ThreadStreams {
  std::vector<std::pair<int, cudaStream_t>> streams;
  ~ThreadStreams() {
    for (const auto& [device, stream] : streams) {
      DeviceGuard guard(device);
      cudaStreamSynchronize(stream);
      // The thread is gone: nothing borrows its stream's arenas again, and a
      // later stream may get the same handle.
      ScratchArenas::instance().release_stream(device, stream);
      cudaStreamDestroy(stream);
      cudaGetLastError();
    }
  }
};

}  // namespace

Status thread_stream(int device, void** stream) {
  thread_local ThreadStreams streams;
  for (const auto& [d, s] : streams.streams) {
    if (d == device) {
      *stream = s;
      return Status::Ok();
    }
  }
  cudaStream_t created = nullptr;
  // Blocking, as a delegate's own stream (tensorrt_delegate.cpp, own_stream).
  const cudaError_t status = cudaStreamCreateWithFlags(&created, cudaStreamDefault);
  if (status != cudaSuccess) {
    return cuda_failure(status, "creating this thread's CUDA stream");
  }
  streams.streams.emplace_back(device, created);
  *stream = created;
  return Status::Ok();
}

}  // namespace tte
