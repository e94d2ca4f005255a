#include "cuda/device_buffers.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <utility>
#include <vector>

#include "cuda/cuda_device.h"

namespace tte {

cudaError_t DeviceMemory::allocate(void** data, size_t bytes) {
  const cudaError_t status = cudaMalloc(data, bytes);
  if (status != cudaSuccess) {
    cudaGetLastError();
  }
  return status;
}

void DeviceMemory::free(void* data, int device) {
  DeviceGuard guard(device);
  // Errors are ignored: at process exit the CUDA runtime may be gone.
  cudaFree(data);
  cudaGetLastError();
}

namespace {

// cudaHostAlloc with `flags`, the sticky error cleared on failure.
cudaError_t allocate_page_locked(void** data, size_t bytes, unsigned int flags) {
  const cudaError_t status = cudaHostAlloc(data, bytes, flags);
  if (status != cudaSuccess) {
    cudaGetLastError();
  }
  return status;
}

}  // namespace

cudaError_t PinnedHostMemory::allocate(void** data, size_t bytes) {
  // Portable: usable from any device the handle might be moved to.
  return allocate_page_locked(data, bytes, cudaHostAllocPortable);
}

void PinnedHostMemory::free(void* data, int /*device*/) {
  cudaFreeHost(data);
  cudaGetLastError();
}

cudaError_t MappedHostMemory::allocate(void** data, size_t bytes) {
  // Portable as the pinned buffers are; mapped so that kernels can use it.
  // Page-aligned, above TensorRT's 256-byte rule for tensor addresses.
  return allocate_page_locked(data, bytes, cudaHostAllocPortable | cudaHostAllocMapped);
}

void* mapped_device_pointer(void* host) {
  // cuda_runtime_api.h, cudaHostGetDevicePointer: "Passes back the device
  // pointer corresponding to the mapped, pinned host buffer allocated by
  // cudaHostAlloc()"; it "may or may not match the original host pointer",
  // so kernels get this one; flags "must be set to 0".
  void* device = nullptr;
  if (cudaHostGetDevicePointer(&device, host, 0) != cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  return device;
}

cudaError_t AlignedHostMemory::allocate(void** data, size_t bytes) {
  return posix_memalign(data, kAlignment, bytes) == 0 ? cudaSuccess : cudaErrorMemoryAllocation;
}

void AlignedHostMemory::free(void* data, int /*device*/) { std::free(data); }

namespace {

// One pool per device, made on first use and kept for the process (the
// driver reclaims it at exit).
cudaError_t output_pool(int device, cudaMemPool_t* out) {
  static std::mutex mutex;
  static std::vector<cudaMemPool_t> pools;
  std::lock_guard<std::mutex> lock(mutex);
  if (device < 0) {
    return cudaErrorInvalidDevice;
  }
  if (static_cast<size_t>(device) >= pools.size()) {
    pools.resize(static_cast<size_t>(device) + 1, nullptr);
  }
  if (pools[device] == nullptr) {
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.handleTypes = cudaMemHandleTypeNone;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = device;
    cudaMemPool_t pool = nullptr;
    cudaError_t status = cudaMemPoolCreate(&pool, &props);
    if (status != cudaSuccess) {
      cudaGetLastError();
      return status;
    }
    uint64_t keep_everything = UINT64_MAX;
    cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep_everything);
    cudaGetLastError();
    pools[device] = pool;
  }
  *out = pools[device];
  return cudaSuccess;
}

}  // namespace

cudaError_t DeviceOutputPool::allocate(void** data, size_t bytes, int device, cudaStream_t stream) {
  cudaMemPool_t pool = nullptr;
  cudaError_t status = output_pool(device, &pool);
  if (status == cudaSuccess) {
    status = cudaMallocFromPoolAsync(data, bytes > 0 ? bytes : 1, pool, stream);
  }
  if (status != cudaSuccess) {
    cudaGetLastError();
  }
  return status;
}

void DeviceOutputPool::free(void* data, int device) {
  DeviceGuard guard(device);
  // Errors are ignored: at process exit the CUDA runtime may be gone.
  cudaFreeAsync(data, nullptr);
  cudaGetLastError();
}

Status reserve_on_device(DeviceBuffer& buffer, size_t bytes, int device,
                         FunctionRef<std::string()> what) {
  if (buffer.fits(bytes, device)) {
    return Status::Ok();
  }
  if (cuda_device_count() == 0) {
    return Status(TTE_ERROR_NO_DEVICE, what() + " lives on cuda:" + std::to_string(device) +
                                           " but this process sees no CUDA device (" +
                                           cuda_unavailable_reason() + ")");
  }
  DeviceGuard guard(device);
  cudaError_t error = guard.status();
  if (error == cudaSuccess) {
    error = buffer.reserve(bytes, device);
  }
  if (error != cudaSuccess) {
    return Status(TTE_ERROR_OUT_OF_MEMORY, "cannot allocate " + std::to_string(bytes) +
                                               " bytes on cuda:" + std::to_string(device) +
                                               " for " + what() + " (" + cuda_error_text(error) +
                                               ")");
  }
  return Status::Ok();
}

HostDeviceStager::~HostDeviceStager() {
  for (cudaEvent_t& event : chunk_free_) {
    if (event != nullptr) {
      // A pinned chunk must not be freed while a DMA still reads it.
      cudaEventSynchronize(event);
      cudaEventDestroy(event);
      event = nullptr;
    }
  }
  cudaGetLastError();
}

size_t HostDeviceStager::chunk_bytes_for(size_t bytes) {
  size_t chunk = kMinChunkBytes;
  while (chunk < bytes && chunk < kChunkBytes) {
    chunk *= 2;
  }
  return chunk;
}

cudaError_t HostDeviceStager::prepare(int device, size_t bytes, size_t* step) {
  const size_t wanted = chunk_bytes_for(bytes);
  if (device_ != device || chunks_[0].capacity() < wanted) {
    // A chunk is replaced only after the DMA that last used it is done.
    for (cudaEvent_t& event : chunk_free_) {
      if (event != nullptr) {
        cudaEventSynchronize(event);
        cudaEventDestroy(event);
        event = nullptr;
      }
    }
    device_ = device;
  }
  for (int i = 0; i < 2; ++i) {
    cudaError_t status = chunks_[i].reserve(std::max(wanted, chunks_[i].capacity()));
    if (status != cudaSuccess) {
      return status;
    }
    if (chunk_free_[i] == nullptr) {
      status = cudaEventCreateWithFlags(&chunk_free_[i], cudaEventDisableTiming);
      if (status != cudaSuccess) {
        cudaGetLastError();
        return status;
      }
    }
  }
  *step = std::min(chunks_[0].capacity(), chunks_[1].capacity());
  return cudaSuccess;
}

cudaError_t HostDeviceStager::host_to_device(void* dst, const void* src, size_t bytes,
                                             cudaStream_t stream, int device) {
  if (bytes == 0) {
    return cudaSuccess;
  }
  size_t step = 0;
  cudaError_t status = prepare(device, bytes, &step);
  if (status != cudaSuccess) {
    return status;
  }
  auto* out = static_cast<char*>(dst);
  const auto* in = static_cast<const char*>(src);
  for (size_t offset = 0, chunk = 0; offset < bytes; offset += step, chunk ^= 1) {
    const size_t n = std::min(step, bytes - offset);
    // Wait until the DMA that last read this chunk (two chunks ago, or an
    // earlier tensor) has finished before overwriting it.
    status = cudaEventSynchronize(chunk_free_[chunk]);
    if (status == cudaSuccess) {
      std::memcpy(chunks_[chunk].data(), in + offset, n);
      status =
          cudaMemcpyAsync(out + offset, chunks_[chunk].data(), n, cudaMemcpyHostToDevice, stream);
    }
    if (status == cudaSuccess) {
      status = cudaEventRecord(chunk_free_[chunk], stream);
    }
    if (status != cudaSuccess) {
      cudaGetLastError();
      return status;
    }
  }
  return cudaSuccess;
}

cudaError_t HostDeviceStager::device_to_host(void* dst, const void* src, size_t bytes,
                                             cudaStream_t stream, int device) {
  if (bytes == 0) {
    return cudaSuccess;
  }
  size_t step = 0;
  cudaError_t status = prepare(device, bytes, &step);
  if (status != cudaSuccess) {
    return status;
  }
  auto* out = static_cast<char*>(dst);
  const auto* in = static_cast<const char*>(src);
  const size_t num_chunks = (bytes + step - 1) / step;
  auto issue = [&](size_t index) {
    const size_t offset = index * step;
    const size_t n = std::min(step, bytes - offset);
    const size_t chunk = index % 2;
    cudaError_t s =
        cudaMemcpyAsync(chunks_[chunk].data(), in + offset, n, cudaMemcpyDeviceToHost, stream);
    return s == cudaSuccess ? cudaEventRecord(chunk_free_[chunk], stream) : s;
  };
  status = issue(0);
  for (size_t index = 0; status == cudaSuccess && index < num_chunks; ++index) {
    // Keep the next chunk's DMA running while this one is copied out.
    if (index + 1 < num_chunks) {
      status = issue(index + 1);
      if (status != cudaSuccess) {
        break;
      }
    }
    const size_t chunk = index % 2;
    status = cudaEventSynchronize(chunk_free_[chunk]);
    if (status == cudaSuccess) {
      const size_t offset = index * step;
      std::memcpy(out + offset, chunks_[chunk].data(), std::min(step, bytes - offset));
    }
  }
  if (status != cudaSuccess) {
    cudaGetLastError();
  }
  return status;
}

}  // namespace tte
