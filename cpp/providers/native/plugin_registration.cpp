// Registers "tensorrt-native" when the plugin loads, so every process that
// loads the plugin (the stock ExecuTorch runtime, our Program API, tte-run)
// selects it first. Registration creates no TensorRT object: the provider
// starts TensorRT at its first deserialize, and only on a CUDA device.
// The registry and the log level are function-local statics in their own
// files, so using them from this static initializer is safe.
#include "common/logging.h"
#include "native_tensorrt_provider.h"
#include "torch_tensorrt_executorch/c_api.h"

namespace {

// Errors are formatted even when not printed, for tte's thread_last_error.
bool plugin_log_enabled(TteLogLevel level) {
  return level == TTE_LOG_ERROR || tte::log_enabled(level);
}

void plugin_log(TteLogLevel level, const char* file, int line, const char* message) {
  tte::log_message(level, file, line, "%s", message);
}

bool register_native_provider() {
  const tte::native::ProviderEnvironment environment{&tte_cuda_device_count,
                                                     &plugin_log_enabled, &plugin_log};
  TteEngineProvider provider = tte::native::make_provider(environment);
  TteError error{};
  if (tte_register_engine_provider(&provider, TTE_PROVIDER_NATIVE, &error) != TTE_OK) {
    provider.release(provider.user_data);
    TTE_LOG(ERROR, "the native TensorRT provider was not registered: %s", error.message);
    return false;
  }
  return true;
}

const bool kNativeProviderRegistered = register_native_provider();

}  // namespace
