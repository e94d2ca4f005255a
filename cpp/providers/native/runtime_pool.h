// One TensorRT runtime per CUDA device, shared by every engine deserialized
// on that device (TensorRT's runtime holds per-device state and costs memory;
// one per engine, as upstream does, multiplies both). Engines keep their
// runtime alive, since TensorRT requires a runtime to outlive its engines.
// Runtimes come from the TensorRT library found at run time
// (tensorrt_library.h).
#pragma once

#include <NvInferRuntime.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/status.h"
#include "native/native_tensorrt_provider.h"
#include "native/tensorrt_library.h"
#include "native/tensorrt_logger.h"
#include "native/tensorrt_plugins.h"

namespace tte::native {

// What a deserialize asks of the runtime besides the plan (load options).
struct RuntimeSettings {
  bool host_code_allowed = true;
  int32_t dla_core = -1;  // -1: none
  std::vector<std::string> plugin_libraries;
};

struct DeviceRuntime {
  int32_t device = 0;
  const TensorRtLibrary* library = nullptr;
  // Declared before the runtime, which logs to it until destroyed.
  std::shared_ptr<TensorRtLogger> logger;
  std::unique_ptr<nvinfer1::IRuntime> runtime;
  // Deserializations on one runtime run one at a time, with the settings
  // applied right before (they are runtime state, not per engine).
  std::mutex mutex;
  // The core last set on this runtime; -1: none set (TensorRT's default).
  int32_t dla_core = -1;
  // The pool's record of plugin libraries, per registry (shared by runtimes).
  std::shared_ptr<PluginLibraries> plugin_libraries;

  // Under `mutex`: host code, DLA core and plugin libraries for the next
  // deserialize.
  Status apply(const RuntimeSettings& settings);
};

class RuntimePool {
 public:
  explicit RuntimePool(const ProviderEnvironment& environment);
  RuntimePool(const RuntimePool&) = delete;
  RuntimePool& operator=(const RuntimePool&) = delete;

  // The runtime of `device`, created on first use with `device` current.
  // Fails without creating anything when no CUDA device is usable or
  // `device` is not one of them (TTE_ERROR_NO_DEVICE, _INVALID_ARGUMENT), or
  // when no TensorRT library is found (TTE_ERROR_NOT_ACCEPTED, so the
  // backend asks the next provider); a failed creation is retried next time.
  Status acquire(int32_t device, std::shared_ptr<DeviceRuntime>* out);

 private:
  ProviderEnvironment environment_;
  std::shared_ptr<TensorRtLogger> logger_;
  std::shared_ptr<PluginLibraries> plugin_libraries_;
  std::mutex mutex_;
  std::map<int32_t, std::shared_ptr<DeviceRuntime>> runtimes_;
};

}  // namespace tte::native
