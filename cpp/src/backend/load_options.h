// What TensorRTBackend accepts at load time: runtime specs (load options,
// which win) and compile specs. Load options of the name:
//   provider                  string  the engine provider to use
//   cuda_graphs               bool    capture and replay the enqueue
//   weight_streaming_budget   int or decimal string, bytes (also a compile
//                                     spec; an empty string leaves the
//                                     compile spec in force)
//   engine_host_code_allowed  bool    default true: false refuses plans that
//                                     carry host code (version-compatible
//                                     plans embedding the lean runtime)
//   dla_core                  int     the DLA core the engine runs on (Jetson)
//   plugin_libraries          string  plugin libraries to load first,
//                                     separated by ':'
//   runtime_cache_path        string  TensorRT-RTX: a file that keeps
//                                     compiled kernels between processes
//   share_device_memory       bool    default true: the engine's scratch
//                                     (activation) memory comes from the
//                                     arena of its CUDA stream, shared with
//                                     the other delegates on that stream
//                                     (providers with the device-memory
//                                     entries; never with cuda_graphs)
//   share_engines             bool    default true: a plan already loaded
//                                     on the device is not deserialized
//                                     again; the new delegate gets its own
//                                     execution context on the loaded engine
//                                     (providers with
//                                     create_execution_context)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <executorch/runtime/backend/interface.h>

#include "common/status.h"

namespace tte {

// The load option that turns CUDA graphs on (the Program API reads it too:
// a graph's replay needs the same output addresses from call to call).
constexpr const char kCudaGraphsOption[] = "cuda_graphs";

struct LoadOptions {
  std::string provider;  // "" = the first that accepts
  bool cuda_graphs = false;
  bool has_weight_streaming_budget = false;
  int64_t weight_streaming_budget = 0;
  bool engine_host_code_allowed = true;
  bool has_dla_core = false;
  int32_t dla_core = 0;
  std::vector<std::string> plugin_libraries;
  std::string runtime_cache_path;  // "" = none
  bool share_device_memory = true;
  bool share_engines = true;
};

// Unknown load options are logged and ignored; malformed ones refused, and
// so is a program with two weight_streaming_budget compile specs.
Status read_load_options(
    const executorch::runtime::BackendInitContext& context,
    executorch::runtime::ArrayRef<executorch::runtime::CompileSpec> compile_specs,
    LoadOptions* out);

}  // namespace tte
