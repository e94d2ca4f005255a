#include "native/runtime_pool.h"

#include <string>

namespace tte::native {

Status DeviceRuntime::apply(const RuntimeSettings& settings) {
  // Version-compatible plans embed the lean runtime that runs them, as host
  // code TensorRT runs only when allowed (NvInferRuntime.h:2139,
  // setEngineHostCodeAllowed, "The default value is false"). trtexec and
  // Polygraphy allow it on every runtime that loads such plans; the load
  // option engine_host_code_allowed=false refuses them instead.
  runtime->setEngineHostCodeAllowed(settings.host_code_allowed);
  if (settings.dla_core >= 0) {
    // NvInferRuntime.h:1877: "if getNbDLACores() returns 0, then this
    // function does nothing", so a core that does not exist is refused here.
    const int32_t cores = runtime->getNbDLACores();
    if (settings.dla_core >= cores) {
      return Status(TTE_ERROR_INVALID_ARGUMENT,
                    "load option dla_core=" + std::to_string(settings.dla_core) +
                        ": this device has " + std::to_string(cores) + " DLA core(s)" +
                        (cores == 0 ? " (DLA exists on Jetson AGX/NX modules only)" : ""));
    }
    runtime->setDLACore(settings.dla_core);
    dla_core = settings.dla_core;
  } else if (dla_core != -1) {
    // Back to the runtime's initial -1 ("Defaults to -1", NvInferRuntime.h:1865)
    // only after a core was set: the documented range of setDLACore is
    // [0,getNbDlaCores()) (:1867), so -1 is not passed to a runtime that
    // never had a core.
    runtime->setDLACore(-1);
    dla_core = -1;
  }
  return plugin_libraries->load(*runtime, settings.plugin_libraries);
}

RuntimePool::RuntimePool(const ProviderEnvironment& environment)
    : environment_(environment),
      logger_(std::make_shared<TensorRtLogger>(environment)),
      plugin_libraries_(std::make_shared<PluginLibraries>()) {}

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
  const TensorRtLibrary& library = TensorRtLibrary::get();
  if (!library.found()) {
    return Status(TTE_ERROR_NOT_ACCEPTED, library.describe());
  }

  std::lock_guard<std::mutex> lock(mutex_);
  auto found = runtimes_.find(device);
  if (found != runtimes_.end()) {
    *out = found->second;
    return Status::Ok();
  }
  auto entry = std::make_shared<DeviceRuntime>();
  entry->device = device;
  entry->library = &library;
  entry->logger = logger_;
  entry->plugin_libraries = plugin_libraries_;
  const TensorRtErrorCapture capture;
  entry->runtime.reset(library.create_runtime(*logger_));
  if (entry->runtime == nullptr) {
    return Status(TTE_ERROR_RUNTIME, "TensorRT " + library.version().text() + " (" +
                                         library.path() +
                                         ") could not create a runtime on CUDA device " +
                                         std::to_string(device) + tensorrt_reason());
  }
  TTE_NATIVE_LOG(environment_, INFO, "TensorRT runtime created on CUDA device %d: %s", device,
                 library.describe().c_str());
  load_builtin_plugins(library, environment_);
  runtimes_.emplace(device, entry);
  *out = std::move(entry);
  return Status::Ok();
}

}  // namespace tte::native
