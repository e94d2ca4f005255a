#include "native/runtime_pool.h"

#include <string>

#include "native/native_tensorrt_provider.h"

namespace tte::native {

RuntimePool::RuntimePool(const ProviderEnvironment& environment)
    : environment_(environment),
      logger_(std::make_shared<TensorRtLogger>(environment)) {}

Status RuntimePool::acquire(int32_t device, std::shared_ptr<DeviceRuntime>* out) {
  // Counted before anything else: TensorRT without a device logs a CUDA
  // initialization failure and then crashes in deserialize.
  const int32_t devices = environment_.cuda_device_count();
  if (devices <= 0) {
    return Status(TTE_ERROR_NO_DEVICE,
                  "no CUDA device: the native TensorRT provider needs an NVIDIA GPU "
                  "and its driver (TensorRT was not started)");
  }
  if (device < 0 || device >= devices) {
    return Status(TTE_ERROR_INVALID_ARGUMENT,
                  "CUDA device " + std::to_string(device) + " does not exist: this process sees " +
                      std::to_string(devices) + " device(s), 0.." + std::to_string(devices - 1));
  }

  std::lock_guard<std::mutex> lock(mutex_);
  auto found = runtimes_.find(device);
  if (found != runtimes_.end()) {
    *out = found->second;
    return Status::Ok();
  }
  auto entry = std::make_shared<DeviceRuntime>();
  entry->device = device;
  entry->logger = logger_;
  TensorRtLogger::clear_thread_error();
  entry->runtime.reset(nvinfer1::createInferRuntime(*logger_));
  if (entry->runtime == nullptr) {
    return Status(TTE_ERROR_RUNTIME, "TensorRT " + std::string(tensorrt_library_version()) +
                                         " could not create a runtime on CUDA device " +
                                         std::to_string(device) + tensorrt_reason());
  }
#if defined(TTE_TENSORRT_LEAN_ONLY)
  // Version-compatible plans may embed the lean runtime that runs them, as
  // host code TensorRT executes only when allowed.
  entry->runtime->setEngineHostCodeAllowed(true);
#endif
  TTE_NATIVE_LOG(environment_, INFO,
                 "TensorRT %s runtime created on CUDA device %d (provider built against %s)",
                 tensorrt_library_version(), device, tensorrt_header_version());
  runtimes_.emplace(device, entry);
  *out = std::move(entry);
  return Status::Ok();
}

}  // namespace tte::native
