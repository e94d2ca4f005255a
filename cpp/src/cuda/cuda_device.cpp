#include "cuda/cuda_device.h"

#include <cstdio>

namespace tte {

int cuda_device_count() {
  static int count = [] {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      // No driver or no GPU: not an error for host-memory providers.
      cudaGetLastError();
      n = 0;
    }
    return n;
  }();
  return count;
}

const char* cuda_error_text(cudaError_t status) {
  thread_local char text[256];
  std::snprintf(text, sizeof(text), "%s: %s", cudaGetErrorName(status),
                cudaGetErrorString(status));
  return text;
}

Status cuda_failure(cudaError_t status, const std::string& what) {
  cudaGetLastError();
  return Status(status == cudaErrorMemoryAllocation ? TTE_ERROR_OUT_OF_MEMORY : TTE_ERROR_RUNTIME,
                what + " failed: " + cuda_error_text(status));
}

DeviceGuard::DeviceGuard(int device) {
  status_ = cudaGetDevice(&previous_);
  if (status_ != cudaSuccess) {
    cudaGetLastError();
    return;
  }
  if (previous_ != device) {
    status_ = cudaSetDevice(device);
    if (status_ == cudaSuccess) {
      switched_ = true;
    } else {
      cudaGetLastError();
    }
  }
}

DeviceGuard::~DeviceGuard() {
  if (switched_) {
    cudaSetDevice(previous_);
  }
}

bool is_integrated_gpu(int device) {
  int integrated = 0;
  if (cudaDeviceGetAttribute(&integrated, cudaDevAttrIntegrated, device) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return integrated != 0;
}

PointerInfo classify_pointer(const void* ptr) {
  PointerInfo info;
  if (ptr == nullptr || cuda_device_count() == 0) {
    return info;
  }
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, ptr) != cudaSuccess) {
    cudaGetLastError();
    return info;
  }
  switch (attributes.type) {
    case cudaMemoryTypeDevice:
      info.kind = PointerKind::kDevice;
      info.device = attributes.device;
      break;
    case cudaMemoryTypeManaged:
      info.kind = PointerKind::kManaged;
      info.device = attributes.device;
      break;
    case cudaMemoryTypeHost:
      info.kind = PointerKind::kHost;
      info.device = attributes.device;
      break;
    default:
      break;
  }
  return info;
}

bool is_device_accessible(const PointerInfo& info, int device, bool integrated) {
  switch (info.kind) {
    case PointerKind::kDevice:
      return info.device == device;
    case PointerKind::kManaged:
      return true;
    case PointerKind::kHost:
    case PointerKind::kUnregistered:
      // Integrated GPUs share physical memory with the CPU.
      return integrated;
  }
  return false;
}

}  // namespace tte
