#include "backend/engine_loader.h"

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "blob/tensorrt_plan_header.h"
#include "common/logging.h"
#include "common/runtime_stats.h"
#include "common/segment_origins.h"
#include "common/sha256.h"
#include "common/tensorrt_install.h"
#include "common/text.h"
#include "cuda/cuda_device.h"

namespace tte {

namespace {

std::vector<std::string> registered_names(const ProviderRegistry& registry) {
  std::vector<std::string> names;
  for (const auto& provider : registry.providers()) {
    names.push_back(provider->name());
  }
  return names;
}

// "no native provider for TensorRT 10 is registered (...)": why a plan of
// `major` has no native provider, with what the registry says of the
// libraries beside the plugin.
std::string no_native_provider(const ProviderRegistry& registry, int32_t major) {
  const std::string bundled = registry.bundled_error();
  return "no native provider for TensorRT " + std::to_string(major) + " ('" +
         native_provider_name(major) + "') is registered" +
         (bundled.empty() ? "" : " (" + bundled + ")");
}

// The providers to ask, in order. The plan's own header (its TensorRT
// major) picks the native provider: with no load option, the native
// providers of other majors are left out (`skipped` says so); the option
// "tensorrt-native" names the one of the plan's major.
Status candidate_providers(const LoadOptions& options, const PlanHeader& plan,
                           std::vector<ProviderRef>* out, std::string* skipped) {
  ProviderRegistry& registry = ProviderRegistry::instance();
  const int32_t plan_major = plan.has_version ? plan.version[0] : -1;
  if (options.provider.empty()) {
    for (ProviderRef& provider : registry.providers()) {
      const int32_t major = native_provider_major(provider->name());
      if (major >= 0 && plan_major >= 0 && major != plan_major) {
        *skipped += (skipped->empty() ? "" : "; ") + ("'" + provider->name() + "' runs TensorRT " +
                                                      std::to_string(major) + " plans only");
        continue;
      }
      out->push_back(std::move(provider));
    }
    if (out->empty() && skipped->empty()) {
      return Status(TTE_ERROR_NOT_FOUND,
                    "no engine provider is registered, so TensorRTBackend cannot load TensorRT "
                    "engines: import torch_tensorrt_executorch_runtime in Python (needs "
                    "tensorrt-lean-" +
                        pip_cuda_suffix() + " or tensorrt-" + pip_cuda_suffix() +
                        "), or load a provider library with "
                        "tte_load_engine_provider_library (tte-run --provider LIB)");
    }
    return Status::Ok();
  }
  if (options.provider == kNativeProviderAlias) {
    if (plan_major < 0) {
      // No version to follow: every native provider, newest major first.
      for (ProviderRef& provider : registry.providers()) {
        if (native_provider_major(provider->name()) >= 0) {
          out->push_back(std::move(provider));
        }
      }
      if (out->empty()) {
        return Status(TTE_ERROR_NOT_FOUND,
                      "load option provider='tensorrt-native': no native TensorRT provider is "
                      "registered (" +
                          registry.bundled_error() + ")");
      }
      return Status::Ok();
    }
    ProviderRef native = registry.find(native_provider_name(plan_major));
    if (native == nullptr) {
      return Status(TTE_ERROR_NOT_FOUND,
                    "the plan was built by " + plan_built_by(plan) +
                        ", and load option provider='tensorrt-native' takes the native provider "
                        "of that major, but " +
                        no_native_provider(registry, plan_major) +
                        "; registered: " + join_quoted(registered_names(registry)));
    }
    out->push_back(std::move(native));
    return Status::Ok();
  }
  ProviderRef named = registry.find(options.provider);
  if (named == nullptr) {
    const std::vector<std::string> names = registered_names(registry);
    return Status(
        TTE_ERROR_NOT_FOUND,
        "engine provider '" + options.provider + "' (load option 'provider') is not registered; " +
            (names.empty() ? "no provider is registered" : "registered: " + join_quoted(names)));
  }
  out->push_back(std::move(named));
  return Status::Ok();
}

// ---- The engine cache ------------------------------------------------------
// Key: provider, plan identity, device, and every load option that
// changes what deserialize makes (the engine-wide ones). Value: the shared
// engine while a delegate uses it.

// What the plan is, for the key. A plan read from a file by the Program API
// is named by where it lies: the file's identity (device, inode, size,
// modification and change times) and the plan's offset, so loading it costs
// no pass over its bytes (a SHA-256 of a large plan takes longer than
// reading it). Any other plan (a program opened from a buffer, or by
// ExecuTorch's own runtime) is named by a SHA-256 of its bytes: two
// different plans never share a key, also when one was crafted to collide
// with another under a fast hash. The two spellings cannot meet, so a plan
// loaded both ways is deserialized once per way.
std::string plan_identity(const DelegateBlob& blob) {
  if (std::optional<std::string> origin =
          segment_origin(blob.engine, static_cast<size_t>(blob.engine_size))) {
    return "file:" + *origin;
  }
  RuntimeStats& stats = RuntimeStats::instance();
  stats.plan_digests.fetch_add(1, std::memory_order_relaxed);
  stats.plan_digest_bytes.fetch_add(blob.engine_size, std::memory_order_relaxed);
  return "sha256:" + sha256_hex(blob.engine, static_cast<size_t>(blob.engine_size)) + ':' +
         std::to_string(blob.engine_size);
}

std::string cache_key(const std::string& provider, const DelegateBlob& blob, int device,
                      const LoadOptions& options) {
  std::string key = provider;
  key += '\n' + plan_identity(blob);
  key += "\ncuda:" + std::to_string(device);
  key += "\nweights:" + (options.has_weight_streaming_budget
                             ? std::to_string(options.weight_streaming_budget)
                             : std::string("-"));
  key += "\nhost_code:" + std::to_string(options.engine_host_code_allowed ? 1 : 0);
  key += "\ndla:" + (options.has_dla_core ? std::to_string(options.dla_core) : std::string("-"));
  for (const std::string& library : options.plugin_libraries) {
    key += "\nplugin:" + library;
  }
  key += "\nruntime_cache:" + options.runtime_cache_path;
  return key;
}

struct EngineCache {
  std::mutex mutex;
  std::map<std::string, std::weak_ptr<SharedEngine>> engines;
};

EngineCache& engine_cache() {
  static EngineCache* cache =
      new EngineCache();  // never destroyed, as delegates may outlive statics
  return *cache;
}

bool has_entry(const TteEngineProvider& abi, size_t end) { return abi.struct_size >= end; }
#define TTE_PROVIDER_HAS(abi, field)                                                        \
  (has_entry(abi, offsetof(TteEngineProvider, field) + sizeof(TteEngineProvider::field)) && \
   (abi).field != nullptr)

}  // namespace

SharedEngine::SharedEngine(ProviderRef provider, TteEngine* root, int device, std::string key)
    : provider_(std::move(provider)), root_(root), device_(device), key_(std::move(key)) {}

std::unique_lock<std::mutex> SharedEngine::use_profile(int32_t profile) {
  std::mutex* in_use = nullptr;
  {
    std::lock_guard<std::mutex> lock(profiles_mutex_);
    in_use = &profiles_[profile];
  }
  return std::unique_lock<std::mutex>(*in_use);
}

SharedEngine::~SharedEngine() {
  {
    EngineCache& cache = engine_cache();
    std::lock_guard<std::mutex> lock(cache.mutex);
    auto it = cache.engines.find(key_);
    // A later load may have replaced the expired entry with a new engine.
    if (it != cache.engines.end() && it->second.expired()) {
      cache.engines.erase(it);
    }
  }
  std::optional<DeviceGuard> guard;
  if (device_ >= 0) {
    guard.emplace(device_);
  }
  provider_->abi().destroy(root_);
}

void release_engine(LoadedEngine* engine) {
  if (engine->engine != nullptr &&
      (engine->shared == nullptr || engine->engine != engine->shared->root())) {
    engine->provider->abi().destroy(engine->engine);
  }
  engine->engine = nullptr;
  engine->shared.reset();
}

size_t shared_engine_count() {
  EngineCache& cache = engine_cache();
  std::lock_guard<std::mutex> lock(cache.mutex);
  size_t count = 0;
  for (const auto& entry : cache.engines) {
    count += entry.second.expired() ? 0 : 1;
  }
  return count;
}

Status load_engine(const DelegateBlob& blob, const LoadOptions& options, bool user_managed_memory,
                   LoadedEngine* out) {
  // -1: the device current on this thread, which is where upstream's own
  // runtime would run an engine exported without a device index.
  const int32_t device_id =
      blob.metadata.device_id == kCurrentDevice ? current_cuda_device() : blob.metadata.device_id;
  if (device_id < 0) {
    return Status(TTE_ERROR_INVALID_PROGRAM, "delegate blob has device_id " +
                                                 std::to_string(device_id) +
                                                 "; expected a CUDA device index >= 0 or -1");
  }
  std::vector<const char*> plugin_libraries;
  for (const std::string& path : options.plugin_libraries) {
    plugin_libraries.push_back(path.c_str());
  }
  const PlanHeader plan = read_plan_header(blob.engine, blob.engine_size);
  std::vector<ProviderRef> candidates;
  std::string refusals;
  Status status = candidate_providers(options, plan, &candidates, &refusals);
  if (!status.ok()) {
    return status;
  }

  const int device_count = cuda_device_count();
  auto refused = [&](const std::string& text) {
    refusals += (refusals.empty() ? "" : "; ") + text;
  };
  bool no_device = false;
  bool bad_device = false;
  for (const ProviderRef& candidate : candidates) {
    const TteEngineProvider& abi = candidate->abi();
    const bool host = candidate->host_memory();
    // Device-memory providers are never asked without the device: some
    // TensorRT runtimes crash deserializing on a machine without a GPU.
    if (!host && device_count == 0) {
      refused("'" + candidate->name() + "' needs a CUDA device");
      no_device = true;
      continue;
    }
    if (!host && device_id >= device_count) {
      refused("'" + candidate->name() + "' needs cuda:" + std::to_string(device_id));
      bad_device = true;
      continue;
    }
    std::optional<DeviceGuard> guard;
    if (!host) {
      guard.emplace(device_id);
      if (guard->status() != cudaSuccess) {
        return cuda_failure(guard->status(), "selecting cuda:" + std::to_string(device_id));
      }
    }
    TteEngineLoadOptions load_options{};
    load_options.struct_size = sizeof(load_options);
    load_options.device_id = device_id;
    load_options.has_weight_streaming_budget = options.has_weight_streaming_budget ? 1 : 0;
    load_options.weight_streaming_budget = options.weight_streaming_budget;
    load_options.refuse_engine_host_code = options.engine_host_code_allowed ? 0 : 1;
    load_options.has_dla_core = options.has_dla_core ? 1 : 0;
    load_options.dla_core = options.dla_core;
    load_options.num_plugin_libraries = static_cast<int32_t>(plugin_libraries.size());
    load_options.plugin_libraries = plugin_libraries.empty() ? nullptr : plugin_libraries.data();
    load_options.runtime_cache_path =
        options.runtime_cache_path.empty() ? nullptr : options.runtime_cache_path.c_str();
    const bool user_managed = user_managed_memory && TTE_PROVIDER_HAS(abi, device_memory_size) &&
                              TTE_PROVIDER_HAS(abi, set_device_memory);
    load_options.user_managed_device_memory = user_managed ? 1 : 0;
    // A load that refuses host code treats its file as untrusted: it neither
    // takes an engine from the cache nor leaves its own there.
    const bool shareable = options.share_engines && options.engine_host_code_allowed &&
                           TTE_PROVIDER_HAS(abi, create_execution_context);
    std::string key;
    TteEngine* engine = nullptr;
    TteError error{};
    if (shareable) {
      key = cache_key(candidate->name(), blob, host ? -1 : device_id, options);
      std::shared_ptr<SharedEngine> shared;
      {
        EngineCache& cache = engine_cache();
        std::lock_guard<std::mutex> lock(cache.mutex);
        auto it = cache.engines.find(key);
        if (it != cache.engines.end()) {
          shared = it->second.lock();
        }
      }
      if (shared != nullptr) {
        const TteStatus code =
            abi.create_execution_context(shared->root(), &load_options, &engine, &error);
        if (code == TTE_OK && engine != nullptr) {
          RuntimeStats::instance().shared_engine_reuses.fetch_add(1, std::memory_order_relaxed);
          out->provider = candidate;
          out->engine = engine;
          out->shared = std::move(shared);
          out->user_managed_memory = user_managed;
          out->device = host ? -1 : device_id;
          if (!host) {
            out->traits = device_traits(device_id);
          }
          TTE_LOG(DEBUG,
                  "engine provider '%s': the plan (%llu bytes) is loaded already; "
                  "a new execution context shares it",
                  candidate->name().c_str(), static_cast<unsigned long long>(blob.engine_size));
          return Status::Ok();
        }
        // Deserialized anew instead: the engine still loads.
        TTE_LOG(WARNING,
                "engine provider '%s' could not make another execution context on a loaded "
                "engine (%s); deserializing the plan again",
                candidate->name().c_str(), code == TTE_OK ? "no handle returned" : error.message);
        engine = nullptr;
        error = TteError{};
      }
    }
    const TteStatus code = abi.deserialize(abi.user_data, blob.engine, blob.engine_size,
                                           &load_options, &engine, &error);
    if (code == TTE_ERROR_NOT_ACCEPTED && options.provider.empty()) {
      refused("'" + candidate->name() + "': " + error.message);
      continue;
    }
    if (code != TTE_OK) {
      return from_c_status(code, error)
          .prefixed("engine provider '" + candidate->name() + "' could not load the engine (" +
                    std::to_string(blob.engine_size) + " bytes): ");
    }
    if (engine == nullptr) {
      return Status(TTE_ERROR_INTERNAL, "engine provider '" + candidate->name() +
                                            "' reported success but returned no engine");
    }
    out->provider = candidate;
    out->engine = engine;
    out->user_managed_memory = user_managed;
    out->device = host ? -1 : device_id;
    if (!host) {
      out->traits = device_traits(device_id);
    }
    if (shareable) {
      auto shared = std::make_shared<SharedEngine>(candidate, engine, out->device, key);
      EngineCache& cache = engine_cache();
      std::lock_guard<std::mutex> lock(cache.mutex);
      std::weak_ptr<SharedEngine>& entry = cache.engines[key];
      // Two loads at once may both deserialize; the cache keeps the first.
      if (entry.expired()) {
        entry = shared;
      }
      out->shared = std::move(shared);
    }
    return Status::Ok();
  }

  // The code of a delegate no provider could take: ExecuTorch's
  // DelegateInvalidCompatibility, except without any device at all.
  if (no_device) {
    return Status(TTE_ERROR_NO_DEVICE, "no CUDA device (" + cuda_unavailable_reason() +
                                           "): TensorRT engines need an NVIDIA GPU (" + refusals +
                                           ")");
  }
  if (bad_device) {
    return Status(TTE_ERROR_NOT_ACCEPTED,
                  "the engine is for cuda:" + std::to_string(device_id) +
                      " but this process sees " + std::to_string(device_count) +
                      " CUDA device(s) (check CUDA_VISIBLE_DEVICES) (" + refusals + ")");
  }
  // A TensorRT plan whose major has no native provider here: that is the
  // first thing to fix, whatever else refused it.
  if (plan.has_version &&
      ProviderRegistry::instance().find(native_provider_name(plan.version[0])) == nullptr) {
    return Status(TTE_ERROR_NOT_ACCEPTED,
                  "the plan was built by " + plan_built_by(plan) + ", and " +
                      no_native_provider(ProviderRegistry::instance(), plan.version[0]) +
                      ": use a build of this package with the TensorRT " +
                      std::to_string(plan.version[0]) +
                      " provider, or the Python provider with TensorRT " +
                      std::to_string(plan.version[0]) + "'s Python module installed (" +
                      (refusals.empty() ? "no other provider was asked" : refusals) + ")");
  }
  return Status(TTE_ERROR_NOT_ACCEPTED,
                "no registered engine provider accepts this engine: " + refusals);
}

}  // namespace tte
