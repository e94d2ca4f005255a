// How to install the TensorRT of one major, for the messages of a plan whose
// TensorRT is missing: the plugin's (engine_loader.cpp, no provider of that
// major) and the native providers' (tensorrt_library.cpp, no library of
// theirs found). Header-only: the providers compile it in without linking the
// plugin.
#pragma once

#include <cstdint>
#include <string>

namespace tte {

inline constexpr char kTensorRtLibraryEnv[] = "TORCH_TENSORRT_EXECUTORCH_TENSORRT_LIBRARY";

// The override variable of one major, TORCH_TENSORRT_EXECUTORCH_TENSORRT10_LIBRARY.
inline std::string tensorrt_library_env(int32_t major) {
  return "TORCH_TENSORRT_EXECUTORCH_TENSORRT" + std::to_string(major) + "_LIBRARY";
}

// What installs TensorRT `major` (`minor` >= 0: the minor a plan was built
// with, so the pins match it; -1 when unknown).
inline std::string tensorrt_install_hint(int32_t major, int32_t minor) {
  const std::string m = std::to_string(major);
  const std::string lean_pin =
      minor >= 0 ? ">=" + m + "." + std::to_string(minor) + ",<" + std::to_string(major + 1)
                 : "==" + m + ".*";
  const std::string full_pin = minor >= 0 ? "==" + m + "." + std::to_string(minor) + ".*"
                                          : "==" + m + ".*";
  return "install TensorRT " + m + ": pip install 'tensorrt-lean-cu13-libs" + lean_pin +
         "' (the lean runtime: version-compatible plans) or 'tensorrt-cu13" + full_pin +
         "' (the full runtime: plans of its version); conda install -c conda-forge 'libnvinfer=" +
         m + ".*'; on a Jetson, the TensorRT " + m +
         " of its JetPack (see docs/jetson.md); or set " + tensorrt_library_env(major) +
         " to the library";
}

}  // namespace tte
