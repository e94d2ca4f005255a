// One TensorRTBackend delegate: the handle `init` returns and `execute` runs
// (the counterpart of XNNPACK's XNNExecutor). It owns the provider's engine,
// knows which delegate argument is which engine tensor, validates every call
// against the engine, stages memory the engine cannot address, and returns
// with the work finished. Calls on one session are serialized by its own
// lock; different sessions run in parallel.
#pragma once

#include <functional>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <executorch/runtime/backend/interface.h>

#include "cuda/cuda_device.h"
#include "cuda/cuda_graph_cache.h"
#include "cuda/device_buffers.h"
#include "backend/provider_registry.h"

namespace tte {

struct BlobMetadata;
struct DelegateBlob;
struct LoadOptions;

// An engine tensor as the session uses it.
struct EngineTensor {
  std::string name;
  int32_t index = -1;  // the engine's I/O index
  bool is_input = false;
  executorch::aten::ScalarType dtype = executorch::aten::ScalarType::Float;
  int32_t rank = 0;
  // Inputs: [profile] -> min and max dims.
  std::vector<std::vector<int64_t>> min_dims;
  std::vector<std::vector<int64_t>> max_dims;
  // Outputs written in place into an input: that input's position among the
  // session's inputs, else -1. `check_alias_shape`: the engine did not declare
  // the alias (kind "user"), so shapes are compared at execute.
  int32_t aliased_input = -1;
  bool check_alias_shape = false;
};

class EngineSession {
 public:
  static executorch::runtime::Result<EngineSession*> create(
      executorch::runtime::BackendInitContext& context,
      executorch::runtime::FreeableBuffer* processed,
      executorch::runtime::ArrayRef<executorch::runtime::CompileSpec> compile_specs);
  ~EngineSession();
  EngineSession(const EngineSession&) = delete;
  EngineSession& operator=(const EngineSession&) = delete;

  executorch::runtime::Error execute(executorch::runtime::BackendExecutionContext& context,
                                     executorch::runtime::Span<executorch::runtime::EValue*> args);

 private:
  struct Binding;  // where one tensor's engine address comes from this call

  EngineSession() = default;
  executorch::runtime::Error load_engine(const DelegateBlob& blob, const LoadOptions& options);
  executorch::runtime::Error describe_engine(const BlobMetadata& metadata);
  executorch::runtime::Error bind_aliases(const BlobMetadata& metadata,
                                          const std::vector<EngineTensor>& engine_io);

  executorch::runtime::Error execute_locked(
      executorch::runtime::Span<executorch::runtime::EValue*> args);
  executorch::runtime::Error check_arguments(
      executorch::runtime::Span<executorch::runtime::EValue*> args);
  executorch::runtime::Error choose_profile(
      executorch::runtime::Span<executorch::runtime::EValue*> args, void* stream);
  executorch::runtime::Error resize_outputs(
      executorch::runtime::Span<executorch::runtime::EValue*> args);
  executorch::runtime::Error bind_device_engine(
      executorch::runtime::Span<executorch::runtime::EValue*> args, void* stream,
      std::vector<Binding>* bindings);
  executorch::runtime::Error bind_host_engine(
      executorch::runtime::Span<executorch::runtime::EValue*> args,
      std::vector<Binding>* bindings);
  executorch::runtime::Error enqueue(const std::vector<Binding>& bindings, void* stream);
  executorch::runtime::Error finish_device_engine(const std::vector<Binding>& bindings,
                                                  void* stream);
  executorch::runtime::Error finish_host_engine(const std::vector<Binding>& bindings);
  // Copies staged outputs (and staged inputs the engine updated in place)
  // back to the tensors' memory with `copy_out(dst, dst_kind, src, bytes)`.
  using CopyOut = std::function<cudaError_t(void*, PointerKind, const void*, size_t)>;
  executorch::runtime::Error copy_outputs_back(const std::vector<Binding>& bindings,
                                               const CopyOut& copy_out);
  executorch::runtime::Error provider_call(TteStatus status, const TteError& error,
                                           const char* what) const;
  executorch::runtime::Result<void*> own_stream();
  void* zero_size_address();

  std::mutex mutex_;
  ProviderRef provider_;
  TteEngine* engine_ = nullptr;
  // Device the engine runs on; -1 for a host provider on a machine without
  // a usable device.
  int device_ = -1;
  bool integrated_ = false;
  std::vector<EngineTensor> inputs_;   // delegate-argument order
  std::vector<EngineTensor> outputs_;  // delegate-argument order
  int32_t num_profiles_ = 1;
  int32_t current_profile_ = -1;  // -1: not selected yet
  std::vector<int64_t> input_shapes_;  // this call's, all inputs in a row

  void* stream_ = nullptr;  // the session's own stream, created on first use
  bool use_cuda_graphs_ = false;
  std::unique_ptr<CudaGraphCache> graphs_;
  std::vector<DeviceBuffer> staged_inputs_;
  std::vector<DeviceBuffer> staged_outputs_;
  std::vector<PinnedHostBuffer> host_inputs_;
  std::vector<PinnedHostBuffer> host_outputs_;
  HostDeviceStager stager_;
  DeviceBuffer zero_size_device_;
};

}  // namespace tte
