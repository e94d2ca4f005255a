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

// Why cuda_device_count() is 0, in one sentence for people ("" when it is
// not): no driver, a driver too old for the CUDA runtime this library was
// built with (a CUDA 13 build on a JetPack 6 / CUDA 12 driver, say), or no
// GPU. Asked with cuda_device_count, once per process.
const std::string& cuda_unavailable_reason();

// The sentence above from what the CUDA runtime answered: the error of
// cudaGetDeviceCount, cudaDriverGetVersion's version (0: no driver) and
// cudaRuntimeGetVersion's (CUDA's 1000 * major + 10 * minor).
std::string describe_cuda_unavailable(cudaError_t count_error, int driver_version,
                                      int runtime_version);

// "cudaErrorNoDevice: no CUDA-capable device is detected".
const char* cuda_error_text(cudaError_t status);

// A failed CUDA call as a Status ("<what> failed: <error>"; out of memory or
// a runtime error), with the error it left cleared.
Status cuda_failure(cudaError_t status, const std::string& what);

// Makes `device` current for the guard's scope and restores the caller's
// device afterwards, so a delegate call never leaves the caller's thread on
// another GPU. With one visible device, asked for device 0, it calls nothing:
// that device is current on every thread.
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

// NULL or cudaStreamLegacy: the legacy default stream.
inline bool is_legacy_default_stream(const void* stream) {
  return stream == nullptr || stream == static_cast<const void*>(cudaStreamLegacy);
}

// The CUDA device current on this thread; 0 without a device.
int current_cuda_device();

// What a device's kernels can read besides its own memory.
struct DeviceTraits {
  // An integrated GPU (Jetson): device and host share physical memory.
  bool integrated = false;
  // cudaDevAttrPageableMemoryAccess: kernels may read ordinary (pageable)
  // host memory. Jetson Orin-class iGPUs say no: only pinned or managed.
  bool pageable_memory_access = false;
};

// Asked once per engine, at load.
DeviceTraits device_traits(int device);

enum class PointerKind {
  kHost,          // page-locked host memory known to CUDA
  kDevice,        // cudaMalloc'd device memory
  kManaged,       // unified (managed) memory
  kUnregistered,  // ordinary pageable host memory, or CUDA is unavailable
};

struct PointerInfo {
  PointerKind kind = PointerKind::kUnregistered;
  int device = -1;  // owning device for kDevice / kManaged
  // kHost: the address kernels use for it (cudaHostRegister'd memory may be
  // mapped elsewhere than its host address); NULL when it is not mapped.
  void* device_pointer = nullptr;
};

// Classifies `ptr` with cudaPointerGetAttributes and clears the sticky error
// it leaves for pointers CUDA does not know.
PointerInfo classify_pointer(const void* ptr);

// The address a kernel on `device` may dereference for the memory `info`
// describes at `ptr`, or NULL when it must be staged: device memory of
// `device`, managed memory, and on integrated GPUs pinned host memory (at its
// mapped address) and, where the device reads it, pageable host memory.
void* device_address(const PointerInfo& info, void* ptr, int device, const DeviceTraits& traits);

}  // namespace tte
