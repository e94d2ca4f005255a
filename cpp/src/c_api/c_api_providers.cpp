// The engine-provider group of c_api.h, over ProviderRegistry. A refused
// registration is also logged: a provider library loaded at startup often
// has no caller that reads the TteError.
#include <cstring>
#include <string>

#include "backend/provider_registry.h"
#include "c_api/c_boundary.h"
#include "common/logging.h"
#include "common/status.h"
#include "torch_tensorrt_executorch/c_api.h"

namespace {

using tte::c_boundary::guarded;
using tte::c_boundary::status_call;
using tte::c_boundary::value_call;

// A refused registration is logged too.
TteStatus report(const tte::Status& status, TteError* error) {
  if (!status.ok()) {
    TTE_LOG(ERROR, "%s", status.message().c_str());
  }
  return tte::to_c_status(status, error);
}

}  // namespace

extern "C" {

TTE_API TteStatus tte_register_engine_provider(const TteEngineProvider* provider,
                                               TteProviderKind kind, TteError* error) {
  return report(guarded("tte_register_engine_provider",
                        [&] { return tte::ProviderRegistry::instance().add(provider, kind); }),
                error);
}

TTE_API TteStatus tte_unregister_engine_provider(const char* name, TteError* error) {
  return report(guarded("tte_unregister_engine_provider",
                        [&] { return tte::ProviderRegistry::instance().remove(name); }),
                error);
}

TTE_API size_t tte_num_engine_providers(void) {
  return value_call("tte_num_engine_providers", size_t{0},
                    [] { return tte::ProviderRegistry::instance().size(); });
}

TTE_API const char* tte_engine_provider_name(size_t index) {
  return value_call("tte_engine_provider_name", static_cast<const char*>(nullptr),
                    [index] { return tte::ProviderRegistry::instance().name_at(index); });
}

TTE_API TteStatus tte_load_engine_provider_library(const char* path, TteProviderKind kind,
                                                   TteError* error) {
  return report(guarded("tte_load_engine_provider_library",
                        [&] { return tte::ProviderRegistry::instance().load_library(path, kind); }),
                error);
}

// Not logged: asking about a provider that is absent is a question.
TTE_API TteStatus tte_engine_provider_runtime(const char* name, char** out_text, TteError* error) {
  return status_call("tte_engine_provider_runtime", error, [&] {
    if (name == nullptr || out_text == nullptr) {
      return tte::Status(TTE_ERROR_INVALID_ARGUMENT, "name and out_text must not be NULL");
    }
    tte::ProviderRegistry& registry = tte::ProviderRegistry::instance();
    const tte::ProviderRef provider = registry.find(name);
    if (provider == nullptr) {
      const std::string why = registry.bundled_error();
      return tte::Status(TTE_ERROR_NOT_FOUND, std::string("engine provider '") + name +
                                                  "' is not registered" +
                                                  (why.empty() ? "" : ": " + why));
    }
    *out_text = strdup(provider->describe_runtime().c_str());
    if (*out_text == nullptr) {
      return tte::Status(TTE_ERROR_HOST_OUT_OF_MEMORY, "out of host memory");
    }
    return tte::Status::Ok();
  });
}

}  // extern "C"
