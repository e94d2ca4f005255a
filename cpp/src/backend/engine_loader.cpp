#include "backend/engine_loader.h"

#include <optional>
#include <string>
#include <vector>

#include "common/text.h"
#include "cuda/cuda_device.h"

namespace tte {

namespace {

Status candidate_providers(const LoadOptions& options, std::vector<ProviderRef>* out) {
  ProviderRegistry& registry = ProviderRegistry::instance();
  if (options.provider.empty()) {
    *out = registry.providers();
    if (out->empty()) {
      return Status(TTE_ERROR_NOT_FOUND,
                    "no engine provider is registered, so TensorRTBackend cannot load TensorRT "
                    "engines: import torch_tensorrt_executorch_runtime in Python (needs "
                    "tensorrt-lean-cu13 or tensorrt-cu13), or load a provider library with "
                    "tte_load_engine_provider_library (tte-run --provider LIB)");
    }
    return Status::Ok();
  }
  ProviderRef named = registry.find(options.provider);
  if (named == nullptr) {
    std::vector<std::string> names;
    for (const auto& provider : registry.providers()) {
      names.push_back(provider->name());
    }
    return Status(
        TTE_ERROR_NOT_FOUND,
        "engine provider '" + options.provider + "' (load option 'provider') is not registered; " +
            (names.empty() ? "no provider is registered" : "registered: " + join_quoted(names)));
  }
  out->push_back(std::move(named));
  return Status::Ok();
}

}  // namespace

Status load_engine(const DelegateBlob& blob, const LoadOptions& options, LoadedEngine* out) {
  const int32_t device_id = blob.metadata.device_id;
  if (device_id < 0) {
    return Status(TTE_ERROR_INVALID_PROGRAM, "delegate blob has device_id " +
                                                 std::to_string(device_id) +
                                                 "; expected a CUDA device index >= 0");
  }
  std::vector<ProviderRef> candidates;
  Status status = candidate_providers(options, &candidates);
  if (!status.ok()) {
    return status;
  }

  const int device_count = cuda_device_count();
  std::string refusals;
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
    TteEngine* engine = nullptr;
    TteError error{};
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
    out->device = host ? -1 : device_id;
    out->integrated = !host && is_integrated_gpu(device_id);
    return Status::Ok();
  }

  // The code of a delegate no provider could take: ExecuTorch's
  // DelegateInvalidCompatibility, except without any device at all.
  if (no_device) {
    return Status(TTE_ERROR_NO_DEVICE,
                  "no CUDA device: TensorRTBackend needs an NVIDIA GPU (" + refusals + ")");
  }
  if (bad_device) {
    return Status(TTE_ERROR_NOT_ACCEPTED,
                  "the engine is for cuda:" + std::to_string(device_id) +
                      " but this process sees " + std::to_string(device_count) +
                      " CUDA device(s) (check CUDA_VISIBLE_DEVICES) (" + refusals + ")");
  }
  return Status(TTE_ERROR_NOT_ACCEPTED,
                "no registered engine provider accepts this engine: " + refusals);
}

}  // namespace tte
