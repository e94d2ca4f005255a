// TensorRT plugins for the engines that need them: TensorRT's own plugin
// library (libnvinfer_plugin, registered with initLibNvInferPlugins as
// trtexec and Polygraphy do) and the libraries named by the load option
// plugin_libraries (IPluginRegistry::loadLibrary).
#pragma once

#include <NvInferRuntime.h>

#include <string>

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

}  // namespace tte::native
