// From a delegate blob to an engine: which registered provider deserializes
// the plan (the load option's, else the first that accepts it, never a
// device provider without the device), on which device.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "backend/load_options.h"
#include "backend/provider_registry.h"
#include "blob/blob_reader.h"
#include "common/status.h"
#include "cuda/cuda_device.h"

namespace tte {

// A deserialized engine that several delegates share (load option
// share_engines, providers with create_execution_context): the handle the
// first load deserialized. Destroyed, and dropped from the engine cache,
// with the last delegate that uses it (docs/architecture.md, "Shared
// engines").
class SharedEngine {
 public:
  SharedEngine(ProviderRef provider, TteEngine* root, int device, std::string key);
  ~SharedEngine();
  SharedEngine(const SharedEngine&) = delete;
  SharedEngine& operator=(const SharedEngine&) = delete;
  TteEngine* root() const { return root_; }
  // Profile `profile` of the engine for one call of one of its delegates,
  // returned locked: a call of another delegate on the same profile waits
  // (dynamic-shape engines: one context per profile in concurrent use).
  std::unique_lock<std::mutex> use_profile(int32_t profile);

 private:
  ProviderRef provider_;
  TteEngine* root_;
  int device_;
  std::string key_;
  std::mutex profiles_mutex_;
  std::map<int32_t, std::mutex> profiles_;  // nodes stay where they are
};

// A deserialized engine and the provider that made it; the provider stays
// registered for as long as this reference lives.
struct LoadedEngine {
  ProviderRef provider;
  // The delegate's handle. With `shared`, either shared->root() (the load
  // that deserialized it) or a handle of its own from
  // create_execution_context; the delegate destroys only the latter, and
  // drops `shared` afterwards.
  TteEngine* engine = nullptr;
  std::shared_ptr<SharedEngine> shared;
  // Loaded with user_managed_device_memory: the engine's scratch comes from
  // set_device_memory (backend/scratch_arenas.h).
  bool user_managed_memory = false;
  // The CUDA device the engine runs on; -1 for a host provider.
  int device = -1;
  DeviceTraits traits;  // of `device`: integrated, pageable memory access
};

// Asks for user-managed device memory when `user_managed_memory` and the
// provider has the device-memory entries; shares an engine already loaded
// (options.share_engines) when the provider has create_execution_context.
Status load_engine(const DelegateBlob& blob, const LoadOptions& options, bool user_managed_memory,
                   LoadedEngine* out);

// Releases what load_engine gave: the delegate's own handle, then its share
// of the engine. On the engine's device (the caller makes it current).
void release_engine(LoadedEngine* engine);

// Deserialized engines the cache holds now (for tests).
size_t shared_engine_count();

}  // namespace tte
