// One TensorRT runtime per CUDA device, shared by every engine deserialized
// on that device (TensorRT's runtime holds per-device state and costs memory;
// one per engine, as upstream does, multiplies both). Engines keep their
// runtime alive, since TensorRT requires a runtime to outlive its engines.
#pragma once

#include <NvInferRuntime.h>

#include <map>
#include <memory>
#include <mutex>

#include "common/status.h"
#include "native/tensorrt_logger.h"
#include "native/native_tensorrt_provider.h"

namespace tte::native {

struct DeviceRuntime {
  int32_t device = 0;
  // Declared before the runtime, which logs to it until destroyed.
  std::shared_ptr<TensorRtLogger> logger;
  std::unique_ptr<nvinfer1::IRuntime> runtime;
  // Deserializations on one runtime run one at a time.
  std::mutex mutex;
};

class RuntimePool {
 public:
  explicit RuntimePool(const ProviderEnvironment& environment);
  RuntimePool(const RuntimePool&) = delete;
  RuntimePool& operator=(const RuntimePool&) = delete;

  // The runtime of `device`, created on first use with `device` current.
  // Fails without creating anything when no CUDA device is usable or
  // `device` is not one of them; a failed creation is retried next time.
  Status acquire(int32_t device, std::shared_ptr<DeviceRuntime>* out);

 private:
  ProviderEnvironment environment_;
  std::shared_ptr<TensorRtLogger> logger_;
  std::mutex mutex_;
  std::map<int32_t, std::shared_ptr<DeviceRuntime>> runtimes_;
};

}  // namespace tte::native
