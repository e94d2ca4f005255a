// libtte_provider_tensorrt<major>.so's entry: the "tensorrt-native-<major>"
// table for whoever loads the library (the plugin registers it when it loads; tte-run
// --provider and tte_load_engine_provider_library take it too). Until the
// host attaches its log (attach_host), warnings and errors go to stderr.
#include <atomic>
#include <cstdio>
#include <mutex>

#include "cuda/cuda_device.h"
#include "native/native_tensorrt_provider.h"

namespace {

std::atomic<const TteProviderHost*> g_host{nullptr};

bool log_enabled(TteLogLevel level) {
  const TteProviderHost* host = g_host.load(std::memory_order_acquire);
  return host != nullptr ? host->log_enabled(level) != 0 : level >= TTE_LOG_WARNING;
}

void log(TteLogLevel level, const char* /*file*/, int /*line*/, const char* message) {
  const TteProviderHost* host = g_host.load(std::memory_order_acquire);
  if (host != nullptr) {
    host->log(level, message);
  } else {
    std::fprintf(stderr, "%s: %s\n", tte::native::kProviderName, message);
  }
}

void attach_host(void* /*user_data*/, const TteProviderHost* host) {
  if (host != nullptr && host->struct_size >= sizeof(TteProviderHost)) {
    g_host.store(host, std::memory_order_release);
  }
}

}  // namespace

extern "C" __attribute__((visibility("default"))) const TteEngineProvider*
tte_engine_provider_entry(uint32_t abi_version) {
  if (abi_version != TTE_ENGINE_PROVIDER_ABI_VERSION) {
    return nullptr;
  }
  // A new state per call: the registry copies the table and calls its
  // release when it lets go, so a provider unregistered and loaded again
  // never sees a released state.
  static std::mutex mutex;
  static TteEngineProvider provider;
  std::lock_guard<std::mutex> lock(mutex);
  provider = tte::native::make_provider(
      tte::native::ProviderEnvironment{&tte::cuda_device_count, &log_enabled, &log});
  provider.attach_host = &attach_host;
  return &provider;
}
