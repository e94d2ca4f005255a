// How to install the TensorRT of one major, for the messages of a plan whose
// TensorRT is missing: the plugin's (engine_loader.cpp, no provider of that
// major) and the native providers' (tensorrt_library.cpp, no library of
// theirs found). Header-only: the providers compile it in without linking the
// plugin.
#pragma once

#include <cuda_runtime_api.h>  // CUDART_VERSION: the CUDA this build links

#include <cstdint>
#include <string>

namespace tte {

inline constexpr char kTensorRtLibraryEnv[] = "TORCH_TENSORRT_EXECUTORCH_TENSORRT_LIBRARY";

// The override variable of one major, TORCH_TENSORRT_EXECUTORCH_TENSORRT10_LIBRARY.
inline std::string tensorrt_library_env(int32_t major) {
  return "TORCH_TENSORRT_EXECUTORCH_TENSORRT" + std::to_string(major) + "_LIBRARY";
}

// The CUDA suffix of the pip packages that match this build ("cu13"; "cu12"
// for the CUDA 12 builds: JetPack 6, conda's 12.9).
inline std::string pip_cuda_suffix() { return "cu" + std::to_string(CUDART_VERSION / 1000); }

// What installs TensorRT `major`, `minor` or later within the major; with
// `for_plan`, `minor` is the one a plan was built with, which the full
// runtime must match (the lean one loads version-compatible plans of its own
// or an older minor).
inline std::string tensorrt_install_hint(int32_t major, int32_t minor, bool for_plan) {
  const std::string m = std::to_string(major);
  const std::string at_least =
      ">=" + m + "." + std::to_string(minor) + ",<" + std::to_string(major + 1);
  const std::string full_pin = for_plan ? "==" + m + "." + std::to_string(minor) + ".*" : at_least;
  const std::string cu = pip_cuda_suffix();
  return "install TensorRT " + m + ": pip install 'tensorrt-lean-" + cu + "-libs" + at_least +
         "' (the lean runtime: version-compatible plans) or 'tensorrt-" + cu + full_pin +
         "' (the full runtime: plans of its version); conda install -c conda-forge 'libnvinfer=" +
         m + ".*'; on a Jetson, the TensorRT " + m +
         " of its JetPack (see docs/jetson.md); or set " + tensorrt_library_env(major) +
         " to the library";
}

}  // namespace tte
