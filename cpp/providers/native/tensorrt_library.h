// The TensorRT library the provider runs engines with, found at run time so
// that the provider has no NEEDED entry on TensorRT (the wheel ships it to
// machines with or without TensorRT), or linked at build time (the conda
// build, TTE_TENSORRT_LINK). Only two symbols are taken from TensorRT:
// createInferRuntime_INTERNAL (NvInferRuntime.h:5033, what the inline
// createInferRuntime calls) and getInferLibVersion (NvInferRuntimeBase.h:690);
// everything else is a virtual call on the objects they return.
//
// One provider library serves one TensorRT major (NV_TENSORRT_MAJOR of the
// headers it was compiled against) and looks only for that major's files.
// Search order (the first library that loads and has the right version wins):
//   1. $TORCH_TENSORRT_EXECUTORCH_TENSORRT<major>_LIBRARY, else
//      $TORCH_TENSORRT_EXECUTORCH_TENSORRT_LIBRARY: that file only;
//   2. the pip wheels beside this package, relative to the provider library
//      (<site-packages>/torch_tensorrt_executorch_runtime/lib/):
//      ../../tensorrt_libs/libnvinfer.so.<major>, then
//      ../../tensorrt_lean_libs/libnvinfer_lean.so.<major>;
//   3. the provider's own folder, which is the prefix's lib/ in a conda
//      environment: libnvinfer.so.<major>, then libnvinfer_lean.so.<major>;
//   4. $CONDA_PREFIX/lib/ (the wheel pip-installed into a conda environment,
//      whose RUNPATH does not name that folder): the same names;
//   5. on aarch64, /usr/lib/aarch64-linux-gnu/, where JetPack installs its
//      TensorRT: the same names;
//   6. the loader's own search (LD_LIBRARY_PATH, ld.so.cache, /usr/lib/<triple>
//      where Debian packages install TensorRT): the same names.
// A library of another major (TensorRT 10's and 11's classes have other
// layouts) or an older minor than the headers (classes gain virtual functions
// in minor releases) is refused and the search goes on. So the provider
// calls only what its headers' minor has, which every library it accepts
// has too.
#pragma once

#include <NvInferRuntime.h>

#include <cstdint>
#include <string>

#include "common/tensorrt_install.h"

namespace tte::native {

struct TensorRtVersion {
  int32_t major = 0, minor = 0, patch = 0;
  std::string text() const;
};

// getInferLibVersion's value, (major * 100 + minor) * 100 + patch since
// TensorRT 10 (NvInferRuntimeBase.h:686-688).
TensorRtVersion decode_tensorrt_version(int32_t packed);

// Why a library of version `found` cannot serve a provider built against
// headers of version `built`, or "" when it can.
std::string version_mismatch(const TensorRtVersion& found, const TensorRtVersion& built);

class TensorRtLibrary {
 public:
  using CreateRuntimeFn = void* (*)(void* logger, int32_t version) noexcept;
  using VersionFn = int32_t (*)() noexcept;

  // The process's library, found on the first call (thread-safe); later
  // calls return the same answer. Never unloaded.
  static const TensorRtLibrary& get();

  // For tests: the search over an explicit override, provider folder
  // (ending in '/') and conda prefix ("" for none; get() passes
  // $CONDA_PREFIX), as get() does it, without caching. `use_system_search`:
  // JetPack's folder (aarch64) and the dynamic loader's search.
  static TensorRtLibrary search(const std::string& override_path, const std::string& own_folder,
                                const std::string& conda_prefix, bool use_system_search);

  bool found() const { return create_ != nullptr; }
  // Where the library was loaded from, its version, and whether it is the
  // lean runtime (version-compatible plans only).
  const std::string& path() const { return path_; }
  const TensorRtVersion& version() const { return version_; }
  bool lean() const { return lean_; }
  // Why none was found, naming every place tried (without what to install:
  // describe() adds it, and the provider adds it for a plan's own version).
  const std::string& why_not_found() const { return why_not_found_; }
  // One line for `doctor`: the library, its version, or why none and what
  // to install.
  std::string describe() const;

  // createInferRuntime with this library; `logger` must outlive the runtime.
  nvinfer1::IRuntime* create_runtime(nvinfer1::ILogger& logger) const;
  // The library's handle for further dlsym (plugins); NULL when linked.
  void* handle() const { return handle_; }

 private:
  std::string path_;
  TensorRtVersion version_;
  bool lean_ = false;
  std::string why_not_found_;
  void* handle_ = nullptr;
  CreateRuntimeFn create_ = nullptr;
};

// The TensorRT version the provider was compiled against, e.g. "11.1.0".
TensorRtVersion header_version();

}  // namespace tte::native
