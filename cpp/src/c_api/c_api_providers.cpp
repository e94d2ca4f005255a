// The engine-provider group of c_api.h, over ProviderRegistry. A refused
// registration is also logged: a provider library loaded at startup often
// has no caller that reads the TteError.
#include <cstring>
#include <string>

#include "backend/provider_registry.h"
#include "common/logging.h"
#include "common/status.h"
#include "torch_tensorrt_executorch/c_api.h"

namespace {

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
  return report(tte::ProviderRegistry::instance().add(provider, kind), error);
}

TTE_API TteStatus tte_unregister_engine_provider(const char* name, TteError* error) {
  return report(tte::ProviderRegistry::instance().remove(name), error);
}

TTE_API size_t tte_num_engine_providers(void) {
  return tte::ProviderRegistry::instance().size();
}

TTE_API const char* tte_engine_provider_name(size_t index) {
  return tte::ProviderRegistry::instance().name_at(index);
}

TTE_API TteStatus tte_load_engine_provider_library(const char* path, TteProviderKind kind,
                                                   TteError* error) {
  return report(tte::ProviderRegistry::instance().load_library(path, kind), error);
}

TTE_API TteStatus tte_engine_provider_runtime(const char* name, char** out_text,
                                              TteError* error) {
  tte::ProviderRegistry& registry = tte::ProviderRegistry::instance();
  tte::Status status;
  if (name == nullptr || out_text == nullptr) {
    status = tte::Status(TTE_ERROR_INVALID_ARGUMENT, "name and out_text must not be NULL");
  } else if (tte::ProviderRef provider = registry.find(name); provider == nullptr) {
    const std::string why = registry.bundled_error();
    status = tte::Status(TTE_ERROR_NOT_FOUND, std::string("engine provider '") + name +
                                                  "' is not registered" +
                                                  (why.empty() ? "" : ": " + why));
  } else {
    *out_text = strdup(provider->describe_runtime().c_str());
    if (*out_text == nullptr) {
      status = tte::Status(TTE_ERROR_HOST_OUT_OF_MEMORY, "out of host memory");
    }
  }
  // Not logged: asking about a provider that is absent is a question.
  return tte::to_c_status(status, error);
}

}  // extern "C"
