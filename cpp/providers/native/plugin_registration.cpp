// Registers "tensorrt-native" when the plugin loads, so every process that
// loads the plugin (the stock ExecuTorch runtime, our Program API, tte-run)
// selects it first. Registration creates no TensorRT object: the provider
// starts TensorRT at its first deserialize, and only on a CUDA device.
// The registry and the log level are function-local statics in their own
// files, so using them from this static initializer is safe.
#include "backend/provider_registry.h"
#include "common/logging.h"
#include "cuda/cuda_device.h"
#include "native/native_tensorrt_provider.h"

namespace {

void plugin_log(TteLogLevel level, const char* file, int line, const char* message) {
  tte::log_message(level, file, line, "%s", message);
}

int32_t device_count() { return tte::cuda_device_count(); }

bool register_native_provider() {
  const tte::native::ProviderEnvironment environment{&device_count, &tte::log_enabled,
                                                     &plugin_log};
  TteEngineProvider provider = tte::native::make_provider(environment);
  const tte::Status status =
      tte::ProviderRegistry::instance().add(&provider, TTE_PROVIDER_NATIVE);
  if (!status.ok()) {
    provider.release(provider.user_data);
    TTE_LOG(ERROR, "the native TensorRT provider was not registered: %s",
            status.message().c_str());
    return false;
  }
  return true;
}

const bool kNativeProviderRegistered = register_native_provider();

}  // namespace
