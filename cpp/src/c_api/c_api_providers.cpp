// The engine-provider group of c_api.h, over ProviderRegistry.
#include <string>

#include "common/logging.h"
#include "backend/provider_registry.h"
#include "torch_tensorrt_executorch/c_api.h"

extern "C" {

TTE_API TteStatus tte_register_engine_provider(const TteEngineProvider* provider,
                                               TteProviderKind kind, TteError* error) {
  std::string message;
  TteStatus status = tte::ProviderRegistry::instance().add(provider, kind, &message);
  return status == TTE_OK ? TTE_OK : tte::report_error(error, status, message);
}

TTE_API TteStatus tte_unregister_engine_provider(const char* name, TteError* error) {
  std::string message;
  TteStatus status = tte::ProviderRegistry::instance().remove(name, &message);
  return status == TTE_OK ? TTE_OK : tte::report_error(error, status, message);
}

TTE_API size_t tte_num_engine_providers(void) {
  return tte::ProviderRegistry::instance().size();
}

TTE_API const char* tte_engine_provider_name(size_t index) {
  return tte::ProviderRegistry::instance().name_at(index);
}

TTE_API TteStatus tte_load_engine_provider_library(const char* path, TteProviderKind kind,
                                                   TteError* error) {
  std::string message;
  TteStatus status = tte::ProviderRegistry::instance().load_library(path, kind, &message);
  return status == TTE_OK ? TTE_OK : tte::report_error(error, status, message);
}

}  // extern "C"
