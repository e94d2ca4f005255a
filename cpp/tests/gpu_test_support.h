// What the GPU tests share: skipping without a CUDA device, and device
// memory freed at scope end.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>

#include <cuda_runtime_api.h>

#include "torch_tensorrt_executorch/c_api.h"

#define REQUIRE_GPU()                                                               \
  do {                                                                              \
    if (tte_cuda_device_count() == 0) GTEST_SKIP() << "needs a CUDA device (none)"; \
  } while (0)

namespace tte_test {

// cudaMalloc'd memory, freed at scope end.
class DeviceMemory {
 public:
  explicit DeviceMemory(size_t bytes) { EXPECT_EQ(cudaMalloc(&data_, bytes), cudaSuccess); }
  ~DeviceMemory() { cudaFree(data_); }
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  void* get() const { return data_; }

 private:
  void* data_ = nullptr;
};

}  // namespace tte_test
