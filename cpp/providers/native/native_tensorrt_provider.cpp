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

#include "native/runtime_pool.h"
#include "common/status.h"
#include "native/tensorrt_engine.h"
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
    return report(Status(TTE_ERROR_OUT_OF_MEMORY, "out of host memory in the native TensorRT provider"),
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
    status = Status(TTE_ERROR_INVALID_ARGUMENT,
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
    return Status(TTE_ERROR_INVALID_ARGUMENT, "plan is NULL but its size is " + std::to_string(plan_size));
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

  const int32_t device =
      has_field(options, TTE_OPTION_END(device_id)) ? options->device_id : 0;
  WeightStreamingRequest weights;
  if (has_field(options, TTE_OPTION_END(weight_streaming_budget)) &&
      options->has_weight_streaming_budget != 0) {
    weights.has_budget = true;
    weights.budget = options->weight_streaming_budget;
  }

  std::shared_ptr<DeviceRuntime> runtime;
  Status status = state.runtimes.acquire(device, &runtime);
  if (!status.ok()) {
    return status;
  }
  std::unique_ptr<TensorRtEngine> engine;
  status = TensorRtEngine::load(std::move(runtime), state.environment, plan, plan_size, weights,
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
      status = Status(TTE_ERROR_INVALID_ARGUMENT, "min_dims, opt_dims and max_dims must not be NULL");
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

TteStatus abi_set_input_shape(TteEngine* engine, int32_t index, const int64_t* dims,
                              int32_t rank, TteError* error) {
  return guarded(error, [&] {
    Status status = check_index(engine, index);
    if (status.ok() && (rank < 0 || (rank > 0 && dims == nullptr))) {
      status = Status(TTE_ERROR_INVALID_ARGUMENT,
                      "invalid shape: rank " + std::to_string(rank) + (dims == nullptr ? ", dims NULL" : ""));
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

TteStatus abi_set_tensor_address(TteEngine* engine, int32_t index, void* address,
                                 TteError* error) {
  return guarded(error, [&] {
    Status status = check_index(engine, index);
    if (status.ok()) {
      status = engine_of(engine)->set_tensor_address(index, address);
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
  return provider;
}

const char* tensorrt_header_version() {
  static const std::string version =
      version_text(NV_TENSORRT_MAJOR, NV_TENSORRT_MINOR, NV_TENSORRT_PATCH);
  return version.c_str();
}

const char* tensorrt_library_version() {
  // major * 10000 + minor * 100 + patch since TensorRT 10.
  static const std::string version = [] {
    const int32_t packed = getInferLibVersion();
    return version_text(packed / 10000, packed / 100 % 100, packed % 100);
  }();
  return version.c_str();
}

}  // namespace tte::native
