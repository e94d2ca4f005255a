#include "native/tensorrt_library.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <mutex>
#include <vector>

#include "common/library_folder.h"

namespace tte::native {
namespace {

std::string major_text() { return std::to_string(NV_TENSORRT_MAJOR); }

std::string full_name() { return "libnvinfer.so." + major_text(); }
std::string lean_name() { return "libnvinfer_lean.so." + major_text(); }

bool is_lean(const std::string& path) { return path.find("nvinfer_lean") != std::string::npos; }

// The folder this library was loaded from.
std::string provider_folder() {
  return library_folder(reinterpret_cast<const void*>(&provider_folder));
}

// Whether two folder paths name one folder (false when either is missing).
bool same_folder(const std::string& a, const std::string& b) {
  if (a.empty() || b.empty()) {
    return false;
  }
  char* real_a = realpath(a.c_str(), nullptr);
  char* real_b = realpath(b.c_str(), nullptr);
  const bool same = real_a != nullptr && real_b != nullptr && std::string(real_a) == real_b;
  std::free(real_a);
  std::free(real_b);
  return same;
}

struct Candidate {
  std::string path;
  bool by_loader = false;  // a bare name, resolved by the dynamic loader
};

// Where JetPack installs TensorRT; the loader finds it there too through
// ld.so.cache, but a cache rebuilt without that folder would not.
#if defined(__aarch64__)
constexpr const char* kJetPackFolder = "/usr/lib/aarch64-linux-gnu/";
#else
constexpr const char* kJetPackFolder = "";
#endif

}  // namespace

std::string TensorRtVersion::text() const {
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

TensorRtVersion decode_tensorrt_version(int32_t packed) {
  return TensorRtVersion{packed / 10000, packed / 100 % 100, packed % 100};
}

TensorRtVersion header_version() {
  return TensorRtVersion{NV_TENSORRT_MAJOR, NV_TENSORRT_MINOR, NV_TENSORRT_PATCH};
}

std::string version_mismatch(const TensorRtVersion& found, const TensorRtVersion& built) {
  if (found.major != built.major) {
    return "it is TensorRT " + found.text() + ", and this provider needs TensorRT " +
           std::to_string(built.major) + " (" + built.text() + " or a later " +
           std::to_string(built.major) + ".x): the C++ interfaces differ between major versions";
  }
  if (found.minor < built.minor) {
    return "it is TensorRT " + found.text() + ", older than the TensorRT " + built.text() +
           " this provider was built against: install TensorRT " + built.text() + " or a later " +
           std::to_string(built.major) + ".x";
  }
  return "";
}

TensorRtLibrary TensorRtLibrary::search(const std::string& override_path,
                                        const std::string& own_folder,
                                        const std::string& conda_prefix, bool use_system_search) {
  std::vector<Candidate> candidates;
  std::vector<std::string> folders;
  if (!override_path.empty()) {
    candidates.push_back({override_path, false});
  } else {
    if (!own_folder.empty()) {
      for (const std::string& folder : {own_folder + "../../tensorrt_libs/",
                                        own_folder + "../../tensorrt_lean_libs/", own_folder}) {
        folders.push_back(folder);
      }
      candidates.push_back({own_folder + "../../tensorrt_libs/" + full_name(), false});
      candidates.push_back({own_folder + "../../tensorrt_lean_libs/" + lean_name(), false});
      candidates.push_back({own_folder + full_name(), false});
      candidates.push_back({own_folder + lean_name(), false});
    }
    // The wheel pip-installed into a conda environment: the provider's
    // RUNPATH names only the wheels' folders, so the environment's lib/ (where
    // conda's libnvinfer is) is not one the loader searches for it. Skipped
    // when it is the provider's own folder (the conda package).
    const std::string conda_folder = conda_prefix.empty() ? "" : conda_prefix + "/lib/";
    if (!conda_folder.empty() && !same_folder(conda_folder, own_folder)) {
      folders.push_back(conda_folder);
      candidates.push_back({conda_folder + full_name(), false});
      candidates.push_back({conda_folder + lean_name(), false});
    }
    if (use_system_search && kJetPackFolder[0] != '\0') {
      folders.push_back(kJetPackFolder);
      candidates.push_back({kJetPackFolder + full_name(), false});
      candidates.push_back({kJetPackFolder + lean_name(), false});
    }
    if (use_system_search) {
      candidates.push_back({full_name(), true});
      candidates.push_back({lean_name(), true});
    }
  }

  TensorRtLibrary library;
  std::string notes;
  auto note = [&](const std::string& text) { notes += (notes.empty() ? "" : "; ") + text; };
  for (const Candidate& candidate : candidates) {
    if (!candidate.by_loader && access(candidate.path.c_str(), F_OK) != 0) {
      if (!override_path.empty()) {
        note(candidate.path + " does not exist");
      }
      continue;
    }
    // Local: this TensorRT's symbols stay out of the global scope, where
    // another copy (a Python binding's) may live too.
    void* handle = dlopen(candidate.path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* why = dlerror();
      if (candidate.by_loader) {
        continue;  // not installed system-wide: the usual case
      }
      note(candidate.path + ": " + (why != nullptr ? why : "dlopen failed"));
      continue;
    }
    auto version = reinterpret_cast<VersionFn>(dlsym(handle, "getInferLibVersion"));
    auto create = reinterpret_cast<CreateRuntimeFn>(dlsym(handle, "createInferRuntime_INTERNAL"));
    if (version == nullptr || create == nullptr) {
      note(candidate.path +
           " is not a TensorRT runtime library (no getInferLibVersion and "
           "createInferRuntime_INTERNAL)");
      continue;  // left loaded: closing a library TensorRT's may have touched is not worth it
    }
    const TensorRtVersion found = decode_tensorrt_version(version());
    const std::string mismatch = version_mismatch(found, header_version());
    if (!mismatch.empty()) {
      note(candidate.path + ": " + mismatch);
      continue;
    }
    // Where the loader found it (by_loader), resolved for messages.
    Dl_info info{};
    const bool located =
        dladdr(reinterpret_cast<void*>(version), &info) != 0 && info.dli_fname != nullptr;
    char* resolved = realpath(located ? info.dli_fname : candidate.path.c_str(), nullptr);
    library.path_ = resolved != nullptr ? resolved : candidate.path;
    std::free(resolved);
    library.version_ = found;
    library.lean_ = is_lean(library.path_);
    library.handle_ = handle;
    library.create_ = create;
    return library;
  }

  std::string looked;
  if (!override_path.empty()) {
    looked = "looked only at " + override_path + ", set by $" +
             tensorrt_library_env(NV_TENSORRT_MAJOR) + " or $" + kTensorRtLibraryEnv;
  } else {
    looked = "looked for " + full_name() + " and " + lean_name() + " in ";
    for (const std::string& folder : folders) {
      looked += folder + ", ";
    }
    looked += use_system_search ? "and the dynamic loader's search path" : "nowhere else";
  }
  library.why_not_found_ = "no usable TensorRT " + major_text() + " library (" + looked +
                           (notes.empty() ? "" : "; " + notes) + ")";
  return library;
}

const TensorRtLibrary& TensorRtLibrary::get() {
  static const TensorRtLibrary library = [] {
#if defined(TTE_TENSORRT_LINK)
    // Linked at build time (conda): the library the loader already chose.
    TensorRtLibrary linked;
    linked.version_ = decode_tensorrt_version(getInferLibVersion());
    linked.create_ = &createInferRuntime_INTERNAL;
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&getInferLibVersion), &info) != 0 &&
        info.dli_fname != nullptr) {
      linked.path_ = info.dli_fname;
    }
    linked.lean_ = is_lean(linked.path_);
    const std::string mismatch = version_mismatch(linked.version_, header_version());
    if (!mismatch.empty()) {
      linked.create_ = nullptr;
      linked.why_not_found_ =
          "the linked TensorRT library " + linked.path_ + " cannot be used: " + mismatch;
    }
    return linked;
#else
    // The major's own variable first, so each provider can be pointed at
    // its own library.
    const char* override_path = std::getenv(tensorrt_library_env(NV_TENSORRT_MAJOR).c_str());
    if (override_path == nullptr || *override_path == '\0') {
      override_path = std::getenv(kTensorRtLibraryEnv);
    }
    const char* conda_prefix = std::getenv("CONDA_PREFIX");
    return search(override_path != nullptr ? override_path : "", provider_folder(),
                  conda_prefix != nullptr ? conda_prefix : "", true);
#endif
  }();
  return library;
}

std::string TensorRtLibrary::describe() const {
  if (!found()) {
    return why_not_found_ + ": " +
           tensorrt_install_hint(NV_TENSORRT_MAJOR, NV_TENSORRT_MINOR, false);
  }
  return "TensorRT " + version_.text() + (lean_ ? " lean runtime" : "") + " from " + path_ +
         " (provider built against TensorRT " + header_version().text() + " headers)";
}

nvinfer1::IRuntime* TensorRtLibrary::create_runtime(nvinfer1::ILogger& logger) const {
  if (create_ == nullptr) {
    return nullptr;
  }
  // What the header's inline createInferRuntime does: the base ILogger
  // pointer and the header's version (NvInferRuntime.h:5062-5066).
  return static_cast<nvinfer1::IRuntime*>(
      create_(static_cast<void*>(&logger), NV_TENSORRT_VERSION));
}

}  // namespace tte::native
