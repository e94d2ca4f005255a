// One deserialized TensorRT engine and its execution contexts, described in
// the provider ABI's terms. Everything is looked up by tensor name (TensorRT
// 10/11 I/O API); the I/O table, dtypes and profile ranges are read once at
// load, so describing the engine costs no TensorRT call. Calls on one engine
// come one at a time (the backend holds a lock per delegate handle).
//
// One execution context per optimization profile, each switched to its
// profile once at load: switching a context's profile "will trigger layer
// resource updates on the next call of executeV2()/enqueueV3()"
// (NvInferRuntime.h:4272), which a CUDA graph replay never makes, so a
// replay after a switch would run with the other profile's resources. The
// contexts share one activation buffer (kUSER_MANAGED, the largest
// profile's size): the backend never runs two calls of one engine at once.
// Loaded with user-managed memory, the engine allocates none: the backend
// gives it memory (set_device_memory) before enqueues. Several handles may
// share one deserialized ICudaEngine (share): each has its own contexts,
// and the ICudaEngine is deleted with the last handle, after its contexts.
#pragma once

#include <NvInferRuntime.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "native/error_recorder.h"
#include "native/native_tensorrt_provider.h"
#include "native/output_allocator.h"
#include "native/runtime_pool.h"
#include "native/weight_streaming.h"

namespace tte::native {

struct ShapeRange {
  std::vector<int64_t> min, opt, max;
};

struct IoTensor {
  std::string name;
  bool is_input = false;
  int32_t scalar_type = -1;
  int32_t rank = 0;
  // For outputs TensorRT writes into an input in place: that input's index.
  int32_t aliased_input = -1;
  bool is_shape_tensor = false;
  // Outputs whose shape TensorRT knows only after the run (-1 dims once
  // every input shape is set): served through an OutputAllocator.
  bool data_dependent = false;
  // Inputs: one range per optimization profile.
  std::vector<ShapeRange> profiles;
};

// What a load asks besides the plan (TteEngineLoadOptions).
struct LoadRequest {
  WeightStreamingRequest weights;
  RuntimeSettings runtime;
  // TteEngineLoadOptions.user_managed_device_memory.
  bool user_managed_memory = false;
};

class TensorRtEngine {
 public:
  // Deserializes `plan` (only read during the call) on `runtime`'s device,
  // which is current. TTE_ERROR_NOT_ACCEPTED when TensorRT cannot read it.
  static Status load(std::shared_ptr<DeviceRuntime> runtime, const ProviderEnvironment& environment,
                     const void* plan, uint64_t plan_size, const LoadRequest& request,
                     std::unique_ptr<TensorRtEngine>* out);
  // Another handle on `source`'s ICudaEngine with contexts of its own.
  static Status share(const TensorRtEngine& source, bool user_managed_memory,
                      std::unique_ptr<TensorRtEngine>* out);
  ~TensorRtEngine();
  TensorRtEngine(const TensorRtEngine&) = delete;
  TensorRtEngine& operator=(const TensorRtEngine&) = delete;

  int32_t num_io_tensors() const { return static_cast<int32_t>(io_->size()); }
  // `index` must be valid (checked by the ABI layer).
  const IoTensor& io_tensor(int32_t index) const { return (*io_)[index]; }
  int32_t num_profiles() const { return num_profiles_; }

  Status profile_shape(int32_t profile, int32_t input, int64_t* min_dims, int64_t* opt_dims,
                       int64_t* max_dims) const;
  Status select_profile(int32_t profile, cudaStream_t stream);
  Status set_input_shape(int32_t index, const int64_t* dims, int32_t rank);
  Status tensor_shape(int32_t index, int64_t* dims, int32_t capacity, int32_t* out_rank) const;
  Status set_tensor_address(int32_t index, void* address);
  // Data-dependent outputs (provider ABI 2): the bytes at the address set,
  // before an enqueue; the shape TensorRT notified and where the elements
  // are, after it.
  Status set_output_capacity(int32_t index, int64_t bytes);
  Status output_result(int32_t index, int64_t* dims, int32_t capacity, int32_t* out_rank,
                       void** out_data) const;
  Status enqueue(cudaStream_t stream);
  Status device_memory_size(int32_t profile, int64_t* out_bytes) const;
  Status set_device_memory(void* memory, int64_t bytes);
  // False while the engine streams its weights: enqueueV3 "will become
  // synchronous, and the graph will not be capturable" (NvInferRuntime.h:4642).
  bool capturable() const { return !streams_weights_; }

 private:
  TensorRtEngine(std::shared_ptr<DeviceRuntime> runtime, const ProviderEnvironment& environment);

  Status read_io_table();
  Status create_contexts();
  Status find_data_dependent_outputs();
  // An OutputAllocator per data-dependent output, set on every context.
  Status attach_output_allocators();
  nvinfer1::IExecutionContext& context() const { return *contexts_[profile_]; }

  // Destroyed in reverse: the contexts before their memory, the engine and
  // the runtime (the destructor frees the memory on the engine's device).
  std::shared_ptr<DeviceRuntime> runtime_;
  ProviderEnvironment environment_;
  std::shared_ptr<nvinfer1::ICudaEngine> engine_;  // shared by the handles of one plan
  bool user_managed_memory_ = false;
  void* activation_memory_ = nullptr;  // cudaMalloc'd, shared by the contexts
  // [io index]; declared before the contexts, which refer to them.
  std::vector<std::unique_ptr<OutputAllocator>> allocators_;
  std::vector<std::unique_ptr<ContextErrorRecorder>> recorders_;  // [profile], one per context
  std::vector<std::unique_ptr<nvinfer1::IExecutionContext>> contexts_;  // [profile]
  int32_t profile_ = 0;                                                 // the selected context
  std::shared_ptr<std::vector<IoTensor>> io_;  // read at load, shared by the handles
  int32_t num_profiles_ = 1;
  // Budget below the streamable size: enqueueV3 is then synchronous.
  bool streams_weights_ = false;
};

}  // namespace tte::native
