#include "backend/scratch_arenas.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <iterator>
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
  // No delegate is left to run on the pooled streams: none is in a call.
  for (const IdleStream& idle : idle_streams_) {
    destroy_stream_locked(idle.device, idle.stream);
  }
  idle_streams_.clear();
  evict_idle_locked(0);
}

ScratchArenas::Arena* ScratchArenas::borrow(int device, void* stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++clock_;
  for (const auto& arena : arenas_) {
    if (arena->device == device && arena->stream == stream) {
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
  arena->busy = 1;
  arena->last_use = clock_;
  return arena;
}

void ScratchArenas::give_back(Arena* arena) {
  std::lock_guard<std::mutex> lock(mutex_);
  --arena->busy;
}

void ScratchArenas::release_stream_locked(int device, const void* stream) {
  for (auto it = arenas_.begin(); it != arenas_.end();) {
    if ((*it)->device == device && (*it)->stream == stream && (*it)->busy == 0) {
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

Status ScratchArenas::take_stream(int device, void** stream) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    // The most recently returned first: its arena is the warm one.
    for (auto it = idle_streams_.rbegin(); it != idle_streams_.rend(); ++it) {
      if (it->device == device) {
        *stream = it->stream;
        idle_streams_.erase(std::next(it).base());
        return Status::Ok();
      }
    }
  }
  cudaStream_t created = nullptr;
  // Blocking, as a delegate's own stream (tensorrt_delegate.cpp, own_stream).
  const cudaError_t status = cudaStreamCreateWithFlags(&created, cudaStreamDefault);
  if (status != cudaSuccess) {
    return cuda_failure(status, "creating a CUDA stream for the call");
  }
  *stream = created;
  return Status::Ok();
}

void ScratchArenas::return_stream(int device, void* stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (users_ == 0) {
    destroy_stream_locked(device, stream);
    return;
  }
  idle_streams_.push_back(IdleStream{device, stream});
  size_t same_device = 0;
  for (const IdleStream& idle : idle_streams_) {
    same_device += idle.device == device ? 1 : 0;
  }
  if (same_device <= kMaxArenas) {
    return;
  }
  // The least recently returned one of the device goes, with its arenas.
  for (auto it = idle_streams_.begin(); it != idle_streams_.end(); ++it) {
    if (it->device == device) {
      destroy_stream_locked(it->device, it->stream);
      idle_streams_.erase(it);
      return;
    }
  }
}

size_t ScratchArenas::idle_stream_count() {
  std::lock_guard<std::mutex> lock(mutex_);
  return idle_streams_.size();
}

void ScratchArenas::destroy_stream_locked(int device, void* stream) {
  DeviceGuard guard(device);
  // Idle: the call that had it synchronized it before giving it back; a
  // later stream may get the same handle, so its arenas go now.
  cudaStreamSynchronize(static_cast<cudaStream_t>(stream));
  release_stream_locked(device, stream);
  cudaStreamDestroy(static_cast<cudaStream_t>(stream));
  cudaGetLastError();
}

namespace {

void give_back_call_stream(int device, void* stream) {
  ScratchArenas::instance().return_stream(device, stream);
}

}  // namespace

Status call_stream(CallContext& call, int device, void** stream) {
  if (void* borrowed = call.streams.find(device)) {
    *stream = borrowed;
    return Status::Ok();
  }
  Status status = ScratchArenas::instance().take_stream(device, stream);
  if (status.ok()) {
    call.streams.keep(device, *stream, &give_back_call_stream);
  }
  return status;
}

}  // namespace tte
