#include "cuda/cuda_device.h"

#include <cstdio>

namespace tte {

namespace {

struct DeviceCount {
  int count = 0;
  std::string unavailable;  // why count is 0
};

const DeviceCount& device_count() {
  static const DeviceCount counted = [] {
    DeviceCount result;
    const cudaError_t status = cudaGetDeviceCount(&result.count);
    if (status != cudaSuccess || result.count <= 0) {
      // No driver or no GPU: not an error for host-memory providers.
      cudaGetLastError();
      int driver = 0, runtime = 0;
      cudaDriverGetVersion(&driver);
      cudaRuntimeGetVersion(&runtime);
      cudaGetLastError();
      result.count = 0;
      result.unavailable = describe_cuda_unavailable(status, driver, runtime);
    }
    return result;
  }();
  return counted;
}

std::string cuda_version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

}  // namespace

int cuda_device_count() { return device_count().count; }

const std::string& cuda_unavailable_reason() { return device_count().unavailable; }

std::string describe_cuda_unavailable(cudaError_t count_error, int driver_version,
                                      int runtime_version) {
  const std::string needs = "CUDA " + cuda_version_text(runtime_version);
  if (driver_version <= 0) {
    return "no NVIDIA driver was found (libcuda.so.1); this build runs on " + needs +
           " and needs a driver that supports it";
  }
  if (count_error == cudaErrorInsufficientDriver || driver_version < runtime_version) {
    // CUDA 13's runtime needs driver 580 or newer; JetPack 6 (CUDA 12.6)
    // has 540.
    return "the NVIDIA driver is too old: it supports CUDA " + cuda_version_text(driver_version) +
           ", and this build of the plugin runs on " + needs + " (libcudart.so." +
           std::to_string(runtime_version / 1000) +
           "); update the driver, or install the build for the driver's CUDA (docs/jetson.md)";
  }
  if (count_error == cudaSuccess || count_error == cudaErrorNoDevice) {
    return "the NVIDIA driver (CUDA " + cuda_version_text(driver_version) + ") sees no GPU";
  }
  return std::string("the CUDA runtime found no usable GPU: ") + cuda_error_text(count_error);
}

const char* cuda_error_text(cudaError_t status) {
  thread_local char text[256];
  std::snprintf(text, sizeof(text), "%s: %s", cudaGetErrorName(status), cudaGetErrorString(status));
  return text;
}

Status cuda_failure(cudaError_t status, const std::string& what) {
  cudaGetLastError();
  return Status(status == cudaErrorMemoryAllocation ? TTE_ERROR_OUT_OF_MEMORY : TTE_ERROR_RUNTIME,
                what + " failed: " + cuda_error_text(status));
}

DeviceGuard::DeviceGuard(int device) {
  if (device == 0 && cuda_device_count() == 1) {
    // The one visible device is current whatever the thread set: no call.
    previous_ = 0;
    return;
  }
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

int current_cuda_device() {
  int device = 0;
  // With one device or none, the answer is 0 without asking.
  if (cuda_device_count() <= 1 || cudaGetDevice(&device) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return device;
}

namespace {

bool device_attribute(cudaDeviceAttr attribute, int device) {
  int value = 0;
  if (cudaDeviceGetAttribute(&value, attribute, device) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return value != 0;
}

}  // namespace

DeviceTraits device_traits(int device) {
  DeviceTraits traits;
  if (device < 0 || device >= cuda_device_count()) {
    return traits;
  }
  traits.integrated = device_attribute(cudaDevAttrIntegrated, device);
  traits.pageable_memory_access = device_attribute(cudaDevAttrPageableMemoryAccess, device);
  return traits;
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
      info.device_pointer = attributes.devicePointer;
      break;
    default:
      break;
  }
  return info;
}

void* device_address(const PointerInfo& info, void* ptr, int device, const DeviceTraits& traits) {
  switch (info.kind) {
    case PointerKind::kDevice:
      return info.device == device ? ptr : nullptr;
    case PointerKind::kManaged:
      return ptr;
    case PointerKind::kHost:
      // Pinned memory is read over PCIe on a discrete GPU: staged instead.
      // On an integrated GPU it is the same DRAM, at its mapped address.
      if (!traits.integrated || info.device_pointer == nullptr) {
        return nullptr;
      }
      return static_cast<char*>(info.device_pointer);
    case PointerKind::kUnregistered:
      // Integrated GPUs share DRAM with the CPU, but a kernel may touch
      // pageable memory only where the device says so (Orin-class iGPUs do
      // not: they would fault and poison the context).
      return traits.integrated && traits.pageable_memory_access ? ptr : nullptr;
  }
  return nullptr;
}

}  // namespace tte
