// TensorRT plugins for the engines that need them: TensorRT's own plugin
// library (libnvinfer_plugin, registered with initLibNvInferPlugins as
// trtexec and Polygraphy do) and the libraries named by the load option
// plugin_libraries (IPluginRegistry::loadLibrary).
#pragma once

#include <NvInferRuntime.h>

#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "common/status.h"
#include "native/native_tensorrt_provider.h"
#include "native/tensorrt_library.h"

namespace tte::native {

// Once per process, with the full runtime only (the lean runtime has no
// libnvinfer_plugin): loads libnvinfer_plugin.so.<major> from the folder of
// `library` (else by the loader's search) and calls its
// initLibNvInferPlugins (NvInferPlugin.h:38). Not finding it is logged at
// info: most engines use no plugin.
void load_builtin_plugins(const TensorRtLibrary& library, const ProviderEnvironment& environment);

// Loads the plugin library at `path` into `runtime`'s plugin registry
// (NvInferRuntimeCommon.h:137, IPluginRegistry::loadLibrary).
Status load_plugin_library(nvinfer1::IRuntime& runtime, const std::string& path);

// The libraries of the load option plugin_libraries loaded so far, per plugin
// registry. A registry refuses a library whose plugins it already holds
// ("will fail and return nullptr if any of the plugins are already
// registered", NvInferRuntimeCommon.h:133-134), and the runtimes of two
// devices may hand back the same registry (getPluginRegistry, "the local
// plugin registry that can be used by the runtime", NvInferRuntime.h:2105):
// each library is loaded once per registry, not once per runtime.
class PluginLibraries {
 public:
  // Loads into `runtime`'s registry each of `paths` it does not hold yet.
  Status load(nvinfer1::IRuntime& runtime, const std::vector<std::string>& paths);

 private:
  std::mutex mutex_;
  std::map<const nvinfer1::IPluginRegistry*, std::set<std::string>> loaded_;
};

}  // namespace tte::native
