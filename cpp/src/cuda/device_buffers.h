// Memory the library stages tensors through and gives outputs: device
// buffers for host tensors of device-memory engines and device-placed program
// inputs, pinned host buffers for the reverse and for chunked copies, aligned
// host buffers for program outputs. All grow-only and owned by one delegate
// handle or one program method (so they never contend).
#pragma once

#include <cstddef>
#include <string>

#include <cuda_runtime_api.h>

#include "common/status.h"

namespace tte {

// cudaMalloc'd memory that only grows.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  // Ensures capacity() >= bytes on `device` (which must be current). Old
  // contents are not kept.
  cudaError_t reserve(size_t bytes, int device);
  void* data() const { return data_; }
  size_t capacity() const { return capacity_; }

 private:
  void release();
  void* data_ = nullptr;
  size_t capacity_ = 0;
  int device_ = -1;
};

// buffer.reserve(bytes, device) with `device` made current for the call; the
// failure says how many bytes were wanted where and for `what`.
Status reserve_on_device(DeviceBuffer& buffer, size_t bytes, int device, const std::string& what);

// Ordinary host memory, 128-byte aligned, that only grows; needs no CUDA.
class AlignedHostBuffer {
 public:
  static constexpr size_t kAlignment = 128;

  AlignedHostBuffer() = default;
  ~AlignedHostBuffer();
  AlignedHostBuffer(AlignedHostBuffer&& other) noexcept;
  AlignedHostBuffer& operator=(AlignedHostBuffer&& other) noexcept;
  AlignedHostBuffer(const AlignedHostBuffer&) = delete;
  AlignedHostBuffer& operator=(const AlignedHostBuffer&) = delete;

  // False when the memory cannot be had. Old contents are not kept.
  bool reserve(size_t bytes);
  void* data() const { return data_; }
  size_t capacity() const { return capacity_; }

 private:
  void release();
  void* data_ = nullptr;
  size_t capacity_ = 0;
};

// Page-locked host memory (cudaHostAlloc) that only grows: the DMA engines
// read and write it directly, so copies through it run asynchronously.
class PinnedHostBuffer {
 public:
  PinnedHostBuffer() = default;
  ~PinnedHostBuffer();
  PinnedHostBuffer(PinnedHostBuffer&& other) noexcept;
  PinnedHostBuffer& operator=(PinnedHostBuffer&& other) noexcept;
  PinnedHostBuffer(const PinnedHostBuffer&) = delete;
  PinnedHostBuffer& operator=(const PinnedHostBuffer&) = delete;

  cudaError_t reserve(size_t bytes);
  void* data() const { return data_; }
  size_t capacity() const { return capacity_; }

 private:
  void release();
  void* data_ = nullptr;
  size_t capacity_ = 0;
};

// Copies between pageable host memory and device memory through two pinned
// chunks, so the CPU's memcpy of one chunk overlaps the DMA of the other.
// (A plain cudaMemcpyAsync from pageable memory is synchronous and goes
// through the driver's own small bounce buffer.)
class HostDeviceStager {
 public:
  static constexpr size_t kChunkBytes = size_t{4} << 20;

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
  cudaError_t prepare(int device);
  PinnedHostBuffer chunks_[2];
  cudaEvent_t chunk_free_[2] = {nullptr, nullptr};
  int device_ = -1;
};

}  // namespace tte
