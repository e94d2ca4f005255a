// What the backend asks the CUDA runtime about devices and pointers. Nothing
// here touches TensorRT, so it is safe on machines without a GPU or driver.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "common/status.h"

namespace tte {

// Usable CUDA devices; 0 without a driver or GPU (the error that leaves is
// cleared). Counted once per process, like the CUDA runtime itself does.
int cuda_device_count();

// "cudaErrorNoDevice: no CUDA-capable device is detected".
const char* cuda_error_text(cudaError_t status);

// A failed CUDA call as a Status ("<what> failed: <error>"; out of memory or
// a runtime error), with the error it left cleared.
Status cuda_failure(cudaError_t status, const std::string& what);

// Makes `device` current for the guard's scope and restores the caller's
// device afterwards, so a delegate call never leaves the caller's thread on
// another GPU.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

  // cudaSuccess when `device` is current.
  cudaError_t status() const { return status_; }

 private:
  int previous_ = -1;
  bool switched_ = false;
  cudaError_t status_ = cudaSuccess;
};

// True for integrated GPUs (Jetson), whose kernels read host memory directly.
bool is_integrated_gpu(int device);

enum class PointerKind {
  kHost,          // page-locked host memory known to CUDA
  kDevice,        // cudaMalloc'd device memory
  kManaged,       // unified (managed) memory
  kUnregistered,  // ordinary pageable host memory, or CUDA is unavailable
};

struct PointerInfo {
  PointerKind kind = PointerKind::kUnregistered;
  int device = -1;  // owning device for kDevice / kManaged
};

// Classifies `ptr` with cudaPointerGetAttributes and clears the sticky error
// it leaves for pointers CUDA does not know.
PointerInfo classify_pointer(const void* ptr);

// True when a kernel on `device` may dereference `ptr` as is.
bool is_device_accessible(const PointerInfo& info, int device, bool integrated);

}  // namespace tte
