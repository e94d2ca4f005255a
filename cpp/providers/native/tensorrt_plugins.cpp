#include "native/tensorrt_plugins.h"

#include <dlfcn.h>

#include <mutex>

#include "native/tensorrt_logger.h"

namespace tte::native {

void load_builtin_plugins(const TensorRtLibrary& library, const ProviderEnvironment& environment) {
  static std::once_flag once;
  std::call_once(once, [&] {
    if (library.lean()) {
      return;
    }
    const std::string name = "libnvinfer_plugin.so." + std::to_string(NV_TENSORRT_MAJOR);
    const size_t slash = library.path().rfind('/');
    std::string path =
        slash == std::string::npos ? name : library.path().substr(0, slash + 1) + name;
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr && path != name) {
      path = name;
      handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    }
    if (handle == nullptr) {
      const char* why = dlerror();
      TTE_NATIVE_LOG(environment, INFO,
                     "TensorRT's plugin library was not loaded (%s); engines that use TensorRT's "
                     "own plugins will not deserialize",
                     why != nullptr ? why : name.c_str());
      return;
    }
    using InitFn = bool (*)(void*, const char*);
    auto init = reinterpret_cast<InitFn>(dlsym(handle, "initLibNvInferPlugins"));
    // TensorRT keeps the logger for the rest of the process.
    static TensorRtLogger* logger = new TensorRtLogger(environment);
    if (init == nullptr || !init(static_cast<nvinfer1::ILogger*>(logger), "")) {
      TTE_NATIVE_LOG(environment, WARNING, "%s could not register TensorRT's plugins",
                     path.c_str());
      return;
    }
    TTE_NATIVE_LOG(environment, INFO, "TensorRT's plugins registered from %s", path.c_str());
  });
}

Status load_plugin_library(nvinfer1::IRuntime& runtime, const std::string& path) {
  const TensorRtErrorCapture capture;
  if (runtime.getPluginRegistry().loadLibrary(path.c_str()) == nullptr) {
    return Status(TTE_ERROR_INVALID_ARGUMENT,
                  "TensorRT could not load plugin library '" + path +
                      "' (load option plugin_libraries): the file is missing, is not a TensorRT "
                      "plugin library, or registers a plugin that is already registered" +
                      tensorrt_reason());
  }
  return Status::Ok();
}

Status PluginLibraries::load(nvinfer1::IRuntime& runtime, const std::vector<std::string>& paths) {
  if (paths.empty()) {
    return Status::Ok();
  }
  std::lock_guard<std::mutex> lock(mutex_);
  std::set<std::string>& loaded = loaded_[&runtime.getPluginRegistry()];
  for (const std::string& path : paths) {
    if (loaded.count(path) != 0) {
      continue;
    }
    Status status = load_plugin_library(runtime, path);
    if (!status.ok()) {
      return status;
    }
    loaded.insert(path);
  }
  return Status::Ok();
}

}  // namespace tte::native
