// The part of the test providers that does not depend on where tensors live:
// an engine over a parsed Plan that implements the provider ABI's shape,
// profile and address calls exactly as docs/test-engine-format.md says, and
// checks everything enqueue needs. The host and CUDA providers add
// deserialize and enqueue on top.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "testing/test_engine_format.h"
#include "testing/test_provider_api.h"
#include "torch_tensorrt_executorch/engine_provider.h"

namespace tte::test_engine {

// Fills `error` (when non-null) and returns `code`.
TteStatus set_error(TteError* error, TteStatus code, const std::string& message);

// Parses `plan` for a provider's deserialize: TTE_ERROR_NOT_ACCEPTED without
// the magic, TTE_ERROR_INVALID_PROGRAM for an invalid plan.
TteStatus parse_for_deserialize(const char* provider, const void* plan, uint64_t plan_size,
                                Plan* out, TteError* error);

// Load options the test providers read, from a struct of any size (or NULL).
struct LoadOptions {
  int32_t device_id = 0;
  bool has_weight_streaming_budget = false;
  int64_t weight_streaming_budget = 0;
  bool user_managed_device_memory = false;
};
LoadOptions read_load_options(const TteEngineLoadOptions* options);

// Not thread-safe: the backend serializes calls on one engine.
class Engine {
 public:
  explicit Engine(Plan plan);
  virtual ~Engine() = default;
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  const Plan& plan() const { return plan_; }

  TteStatus num_io_tensors(int32_t* out_count, TteError* error) const;
  TteStatus describe_io_tensor(int32_t index, TteIoTensorDesc* out_desc, TteError* error) const;
  TteStatus num_profiles(int32_t* out_count, TteError* error) const;
  TteStatus profile_shape(int32_t profile, int32_t input_index, int64_t* min_dims,
                          int64_t* opt_dims, int64_t* max_dims, TteError* error) const;
  // Selecting a profile forgets the input shapes set so far (they were
  // checked against the previous profile).
  TteStatus select_profile(int32_t profile, TteError* error);
  TteStatus set_input_shape(int32_t index, const int64_t* dims, int32_t rank, TteError* error);
  TteStatus get_output_shape(int32_t index, int64_t* dims, int32_t capacity, int32_t* out_rank,
                             TteError* error) const;
  TteStatus set_tensor_address(int32_t index, void* address, TteError* error);
  int32_t profile() const { return profile_; }

  // The checks of enqueue before any work: the `fail.enqueue` hook, every
  // input shape set, an address for every non-empty tensor (an aliased
  // output may leave its own unset or must give its input's), and the
  // element counts the op needs. Then bound(i) and numel(i) describe the
  // run. Allocates nothing on success.
  TteStatus prepare_enqueue(TteError* error);
  void* bound(int32_t index) const { return bound_[index]; }
  int64_t numel(int32_t index) const { return numel_[index]; }

  // Scratch memory (the plan's scratch_bytes): the engine's own, allocated
  // by the provider for the largest profile, or, with user-managed memory,
  // what set_device_memory gave. prepare_enqueue checks it is large enough
  // for the selected profile; scratch_needed() is that profile's size.
  bool user_managed() const { return user_managed_; }
  void set_user_managed(bool value) { user_managed_ = value; }
  void set_own_scratch(std::shared_ptr<void> memory, int64_t bytes);
  TteStatus device_memory_size(int32_t profile, int64_t* out_bytes, TteError* error) const;
  TteStatus set_device_memory(void* memory, int64_t bytes, TteError* error);
  void* scratch() const { return scratch_; }
  int64_t scratch_needed() const {
    return plan_.scratch_bytes.empty() ? 0 : plan_.scratch_bytes[profile_];
  }
  // The largest profile's scratch.
  int64_t max_scratch() const;

  // Data-dependent outputs (keep_positive), as TensorRT's IOutputAllocator:
  // the bytes the backend's buffer holds; before the run, the engine asks for
  // its upper bound (`request_bytes`, the input's size, at least 1 byte, as
  // TensorRT's reallocateOutputAsync) and writes at the address set when
  // that fits, else into memory of its own (`output_memory`: made by
  // `allocate`, grown, never shrunk); after the run, `set_result` records
  // the element count and where the elements are (get_output_result).
  bool data_dependent(int32_t index) const;
  TteStatus set_output_capacity(int32_t index, int64_t bytes, TteError* error);
  TteStatus get_output_result(int32_t index, int64_t* dims, int32_t capacity, int32_t* out_rank,
                              void** out_data, TteError* error) const;
  int64_t request_bytes(int32_t index) const;
  void* output_memory(int32_t index, int64_t bytes,
                      const std::function<std::shared_ptr<void>(int64_t)>& allocate);
  void set_result(int32_t index, int64_t count, void* data);
  // State every handle on one deserialized engine shares (its "weights");
  // freed with the last handle.
  std::shared_ptr<void> shared;

 protected:
  // A provider refuses addresses its memory kind cannot use. Called when an
  // address differs from the one set before.
  virtual TteStatus check_address(int32_t index, void* address, TteError* error);

 private:
  TteStatus check_index(int32_t index, const char* call, TteError* error) const;
  const std::vector<int64_t>& current_shape(int32_t index) const;
  std::string unset_inputs() const;
  TteStatus check_elementwise(int32_t output, int32_t input, TteError* error) const;
  TteStatus check_same_shape(int32_t a, int32_t b, TteError* error) const;

  Plan plan_;
  int32_t profile_ = 0;
  // Inputs' current shapes, indexed like plan_.tensors.
  std::vector<std::vector<int64_t>> shapes_;
  std::vector<char> shape_set_;
  std::vector<void*> addresses_;
  std::vector<char> address_set_;
  std::vector<void*> bound_;
  std::vector<int64_t> numel_;
  // Data-dependent outputs, indexed like plan_.tensors.
  std::vector<int64_t> output_capacity_;
  std::vector<int64_t> result_count_;  // -1: no run since the shapes were set
  std::vector<void*> result_data_;
  std::shared_ptr<void> own_output_;
  int64_t own_output_bytes_ = 0;
  bool user_managed_ = false;
  std::shared_ptr<void> own_scratch_;
  void* scratch_ = nullptr;
  int64_t scratch_size_ = 0;
  bool device_memory_set_ = false;  // set_device_memory called, NULL and 0 included
};

inline TteEngine* to_handle(Engine* engine) { return reinterpret_cast<TteEngine*>(engine); }
inline Engine* from_handle(TteEngine* handle) { return reinterpret_cast<Engine*>(handle); }

// Sets abi_version, struct_size and every function of `provider` but
// deserialize, enqueue, execute and create_execution_context (the
// device-memory and data-dependent output entries included).
void set_common_functions(TteEngineProvider* provider);

// The batched call (TteEngineProvider.execute) over the per-tensor ones:
// a profile selected only when it changes, every input shape set and
// output shape read, every address set, then `enqueue` (the provider's).
TteStatus execute_steps(TteEngine* engine, const TteEngineExecution* call, TteError* error,
                        TteStatus (*enqueue)(TteEngine*, void*, TteError*));

// The library's counters, exported by test_engine.cpp (test_provider_api.h).
void record_deserialize(const LoadOptions& options);
void record_execution_context();
// Bytes of weights / own scratch allocated (positive) or freed (negative).
void record_weight_bytes(int64_t delta);
void record_own_scratch_bytes(int64_t delta);
void record_enqueue(void* stream);
// Counts, while it lives, one enqueue running on `engine`'s deserialized
// engine and profile (TteTestProviderStats.max_profile_overlap).
class ProfileInFlight {
 public:
  explicit ProfileInFlight(const Engine& engine);
  ~ProfileInFlight();
  ProfileInFlight(const ProfileInFlight&) = delete;
  ProfileInFlight& operator=(const ProfileInFlight&) = delete;

 private:
  const void* key_;
  int32_t profile_;
};

// Runs `body` and turns a C++ exception into a status, so none crosses the ABI.
template <typename Body>
TteStatus guarded(TteError* error, Body&& body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return set_error(error, TTE_ERROR_HOST_OUT_OF_MEMORY, "test provider: out of host memory");
  } catch (const std::exception& e) {
    return set_error(error, TTE_ERROR_INTERNAL, std::string("test provider: ") + e.what());
  }
}

}  // namespace tte::test_engine
