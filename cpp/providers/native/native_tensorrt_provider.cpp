// The provider ABI over TensorRtEngine and RuntimePool: argument checks, the
// plans that are not TensorRT's, and Status to TteError. No exception leaves
// these functions.
#include "native/native_tensorrt_provider.h"

#include <NvInferRuntime.h>

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <string>

#include "blob/tensorrt_plan_header.h"
#include "common/status.h"
#include "common/tensorrt_install.h"
#include "native/plan_header.h"
#include "native/runtime_pool.h"
#include "native/tensorrt_engine.h"
#include "native/tensorrt_library.h"
#include "native/tensorrt_logger.h"
#include "plan_magic.h"

namespace tte::native {
namespace {

struct ProviderState {
  explicit ProviderState(const ProviderEnvironment& environment)
      : environment(environment), runtimes(environment) {}

  ProviderEnvironment environment;
  RuntimePool runtimes;
};

TensorRtEngine* engine_of(TteEngine* engine) { return reinterpret_cast<TensorRtEngine*>(engine); }

TteStatus report(const Status& status, TteError* error) {
  return status.ok() ? TTE_OK : to_c_status(status, error);
}

// Runs `body` (returning Status), turning exceptions into statuses.
template <typename Body>
TteStatus guarded(TteError* error, Body&& body) {
  try {
    return report(body(), error);
  } catch (const std::bad_alloc&) {
    return report(
        Status(TTE_ERROR_HOST_OUT_OF_MEMORY, "out of host memory in the native TensorRT provider"),
        error);
  } catch (const std::exception& e) {
    return report(Status(TTE_ERROR_INTERNAL,
                         std::string("native TensorRT provider: unexpected error: ") + e.what()),
                  error);
  } catch (...) {
    return report(Status(TTE_ERROR_INTERNAL, "native TensorRT provider: unexpected error"), error);
  }
}

Status check_engine(TteEngine* engine) {
  return engine != nullptr ? Status::Ok()
                           : Status(TTE_ERROR_INVALID_ARGUMENT, "engine handle is NULL");
}

Status check_index(TteEngine* engine, int32_t index) {
  Status status = check_engine(engine);
  if (status.ok() && (index < 0 || index >= engine_of(engine)->num_io_tensors())) {
    status =
        Status(TTE_ERROR_INVALID_ARGUMENT,
               "I/O tensor index " + std::to_string(index) + " is out of range (the engine has " +
                   std::to_string(engine_of(engine)->num_io_tensors()) + ")");
  }
  return status;
}

// True when `options` (of the caller's struct_size) has the field that ends
// `end` bytes into the struct.
bool has_field(const TteEngineLoadOptions* options, size_t end) {
  return options != nullptr && options->struct_size >= end;
}

#define TTE_OPTION_END(field) \
  (offsetof(TteEngineLoadOptions, field) + sizeof(TteEngineLoadOptions::field))

Status deserialize(ProviderState& state, const void* plan, uint64_t plan_size,
                   const TteEngineLoadOptions* options, TteEngine** out_engine) {
  if (out_engine == nullptr) {
    return Status(TTE_ERROR_INVALID_ARGUMENT, "out_engine is NULL");
  }
  *out_engine = nullptr;
  if (plan == nullptr && plan_size > 0) {
    return Status(TTE_ERROR_INVALID_ARGUMENT,
                  "plan is NULL but its size is " + std::to_string(plan_size));
  }
  // Plans that are known not to be TensorRT's never reach TensorRT.
  if (plan_size == 0) {
    return Status(TTE_ERROR_NOT_ACCEPTED, "the plan is empty: not a TensorRT plan");
  }
  if (is_test_engine_plan(plan, plan_size)) {
    return Status(TTE_ERROR_NOT_ACCEPTED,
                  "the plan is a test engine (TTE-TEST-ENGINE), not a TensorRT plan; the test "
                  "providers run it");
  }
  // A plan of another major never reaches this TensorRT: its C++ interfaces
  // and plan format are another major's (the plugin routes plans by this
  // same header; this catches an explicit provider choice).
  const PlanHeader header = read_plan_header(plan, plan_size);
  if (header.has_version && header.version[0] != NV_TENSORRT_MAJOR) {
    return Status(TTE_ERROR_NOT_ACCEPTED,
                  "the plan was built by " + plan_built_by(header) + ", and " + kProviderName +
                      " runs TensorRT " + std::to_string(NV_TENSORRT_MAJOR) +
                      " plans only: load it with provider 'tensorrt-native-" +
                      std::to_string(header.version[0]) +
                      "' (or 'tensorrt-native', which "
                      "follows the plan), which needs TensorRT " +
                      std::to_string(header.version[0]) + ": " +
                      tensorrt_install_hint(header.version[0], header.version[1], true));
  }

  const int32_t device = has_field(options, TTE_OPTION_END(device_id)) ? options->device_id : 0;
  LoadRequest request;
  if (has_field(options, TTE_OPTION_END(weight_streaming_budget)) &&
      options->has_weight_streaming_budget != 0) {
    request.weights.has_budget = true;
    request.weights.budget = options->weight_streaming_budget;
  }
  if (has_field(options, TTE_OPTION_END(refuse_engine_host_code))) {
    request.runtime.host_code_allowed = options->refuse_engine_host_code == 0;
  }
  if (has_field(options, TTE_OPTION_END(dla_core)) && options->has_dla_core != 0) {
    if (options->dla_core < 0) {
      return Status(TTE_ERROR_INVALID_ARGUMENT,
                    "dla_core must be >= 0, got " + std::to_string(options->dla_core));
    }
    request.runtime.dla_core = options->dla_core;
  }
  if (has_field(options, TTE_OPTION_END(plugin_libraries))) {
    for (int32_t i = 0; i < options->num_plugin_libraries; ++i) {
      if (options->plugin_libraries == nullptr || options->plugin_libraries[i] == nullptr) {
        return Status(TTE_ERROR_INVALID_ARGUMENT, "plugin_libraries holds a NULL path");
      }
      request.runtime.plugin_libraries.emplace_back(options->plugin_libraries[i]);
    }
  }
  if (has_field(options, TTE_OPTION_END(runtime_cache_path)) &&
      options->runtime_cache_path != nullptr && options->runtime_cache_path[0] != '\0') {
    // TensorRT's C++ runtime (this provider) compiles no kernels at load;
    // the cache is TensorRT-RTX's, served by the Python provider.
    TTE_NATIVE_LOG(state.environment, INFO,
                   "load option runtime_cache_path ignored: TensorRT %s keeps no runtime cache "
                   "(TensorRT-RTX does, through the Python provider)",
                   tensorrt_header_version());
  }

  if (has_field(options, TTE_OPTION_END(user_managed_device_memory))) {
    request.user_managed_memory = options->user_managed_device_memory != 0;
  }

  std::shared_ptr<DeviceRuntime> runtime;
  Status status = state.runtimes.acquire(device, &runtime);
  // Not accepted only when no library was found (the device checks come
  // first): named with the version this plan needs.
  if (status.code() == TTE_ERROR_NOT_ACCEPTED && !TensorRtLibrary::get().found()) {
    const TensorRtLibrary& library = TensorRtLibrary::get();
    return Status(status.code(),
                  "the plan was built by " + plan_built_by(header) + ", and " +
                      library.why_not_found() + ": " +
                      (header.has_version
                           ? tensorrt_install_hint(NV_TENSORRT_MAJOR, header.version[1], true)
                           : tensorrt_install_hint(NV_TENSORRT_MAJOR, NV_TENSORRT_MINOR, false)));
  }
  if (!status.ok()) {
    return status;
  }
  const std::string newer = newer_plan_refusal(header, runtime->library->version());
  if (!newer.empty()) {
    return Status(TTE_ERROR_NOT_ACCEPTED, newer);
  }
  std::unique_ptr<TensorRtEngine> engine;
  status = TensorRtEngine::load(std::move(runtime), state.environment, plan, plan_size, request,
                                &engine);
  if (!status.ok()) {
    return status;
  }
  *out_engine = reinterpret_cast<TteEngine*>(engine.release());
  return Status::Ok();
}

TteStatus abi_deserialize(void* user_data, const void* plan, uint64_t plan_size,
                          const TteEngineLoadOptions* options, TteEngine** out_engine,
                          TteError* error) {
  return guarded(error, [&] {
    return deserialize(*static_cast<ProviderState*>(user_data), plan, plan_size, options,
                       out_engine);
  });
}

TteStatus abi_create_execution_context(TteEngine* engine, const TteEngineLoadOptions* options,
                                       TteEngine** out_engine, TteError* error) {
  return guarded(error, [&] {
    Status status = check_engine(engine);
    if (status.ok() && out_engine == nullptr) {
      status = Status(TTE_ERROR_INVALID_ARGUMENT, "out_engine is NULL");
    }
    if (!status.ok()) {
      return status;
    }
    *out_engine = nullptr;
    const bool user_managed = has_field(options, TTE_OPTION_END(user_managed_device_memory)) &&
                              options->user_managed_device_memory != 0;
    std::unique_ptr<TensorRtEngine> shared;
    status = TensorRtEngine::share(*engine_of(engine), user_managed, &shared);
    if (status.ok()) {
      *out_engine = reinterpret_cast<TteEngine*>(shared.release());
    }
    return status;
  });
}

TteStatus abi_device_memory_size(TteEngine* engine, int32_t profile, int64_t* out_bytes,
                                 TteError* error) {
  return guarded(error, [&] {
    Status status = check_engine(engine);
    if (status.ok() && out_bytes == nullptr) {
      status = Status(TTE_ERROR_INVALID_ARGUMENT, "out_bytes is NULL");
    }
    if (status.ok()) {
      status = engine_of(engine)->device_memory_size(profile, out_bytes);
    }
    return status;
  });
}

TteStatus abi_set_device_memory(TteEngine* engine, void* memory, int64_t bytes, TteError* error) {
  return guarded(error, [&] {
    Status status = check_engine(engine);
    if (status.ok() && (bytes < 0 || (memory == nullptr && bytes > 0))) {
      status = Status(TTE_ERROR_INVALID_ARGUMENT, "set_device_memory: " + std::to_string(bytes) +
                                                      " bytes at " +
                                                      (memory == nullptr ? "NULL" : "an address"));
    }
    if (status.ok()) {
      status = engine_of(engine)->set_device_memory(memory, bytes);
    }
    return status;
  });
}

TteStatus abi_num_io_tensors(TteEngine* engine, int32_t* out_count, TteError* error) {
  return guarded(error, [&] {
    Status status = check_engine(engine);
    if (status.ok() && out_count == nullptr) {
      status = Status(TTE_ERROR_INVALID_ARGUMENT, "out_count is NULL");
    }
    if (status.ok()) {
      *out_count = engine_of(engine)->num_io_tensors();
    }
    return status;
  });
}

TteStatus abi_describe_io_tensor(TteEngine* engine, int32_t index, TteIoTensorDesc* out_desc,
                                 TteError* error) {
  return guarded(error, [&] {
    Status status = check_index(engine, index);
    if (status.ok() && out_desc == nullptr) {
      status = Status(TTE_ERROR_INVALID_ARGUMENT, "out_desc is NULL");
    }
    if (status.ok()) {
      const IoTensor& tensor = engine_of(engine)->io_tensor(index);
      out_desc->name = tensor.name.c_str();
      out_desc->is_input = tensor.is_input ? 1 : 0;
      out_desc->scalar_type = tensor.scalar_type;
      out_desc->rank = tensor.rank;
      out_desc->aliased_input = tensor.aliased_input;
      out_desc->is_shape_tensor = tensor.is_shape_tensor ? 1 : 0;
    }
    return status;
  });
}

TteStatus abi_num_profiles(TteEngine* engine, int32_t* out_count, TteError* error) {
  return guarded(error, [&] {
    Status status = check_engine(engine);
    if (status.ok() && out_count == nullptr) {
      status = Status(TTE_ERROR_INVALID_ARGUMENT, "out_count is NULL");
    }
    if (status.ok()) {
      *out_count = engine_of(engine)->num_profiles();
    }
    return status;
  });
}

TteStatus abi_profile_shape(TteEngine* engine, int32_t profile, int32_t input_index,
                            int64_t* min_dims, int64_t* opt_dims, int64_t* max_dims,
                            TteError* error) {
  return guarded(error, [&] {
    Status status = check_index(engine, input_index);
    if (status.ok() && (min_dims == nullptr || opt_dims == nullptr || max_dims == nullptr)) {
      status =
          Status(TTE_ERROR_INVALID_ARGUMENT, "min_dims, opt_dims and max_dims must not be NULL");
    }
    if (status.ok()) {
      status = engine_of(engine)->profile_shape(profile, input_index, min_dims, opt_dims, max_dims);
    }
    return status;
  });
}

TteStatus abi_select_profile(TteEngine* engine, int32_t profile, void* stream, TteError* error) {
  return guarded(error, [&] {
    Status status = check_engine(engine);
    if (status.ok()) {
      status = engine_of(engine)->select_profile(profile, static_cast<cudaStream_t>(stream));
    }
    return status;
  });
}

TteStatus abi_set_input_shape(TteEngine* engine, int32_t index, const int64_t* dims, int32_t rank,
                              TteError* error) {
  return guarded(error, [&] {
    Status status = check_index(engine, index);
    if (status.ok() && (rank < 0 || (rank > 0 && dims == nullptr))) {
      status = Status(TTE_ERROR_INVALID_ARGUMENT, "invalid shape: rank " + std::to_string(rank) +
                                                      (dims == nullptr ? ", dims NULL" : ""));
    }
    if (status.ok()) {
      status = engine_of(engine)->set_input_shape(index, dims, rank);
    }
    return status;
  });
}

TteStatus abi_get_output_shape(TteEngine* engine, int32_t index, int64_t* dims, int32_t capacity,
                               int32_t* out_rank, TteError* error) {
  return guarded(error, [&] {
    Status status = check_index(engine, index);
    if (status.ok() && (out_rank == nullptr || (capacity > 0 && dims == nullptr))) {
      status = Status(TTE_ERROR_INVALID_ARGUMENT, "dims or out_rank is NULL");
    }
    if (status.ok()) {
      status = engine_of(engine)->tensor_shape(index, dims, capacity, out_rank);
    }
    return status;
  });
}

TteStatus abi_set_tensor_address(TteEngine* engine, int32_t index, void* address, TteError* error) {
  return guarded(error, [&] {
    Status status = check_index(engine, index);
    if (status.ok()) {
      status = engine_of(engine)->set_tensor_address(index, address);
    }
    return status;
  });
}

TteStatus abi_set_output_capacity(TteEngine* engine, int32_t index, int64_t bytes,
                                  TteError* error) {
  return guarded(error, [&] {
    Status status = check_index(engine, index);
    if (status.ok() && bytes < 0) {
      status =
          Status(TTE_ERROR_INVALID_ARGUMENT, "capacity " + std::to_string(bytes) + " is negative");
    }
    if (status.ok()) {
      status = engine_of(engine)->set_output_capacity(index, bytes);
    }
    return status;
  });
}

TteStatus abi_get_output_result(TteEngine* engine, int32_t index, int64_t* dims, int32_t capacity,
                                int32_t* out_rank, void** out_data, TteError* error) {
  return guarded(error, [&] {
    Status status = check_index(engine, index);
    if (status.ok() &&
        (out_rank == nullptr || out_data == nullptr || (capacity > 0 && dims == nullptr))) {
      status = Status(TTE_ERROR_INVALID_ARGUMENT, "dims, out_rank or out_data is NULL");
    }
    if (status.ok()) {
      status = engine_of(engine)->output_result(index, dims, capacity, out_rank, out_data);
    }
    return status;
  });
}

TteStatus abi_enqueue(TteEngine* engine, void* stream, TteError* error) {
  return guarded(error, [&] {
    Status status = check_engine(engine);
    if (status.ok()) {
      status = engine_of(engine)->enqueue(static_cast<cudaStream_t>(stream));
    }
    return status;
  });
}

TteStatus abi_engine_capturable(TteEngine* engine, void* /*stream*/, int32_t* out_capturable,
                                TteError* error) {
  return guarded(error, [&] {
    Status status = check_engine(engine);
    if (status.ok() && out_capturable == nullptr) {
      status = Status(TTE_ERROR_INVALID_ARGUMENT, "out_capturable is NULL");
    }
    if (status.ok()) {
      *out_capturable = engine_of(engine)->capturable() ? 1 : 0;
    }
    return status;
  });
}

TteStatus abi_describe_runtime(void* /*user_data*/, char* text, uint32_t capacity,
                               TteError* error) {
  return guarded(error, [&] {
    if (text == nullptr || capacity == 0) {
      return Status(TTE_ERROR_INVALID_ARGUMENT, "text is NULL or capacity is 0");
    }
    // Loads the library (no runtime is created): what doctor asks for.
    std::snprintf(text, capacity, "%s", TensorRtLibrary::get().describe().c_str());
    return Status::Ok();
  });
}

void abi_destroy(TteEngine* engine) {
  try {
    delete engine_of(engine);
  } catch (...) {
    // Destructors release TensorRT objects only; nothing to report to.
  }
}

void abi_release(void* user_data) { delete static_cast<ProviderState*>(user_data); }

std::string version_text(int32_t major, int32_t minor, int32_t patch) {
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

}  // namespace

TteEngineProvider make_provider(const ProviderEnvironment& environment) {
  TteEngineProvider provider{};
  provider.abi_version = TTE_ENGINE_PROVIDER_ABI_VERSION;
  provider.struct_size = sizeof(TteEngineProvider);
  provider.name = kProviderName;
  provider.memory_kind = TTE_MEMORY_DEVICE;
  // enqueueV3 launches stream-ordered work only and does not synchronize.
  provider.enqueue_capturable = 1;
  provider.user_data = new ProviderState(environment);
  provider.release = &abi_release;
  provider.deserialize = &abi_deserialize;
  provider.num_io_tensors = &abi_num_io_tensors;
  provider.describe_io_tensor = &abi_describe_io_tensor;
  provider.num_profiles = &abi_num_profiles;
  provider.profile_shape = &abi_profile_shape;
  provider.select_profile = &abi_select_profile;
  provider.set_input_shape = &abi_set_input_shape;
  provider.get_output_shape = &abi_get_output_shape;
  provider.set_tensor_address = &abi_set_tensor_address;
  provider.enqueue = &abi_enqueue;
  provider.destroy = &abi_destroy;
  provider.engine_capturable = &abi_engine_capturable;
  provider.describe_runtime = &abi_describe_runtime;
  provider.device_memory_size = &abi_device_memory_size;
  provider.set_device_memory = &abi_set_device_memory;
  provider.create_execution_context = &abi_create_execution_context;
  provider.set_output_capacity = &abi_set_output_capacity;
  provider.get_output_result = &abi_get_output_result;
  return provider;
}

const char* tensorrt_header_version() {
  static const std::string version =
      version_text(NV_TENSORRT_MAJOR, NV_TENSORRT_MINOR, NV_TENSORRT_PATCH);
  return version.c_str();
}

}  // namespace tte::native
