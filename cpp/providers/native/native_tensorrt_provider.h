// The native engine provider of one TensorRT major, "tensorrt-native-<major>":
// TensorRT plans run through TensorRT's C++ API, with the TensorRT library of
// that major found at run time (tensorrt_library.h). The same sources are
// compiled once per major, against that major's headers, as
// libtte_provider_tensorrt<major>.so beside the plugin
// (cmake/TteNativeProvider.cmake), which registers each when it loads
// (provider_entry.cpp exports tte_engine_provider_entry). Device memory,
// capturable enqueue.
#pragma once

#include <NvInferVersion.h>

#include <cstdint>

#include "torch_tensorrt_executorch/c_api.h"
#include "torch_tensorrt_executorch/engine_provider.h"

namespace tte::native {

#define TTE_NATIVE_TEXT(x) #x
#define TTE_NATIVE_NUMBER_TEXT(x) TTE_NATIVE_TEXT(x)
// "tensorrt-native-11": the plugin picks the provider whose name ends in a
// plan's major (backend/engine_loader.cpp).
inline constexpr char kProviderName[] =
    "tensorrt-native-" TTE_NATIVE_NUMBER_TEXT(NV_TENSORRT_MAJOR);

// What the provider takes from whoever hosts it: the plugin, or a test that
// compiles the provider without the rest of the plugin.
struct ProviderEnvironment {
  // Usable CUDA devices. No TensorRT runtime is created while it says 0:
  // TensorRT without a device fails in ways that can crash the process.
  int32_t (*cuda_device_count)();
  // Whether a line at `level` would be printed (skips formatting otherwise).
  bool (*log_enabled)(TteLogLevel level);
  void (*log)(TteLogLevel level, const char* file, int line, const char* message);
};

// A provider table over a new provider state: one TensorRT runtime per
// device, created at the first deserialize on that device. Nothing touches
// TensorRT or CUDA before that. The table's `release` frees the state; call
// it yourself when the table is never registered.
TteEngineProvider make_provider(const ProviderEnvironment& environment);

// The TensorRT version the provider was compiled against, e.g. "11.1.0".
const char* tensorrt_header_version();

}  // namespace tte::native
