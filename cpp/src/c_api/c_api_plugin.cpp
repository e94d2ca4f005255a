// The plugin group of c_api.h: versions, registration ownership, log level,
// CUDA device count and allocator owner.
#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <string>

#include "backend/tensorrt_backend.h"
#include "c_api/c_boundary.h"
#include "common/executorch_log.h"
#include "common/logging.h"
#include "common/status.h"
#include "cuda/cuda_allocator.h"
#include "cuda/cuda_device.h"
#include "torch_tensorrt_executorch/c_api.h"
#include "tte_version.h"

extern "C" {

using tte::c_boundary::status_call;
using tte::c_boundary::value_call;
using tte::c_boundary::void_call;

TTE_API uint32_t tte_c_api_version(void) {
  return value_call("tte_c_api_version", 0u, [] { return TTE_C_API_VERSION; });
}

TTE_API const char* tte_version(void) {
  return value_call("tte_version", "", [] { return TTE_VERSION_STRING; });
}

TTE_API const char* tte_executorch_version(void) {
  return value_call("tte_executorch_version", "", [] { return TTE_EXECUTORCH_VERSION_STRING; });
}

TTE_API int32_t tte_owns_backend_registration(void) {
  return value_call("tte_owns_backend_registration", int32_t{0},
                    [] { return tte::owns_registration() ? int32_t{1} : int32_t{0}; });
}

TTE_API TteStatus tte_registration_status(TteError* error) {
  return status_call("tte_registration_status", error, [] {
    if (tte::registration_result() == executorch::runtime::Error::Ok) {
      return tte::Status::Ok();
    }
    const TteStatus status = tte::registration_result() == executorch::runtime::Error::Internal
                                 ? TTE_ERROR_INTERNAL
                                 : TTE_ERROR_INVALID_STATE;
    return tte::Status(status, tte::registration_problem());
  });
}

TTE_API const char* tte_registration_owner_path(void) {
  return value_call("tte_registration_owner_path", static_cast<const char*>(nullptr),
                    []() -> const char* {
                      // Registrations are never undone, so the first path found stays right.
                      static std::mutex mutex;
                      static std::string path;
                      std::lock_guard<std::mutex> lock(mutex);
                      if (path.empty()) {
                        path = tte::registration_owner_path();
                      }
                      return path.empty() ? nullptr : path.c_str();
                    });
}

TTE_API const char* tte_library_path(void) {
  return value_call("tte_library_path", "", [] {
    static const std::string path = [] {
      Dl_info info{};
      if (dladdr(reinterpret_cast<void*>(&tte_library_path), &info) == 0 ||
          info.dli_fname == nullptr) {
        return std::string();
      }
      return std::string(info.dli_fname);
    }();
    return path.c_str();
  });
}

TTE_API void tte_set_log_level(TteLogLevel level) {
  void_call("tte_set_log_level", [level] {
    tte::set_log_level(level);
    // Takes ExecuTorch's log back if its Python extension, loaded since,
    // installed its own printer.
    tte::route_executorch_log();
  });
}

TTE_API TteLogLevel tte_get_log_level(void) {
  return value_call("tte_get_log_level", static_cast<TteLogLevel>(TTE_LOG_WARNING),
                    [] { return tte::log_level(); });
}

TTE_API int32_t tte_cuda_device_count(void) {
  return value_call("tte_cuda_device_count", int32_t{0}, [] { return tte::cuda_device_count(); });
}

TTE_API const char* tte_cuda_unavailable_reason(void) {
  return value_call("tte_cuda_unavailable_reason", "",
                    [] { return tte::cuda_unavailable_reason().c_str(); });
}

TTE_API const char* tte_cuda_allocator_owner(void) {
  return value_call("tte_cuda_allocator_owner", "", [] { return tte::cuda_allocator_owner(); });
}

TTE_API void tte_free_string(char* str) {
  void_call("tte_free_string", [str] { std::free(str); });
}

}  // extern "C"
