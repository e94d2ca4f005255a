#include "native/output_allocator.h"

#include <cuda_runtime_api.h>

#include <cstdint>

#include "cuda/cuda_device.h"

namespace tte::native {

OutputAllocator::~OutputAllocator() {
  if (own_ != nullptr) {
    DeviceGuard on_device(device_);
    cudaFree(own_);
    cudaGetLastError();
  }
}

void OutputAllocator::set_capacity(int64_t bytes) {
  capacity_ = bytes;
  data_ = nullptr;
  has_shape_ = false;
  shape_.clear();
  failure_.clear();
}

void* OutputAllocator::reallocateOutputAsync(char const* tensorName, void* currentMemory,
                                             uint64_t size, uint64_t alignment,
                                             cudaStream_t stream) noexcept {
  (void)stream;
  const uint64_t align = alignment == 0 ? 1 : alignment;
  if (currentMemory != nullptr && size <= static_cast<uint64_t>(capacity_) &&
      reinterpret_cast<uintptr_t>(currentMemory) % align == 0) {
    data_ = currentMemory;
    return data_;
  }
  if (own_bytes_ < size || reinterpret_cast<uintptr_t>(own_) % align != 0) {
    // The backend synchronizes its stream at the end of every call, so no
    // earlier work still uses the old block. cudaMalloc aligns to 256 bytes.
    if (own_ != nullptr) {
      cudaFree(own_);
      own_ = nullptr;
      own_bytes_ = 0;
    }
    const cudaError_t allocated = cudaMalloc(&own_, static_cast<size_t>(size));
    if (allocated != cudaSuccess) {
      cudaGetLastError();
      own_ = nullptr;
      failure_ = "could not allocate " + std::to_string(size) +
                 " bytes of device memory for output '" +
                 (tensorName != nullptr ? tensorName : "?") + "': " + cudaGetErrorString(allocated);
      data_ = nullptr;
      return nullptr;
    }
    own_bytes_ = size;
  }
  data_ = own_;
  return data_;
}

void OutputAllocator::notifyShape(char const* /*tensorName*/, nvinfer1::Dims const& dims) noexcept {
  if (dims.nbDims < 0) {
    return;
  }
  try {
    shape_.assign(dims.d, dims.d + dims.nbDims);
    has_shape_ = true;
  } catch (...) {
    has_shape_ = false;
  }
}

}  // namespace tte::native
