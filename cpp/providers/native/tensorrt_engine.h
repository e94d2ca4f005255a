// One deserialized TensorRT engine and its execution context, described in
// the provider ABI's terms. Everything is looked up by tensor name (TensorRT
// 10/11 I/O API); the I/O table, dtypes and profile ranges are read once at
// load, so describing the engine costs no TensorRT call. Calls on one engine
// come one at a time (the backend holds a lock per delegate handle).
#pragma once

#include <NvInferRuntime.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "native/runtime_pool.h"
#include "common/status.h"
#include "native/native_tensorrt_provider.h"

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
  // Inputs: one range per optimization profile.
  std::vector<ShapeRange> profiles;
};

struct WeightStreamingRequest {
  bool has_budget = false;
  int64_t budget = 0;
};

class TensorRtEngine {
 public:
  // Deserializes `plan` (only read during the call) on `runtime`'s device,
  // which is current. TTE_ERROR_NOT_ACCEPTED when TensorRT cannot read it.
  static Status load(std::shared_ptr<DeviceRuntime> runtime,
                     const ProviderEnvironment& environment, const void* plan,
                     uint64_t plan_size, const WeightStreamingRequest& weights,
                     std::unique_ptr<TensorRtEngine>* out);
  ~TensorRtEngine();
  TensorRtEngine(const TensorRtEngine&) = delete;
  TensorRtEngine& operator=(const TensorRtEngine&) = delete;

  int32_t num_io_tensors() const { return static_cast<int32_t>(io_.size()); }
  // `index` must be valid (checked by the ABI layer).
  const IoTensor& io_tensor(int32_t index) const { return io_[index]; }
  int32_t num_profiles() const { return num_profiles_; }

  Status profile_shape(int32_t profile, int32_t input, int64_t* min_dims,
                       int64_t* opt_dims, int64_t* max_dims) const;
  Status select_profile(int32_t profile, cudaStream_t stream);
  Status set_input_shape(int32_t index, const int64_t* dims, int32_t rank);
  Status tensor_shape(int32_t index, int64_t* dims, int32_t capacity,
                      int32_t* out_rank) const;
  Status set_tensor_address(int32_t index, void* address);
  Status enqueue(cudaStream_t stream);

 private:
  TensorRtEngine(std::shared_ptr<DeviceRuntime> runtime,
                 const ProviderEnvironment& environment);

  Status apply_weight_streaming(const WeightStreamingRequest& weights);
  Status read_io_table();
  Status refuse_data_dependent_outputs();

  // Destroyed in reverse: the context before the engine before the runtime.
  std::shared_ptr<DeviceRuntime> runtime_;
  ProviderEnvironment environment_;
  std::unique_ptr<nvinfer1::ICudaEngine> engine_;
  std::unique_ptr<nvinfer1::IExecutionContext> context_;
  std::vector<IoTensor> io_;
  int32_t num_profiles_ = 1;
  // Budget below the streamable size: enqueueV3 is then synchronous.
  bool streams_weights_ = false;
};

}  // namespace tte::native
