// The native engine provider, "tensorrt-native": TensorRT plans run through
// TensorRT's C++ API (libnvinfer, or libnvinfer_lean for version-compatible
// engines). Built into the plugin only where TensorRT headers were found
// (cmake/TteNativeProvider.cmake); the plugin registers it at load
// (native/plugin_registration.cpp). Device memory, capturable enqueue.
#pragma once

#include <cstdint>

#include "torch_tensorrt_executorch/c_api.h"
#include "torch_tensorrt_executorch/engine_provider.h"

namespace tte::native {

inline constexpr char kProviderName[] = "tensorrt-native";

// What the provider takes from whoever hosts it: the plugin, or a test that
// compiles the provider without the rest of the plugin.
struct ProviderEnvironment {
  // Usable CUDA devices. No TensorRT runtime is created while it says 0:
  // TensorRT without a device fails in ways that can crash the process.
  int32_t (*cuda_device_count)();
  // Whether a line at `level` would be printed (skips formatting otherwise).
  bool (*log_enabled)(TteLogLevel level);
  void (*log)(TteLogLevel level, const char* file, int line,
              const char* message);
};

// A provider table over a new provider state: one TensorRT runtime per
// device, created at the first deserialize on that device. Nothing touches
// TensorRT or CUDA before that. The table's `release` frees the state; call
// it yourself when the table is never registered.
TteEngineProvider make_provider(const ProviderEnvironment& environment);

// The TensorRT version the provider was compiled against, e.g. "11.1.0".
const char* tensorrt_header_version();
// The version of the TensorRT library loaded in this process, e.g. "11.4.0"
// (asks the library; needs no GPU).
const char* tensorrt_library_version();

}  // namespace tte::native
