// The engine providers registered in this process (engine_provider.h), in
// selection order. A provider is shared by the registry and by every engine
// it made, so unregistering it while engines are alive is safe: its
// `release` runs once, when the last owner lets go.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/status.h"
#include "torch_tensorrt_executorch/engine_provider.h"

namespace tte {

class EngineProvider {
 public:
  // `abi` must have passed ProviderRegistry's checks; it is copied (only the
  // fields the provider's struct_size covers) and `name` is copied.
  EngineProvider(const TteEngineProvider& abi, TteProviderKind kind, uint64_t sequence);
  ~EngineProvider();
  EngineProvider(const EngineProvider&) = delete;
  EngineProvider& operator=(const EngineProvider&) = delete;

  const std::string& name() const { return name_; }
  TteProviderKind kind() const { return kind_; }
  uint64_t sequence() const { return sequence_; }
  bool host_memory() const { return abi_.memory_kind == TTE_MEMORY_HOST; }
  bool enqueue_capturable() const { return abi_.enqueue_capturable != 0; }
  // The engine's own answer before a capture (engine_capturable), true when
  // the provider has no such function; a failed answer is logged and false.
  bool engine_capturable(TteEngine* engine, void* stream) const;
  // describe_runtime's line, or "" when the provider has none; a failed
  // answer is its message.
  std::string describe_runtime() const;
  // The copied function table; `name` points at name().
  const TteEngineProvider& abi() const { return abi_; }
  // A failed call `what` of this provider, with the reason it gave:
  // "engine provider 'NAME': WHAT failed: REASON".
  Status call_failed(TteStatus code, const TteError& error, const std::string& what) const;

 private:
  TteEngineProvider abi_{};
  std::string name_;
  TteProviderKind kind_;
  uint64_t sequence_;
};

using ProviderRef = std::shared_ptr<const EngineProvider>;

class ProviderRegistry {
 public:
  // The process-wide registry. Never destroyed: releasing providers at exit
  // could call into an interpreter that is already gone.
  static ProviderRegistry& instance();

  // Ok, or what was wrong with the provider or the name.
  Status add(const TteEngineProvider* provider, TteProviderKind kind);
  Status remove(const char* name);
  // Snapshot in selection order: native, python, other; each in registration
  // order.
  std::vector<ProviderRef> providers() const;
  ProviderRef find(const std::string& name) const;
  size_t size() const;
  // Name of provider `index` in selection order, or nullptr.
  const char* name_at(size_t index) const;

  // dlopen `path` (never closed: engines may still run its code), call its
  // entry symbol and add what it returns.
  Status load_library(const char* path, TteProviderKind kind);

  // Registers the provider libraries installed beside the plugin (the
  // native TensorRT providers, one per TensorRT major), once; what could not
  // be loaded is kept for bundled_error() and logged at info.
  void load_bundled_providers();
  // Why a bundled provider library was not registered ("" when all were).
  std::string bundled_error() const;

 private:
  ProviderRegistry() = default;

  mutable std::mutex mutex_;
  // Kept sorted in selection order.
  std::vector<ProviderRef> providers_;
  uint64_t next_sequence_ = 0;
  std::string bundled_error_;
};

// The native TensorRT providers are named by their TensorRT major,
// "tensorrt-native-11"; the load option provider="tensorrt-native" means the
// one whose major matches the plan (engine_loader.cpp).
inline constexpr char kNativeProviderAlias[] = "tensorrt-native";
std::string native_provider_name(int32_t major);
// The major of a native provider's name, or -1 for any other name.
int32_t native_provider_major(const std::string& name);

// Checks a provider struct for registration: known ABI, large enough struct,
// name and every mandatory function present. Empty string when fine.
std::string check_provider_abi(const TteEngineProvider* provider);

}  // namespace tte
