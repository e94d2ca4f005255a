#include "cuda/cuda_allocator.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstring>
#include <mutex>
#include <string>

#include <cuda_runtime_api.h>
#include <executorch/runtime/core/device_allocator.h>

#include "common/call_context.h"
#include "common/logging.h"
#include "cuda/cuda_device.h"

namespace tte {
namespace {

using executorch::runtime::DeviceAllocator;
using executorch::runtime::Error;
using executorch::runtime::Result;
using executorch::runtime::etensor::DeviceIndex;
using executorch::runtime::etensor::DeviceType;

constexpr const char* kExecuTorchCudaBackend = "libexecutorch_backend_cuda.so";

// ExecuTorch calls this allocator, with no room for our call's context: the
// reason of a failure goes to the call in progress (call_context.h).
Error report(const Status& failure) {
  return report_to_executorch(CallInProgress::current(), failure);
}

class CudaDeviceAllocator final : public DeviceAllocator {
 public:
  Result<void*> allocate(size_t nbytes, DeviceIndex index, size_t alignment) override {
    // cudaMalloc returns 256-byte aligned memory; more cannot be promised
    // without keeping the original pointer for cudaFree.
    if (alignment > 256 || (alignment & (alignment - 1)) != 0) {
      return report(
          Status(TTE_ERROR_NOT_SUPPORTED, "CUDA allocator: alignment " + std::to_string(alignment) +
                                              " is not supported (at most 256, a power of 2)"));
    }
    if (cuda_device_count() == 0) {
      return report(Status(
          TTE_ERROR_NO_DEVICE,
          "no CUDA device: cannot allocate " + std::to_string(nbytes) +
              " bytes of device memory for a program planned on cuda:" + std::to_string(index) +
              " (TensorRTBackend needs an NVIDIA GPU; " + cuda_unavailable_reason() + ")"));
    }
    DeviceGuard guard(index);
    if (guard.status() != cudaSuccess) {
      return report(Status(TTE_ERROR_INVALID_ARGUMENT,
                           "CUDA allocator: cannot use device cuda:" + std::to_string(index) +
                               " (" + std::to_string(cuda_device_count()) +
                               " devices): " + cuda_error_text(guard.status())));
    }
    void* ptr = nullptr;
    cudaError_t status = cudaMalloc(&ptr, nbytes);
    if (status != cudaSuccess) {
      cudaGetLastError();
      return report(Status(TTE_ERROR_OUT_OF_MEMORY, "CUDA allocator: cudaMalloc of " +
                                                        std::to_string(nbytes) +
                                                        " bytes on cuda:" + std::to_string(index) +
                                                        " failed: " + cuda_error_text(status)));
    }
    return ptr;
  }

  void deallocate(void* ptr, DeviceIndex index) override {
    if (ptr == nullptr) {
      return;
    }
    DeviceGuard guard(index);
    cudaFree(ptr);
    cudaGetLastError();
  }

  Error copy_host_to_device(void* dst, const void* src, size_t nbytes, DeviceIndex index) override {
    return copy(dst, src, nbytes, index, cudaMemcpyHostToDevice, "host-to-device");
  }

  Error copy_device_to_host(void* dst, const void* src, size_t nbytes, DeviceIndex index) override {
    return copy(dst, src, nbytes, index, cudaMemcpyDeviceToHost, "device-to-host");
  }

  DeviceType device_type() const override { return DeviceType::CUDA; }

 private:
  static Error copy(void* dst, const void* src, size_t nbytes, DeviceIndex index,
                    cudaMemcpyKind kind, const char* what) {
    if (nbytes == 0) {
      return Error::Ok;
    }
    DeviceGuard guard(index);
    // Synchronous: the et_copy kernels expect the data in place on return.
    cudaError_t status =
        guard.status() != cudaSuccess ? guard.status() : cudaMemcpy(dst, src, nbytes, kind);
    if (status != cudaSuccess) {
      cudaGetLastError();
      return report(Status(TTE_ERROR_RUNTIME, std::string("CUDA allocator: ") + what + " copy of " +
                                                  std::to_string(nbytes) +
                                                  " bytes on cuda:" + std::to_string(index) +
                                                  " failed: " + cuda_error_text(status)));
    }
    return Error::Ok;
  }
};

// Static lifetime, as the registry requires; never destroyed.
CudaDeviceAllocator& our_allocator() {
  static auto* allocator = new CudaDeviceAllocator();
  return *allocator;
}

std::string directory_of_executorch_runtime() {
  Dl_info info{};
  void* symbol = reinterpret_cast<void*>(&executorch::runtime::get_device_allocator);
  if (dladdr(symbol, &info) == 0 || info.dli_fname == nullptr) {
    return "";
  }
  std::string path = info.dli_fname;
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

bool file_name_is(const void* address, const char* file_name) {
  Dl_info info{};
  if (dladdr(address, &info) == 0 || info.dli_fname == nullptr) {
    return false;
  }
  const char* slash = std::strrchr(info.dli_fname, '/');
  return std::strcmp(slash != nullptr ? slash + 1 : info.dli_fname, file_name) == 0;
}

// Whether the library `file_name` defines `allocator`: its vtable always
// lives in the defining library, even when the object is on the heap.
bool defined_in(const DeviceAllocator* allocator, const char* file_name) {
  const void* vtable = *reinterpret_cast<const void* const*>(allocator);
  return file_name_is(vtable, file_name) || file_name_is(allocator, file_name);
}

std::once_flag g_install_once;

}  // namespace

void install_cuda_allocator() {
  std::call_once(g_install_once, [] {
    if (executorch::runtime::get_device_allocator(DeviceType::CUDA) != nullptr) {
      TTE_LOG(INFO, "CUDA device allocator already registered (%s); using it",
              cuda_allocator_owner());
      return;
    }
    const std::string directory = directory_of_executorch_runtime();
    if (!directory.empty()) {
      const std::string candidate = directory + "/" + kExecuTorchCudaBackend;
      if (access(candidate.c_str(), F_OK) == 0) {
        // Loading it first lets it register its allocator; loading it after
        // we registered ours would abort the process.
        if (dlopen(candidate.c_str(), RTLD_NOW | RTLD_GLOBAL) == nullptr) {
          const char* why = dlerror();
          TTE_LOG(WARNING,
                  "cannot load ExecuTorch's CUDA backend '%s' (%s); registering our CUDA allocator",
                  candidate.c_str(), why != nullptr ? why : "unknown error");
        } else if (executorch::runtime::get_device_allocator(DeviceType::CUDA) != nullptr) {
          TTE_LOG(INFO, "using the CUDA allocator of ExecuTorch's CUDA backend '%s'",
                  candidate.c_str());
          return;
        }
      }
    }
    executorch::runtime::register_device_allocator(&our_allocator());
    TTE_LOG(DEBUG, "registered TensorRTBackend's CUDA device allocator");
  });
}

const char* cuda_allocator_owner() {
  DeviceAllocator* registered = executorch::runtime::get_device_allocator(DeviceType::CUDA);
  if (registered == nullptr) {
    return "none";
  }
  if (registered == &our_allocator()) {
    return "torch_tensorrt_executorch";
  }
  if (defined_in(registered, kExecuTorchCudaBackend)) {
    return "executorch_cuda_backend";
  }
  return "other";
}

}  // namespace tte
