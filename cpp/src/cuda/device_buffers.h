// Memory the library stages tensors through and gives outputs: device
// buffers for host tensors of device-memory engines and device-placed program
// inputs, pinned host buffers for the reverse and for chunked copies, aligned
// host buffers for program outputs. All grow-only and owned by one delegate
// handle or one program method (so they never contend).
#pragma once

#include <cstddef>
#include <string>
#include <utility>

#include <cuda_runtime_api.h>

#include "common/function_ref.h"
#include "common/status.h"

namespace tte {

// Memory of one kind that only grows: data, capacity, moves and release are
// the same for every kind; `Kind` allocates and frees it.
template <typename Kind>
class GrowOnlyBuffer {
 public:
  GrowOnlyBuffer() = default;
  ~GrowOnlyBuffer() { release(); }
  GrowOnlyBuffer(GrowOnlyBuffer&& other) noexcept { *this = std::move(other); }
  GrowOnlyBuffer& operator=(GrowOnlyBuffer&& other) noexcept {
    if (this != &other) {
      release();
      data_ = std::exchange(other.data_, nullptr);
      capacity_ = std::exchange(other.capacity_, 0);
      device_ = other.device_;
    }
    return *this;
  }
  GrowOnlyBuffer(const GrowOnlyBuffer&) = delete;
  GrowOnlyBuffer& operator=(const GrowOnlyBuffer&) = delete;

  // Ensures capacity() >= bytes (at least one byte is allocated, so data()
  // is never NULL after a success); device memory on `device`, which must be
  // current. Old contents are not kept.
  cudaError_t reserve(size_t bytes, int device = -1) {
    if (fits(bytes, device)) {
      return cudaSuccess;
    }
    release();
    void* data = nullptr;
    const cudaError_t status = Kind::allocate(&data, bytes > 0 ? bytes : 1);
    if (status != cudaSuccess) {
      return status;
    }
    data_ = data;
    capacity_ = bytes;
    device_ = device;
    return cudaSuccess;
  }
  void* data() const { return data_; }
  size_t capacity() const { return capacity_; }
  // Whether reserve(bytes, device) would keep the memory it has.
  bool fits(size_t bytes, int device = -1) const {
    return data_ != nullptr && bytes <= capacity_ && device == device_;
  }

 private:
  void release() {
    if (data_ != nullptr) {
      Kind::free(data_, device_);
      data_ = nullptr;
      capacity_ = 0;
    }
  }
  void* data_ = nullptr;
  size_t capacity_ = 0;
  int device_ = -1;
};

// cudaMalloc'd device memory.
struct DeviceMemory {
  static cudaError_t allocate(void** data, size_t bytes);
  static void free(void* data, int device);
};
// Page-locked host memory (cudaHostAlloc): the DMA engines read and write it
// directly, so copies through it run asynchronously.
struct PinnedHostMemory {
  static cudaError_t allocate(void** data, size_t bytes);
  static void free(void* data, int device);
};
// Page-locked host memory mapped into the device's address space
// (cudaHostAllocMapped): kernels read and write it where it lies, through the
// address cudaHostGetDevicePointer gives (mapped_device_pointer). On an
// integrated GPU that is the same DRAM, so staging a host tensor costs one
// CPU copy and no DMA.
// Freed as pinned memory is (cudaFreeHost).
struct MappedHostMemory : PinnedHostMemory {
  static cudaError_t allocate(void** data, size_t bytes);
};
// Ordinary host memory, 256-byte aligned (what TensorRT asks of every tensor
// address, so host engines can take it as it is); needs no CUDA (a failure
// is reported as cudaErrorMemoryAllocation).
struct AlignedHostMemory {
  static constexpr size_t kAlignment = 256;
  static cudaError_t allocate(void** data, size_t bytes);
  static void free(void* data, int device);
};

using DeviceBuffer = GrowOnlyBuffer<DeviceMemory>;
using PinnedHostBuffer = GrowOnlyBuffer<PinnedHostMemory>;
using AlignedHostBuffer = GrowOnlyBuffer<AlignedHostMemory>;
using MappedHostBuffer = GrowOnlyBuffer<MappedHostMemory>;

// The device's address of mapped memory `host` (a MappedHostBuffer's data),
// or NULL when CUDA gives none.
void* mapped_device_pointer(void* host);

// buffer.reserve(bytes, device) with `device` made current for the call; the
// failure says how many bytes were wanted where and for `what()`, which is
// called only then. A buffer that already fits costs no CUDA call.
Status reserve_on_device(DeviceBuffer& buffer, size_t bytes, int device,
                         FunctionRef<std::string()> what);

// Device memory of owned program outputs when the caller brings no
// allocator of its own: a stream-ordered CUDA memory pool per device that
// keeps what it holds (no release at synchronization points), so runs in a
// steady state get their outputs without asking the driver. A block is
// allocated in the order of the run's stream and freed in the order of the
// legacy default stream, which follows the work of every blocking stream: a
// consumer with work on a non-blocking stream synchronizes it before it
// deletes the tensor, as with any allocator that reuses memory.
struct DeviceOutputPool {
  // `bytes` (at least one) on `device`, which must be current.
  static cudaError_t allocate(void** data, size_t bytes, int device, cudaStream_t stream);
  static void free(void* data, int device);
};

// Copies between pageable host memory and device memory through two pinned
// chunks, so the CPU's memcpy of one chunk overlaps the DMA of the other.
// (A plain cudaMemcpyAsync from pageable memory is synchronous and goes
// through the driver's own small bounce buffer.) The chunks grow with the
// copies, from kMinChunkBytes to kChunkBytes: page-locking costs time in
// proportion to the bytes, so a small tensor's first copy does not pay for
// 8 MiB of chunks.
class HostDeviceStager {
 public:
  static constexpr size_t kChunkBytes = size_t{4} << 20;
  static constexpr size_t kMinChunkBytes = size_t{64} << 10;
  // The chunk size a copy of `bytes` asks for: a power of two between the two.
  static size_t chunk_bytes_for(size_t bytes);

  HostDeviceStager() = default;
  ~HostDeviceStager();
  HostDeviceStager(const HostDeviceStager&) = delete;
  HostDeviceStager& operator=(const HostDeviceStager&) = delete;

  // Queues the copy of `bytes` from host `src` to device `dst` on `stream`
  // (on `device`, which must be current). Returns once `src` may be
  // modified; the device side completes in stream order.
  cudaError_t host_to_device(void* dst, const void* src, size_t bytes, cudaStream_t stream,
                             int device);
  // Copies `bytes` from device `src` to host `dst` after the work already on
  // `stream`; returns when the data is in `dst`.
  cudaError_t device_to_host(void* dst, const void* src, size_t bytes, cudaStream_t stream,
                             int device);

 private:
  // Chunks of at least chunk_bytes_for(bytes) on `device`; `step` is the
  // bytes each holds.
  cudaError_t prepare(int device, size_t bytes, size_t* step);
  PinnedHostBuffer chunks_[2];
  cudaEvent_t chunk_free_[2] = {nullptr, nullptr};
  int device_ = -1;
};

}  // namespace tte
