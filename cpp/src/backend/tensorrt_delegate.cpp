#include "backend/tensorrt_delegate.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include <cuda_runtime_api.h>

#include "backend/init_record.h"
#include "backend/load_options.h"
#include "blob/blob_reader.h"
#include "common/logging.h"
#include "common/runtime_stats.h"
#include "common/text.h"
#include "cuda/cuda_device.h"

namespace tte {

namespace et = executorch::runtime;

Status TensorRTDelegate::create(CallContext* call, et::BackendInitContext& context,
                                et::FreeableBuffer* processed,
                                et::ArrayRef<et::CompileSpec> compile_specs,
                                std::unique_ptr<TensorRTDelegate>* out) {
  InitRecord record(call, context, compile_specs);
  auto fail = [&](const Status& status) {
    record.set_result(status);
    return status;
  };
  if (processed == nullptr) {
    return fail(Status(TTE_ERROR_INVALID_ARGUMENT, "TensorRTBackend init got no delegate blob"));
  }
  auto data = processed->data_safe();
  if (!data.ok() || data.get() == nullptr) {
    return fail(
        Status(TTE_ERROR_INVALID_PROGRAM, "TensorRTBackend init got an empty delegate blob"));
  }
  auto parsed = parse_delegate_blob(data.get(), processed->size());
  if (!parsed) {
    return fail(Status(TTE_ERROR_INVALID_PROGRAM,
                       "invalid TensorRTBackend delegate blob: " + parsed.error()));
  }
  const DelegateBlob& blob = parsed.value();
  record.set_blob(blob);

  LoadOptions options;
  Status status = read_load_options(context, compile_specs, &options);
  std::unique_ptr<TensorRTDelegate> delegate(new TensorRTDelegate());
  if (status.ok()) {
    // A CUDA graph fixes the scratch address it was captured with, so a
    // delegate that captures keeps scratch of its own.
    status = load_engine(blob, options, options.share_device_memory && !options.cuda_graphs,
                         &delegate->engine_);
  }
  if (!status.ok()) {
    return fail(status);
  }
  const EngineProvider& provider = *delegate->engine_.provider;
  record.set_provider(provider.name());
  status = describe_engine_io(provider, delegate->engine_.engine, blob.metadata, &delegate->io_);
  for (const EngineTensor& input : delegate->io_.inputs) {
    delegate->dynamic_shapes_ = delegate->dynamic_shapes_ || input.min_dims != input.max_dims;
  }
  if (status.ok() && delegate->engine_.user_managed_memory) {
    status = delegate->read_scratch_sizes();
  }
  // The engine holds its own copy of the plan: drop the blob's memory now
  // rather than at program teardown (`blob` points into it).
  processed->Free();
  if (!status.ok()) {
    return fail(status);
  }
  delegate->binder_ = std::make_unique<TensorBinder>(
      EngineMemory{provider.host_memory(), delegate->engine_.device, delegate->engine_.traits});
  if (options.cuda_graphs) {
    if (provider.host_memory()) {
      TTE_LOG(INFO, "load option cuda_graphs ignored: provider '%s' runs on the host",
              provider.name().c_str());
    } else if (!provider.enqueue_capturable()) {
      TTE_LOG(INFO,
              "load option cuda_graphs ignored: provider '%s' says its enqueue cannot be "
              "captured into a CUDA graph",
              provider.name().c_str());
    } else {
      delegate->graphs_ = std::make_unique<CudaGraphCache>();
    }
  }
  TTE_LOG(DEBUG, "delegate of method '%s': provider '%s', %zu inputs, %zu outputs, %d profiles",
          context.get_method_name() != nullptr ? context.get_method_name() : "",
          provider.name().c_str(), delegate->io_.inputs.size(), delegate->io_.outputs.size(),
          delegate->io_.num_profiles);
  *out = std::move(delegate);
  return Status::Ok();
}

TensorRTDelegate::~TensorRTDelegate() {
  if (engine_.provider == nullptr) {
    return;
  }
  std::optional<DeviceGuard> guard;
  if (engine_.device >= 0) {
    guard.emplace(engine_.device);
  }
  if (stream_ != nullptr) {
    cudaStreamSynchronize(static_cast<cudaStream_t>(stream_));
  }
  // Graphs refer to the engine's kernels and memory, and staging buffers
  // may be in flight on the engine's device: release them first.
  graphs_.reset();
  binder_.reset();
  release_engine(&engine_);
  if (uses_arenas_) {
    ScratchArenas::instance().remove_user();
  }
  if (stream_ != nullptr) {
    cudaStreamDestroy(static_cast<cudaStream_t>(stream_));
    stream_ = nullptr;
  }
  if (per_thread_ready_ != nullptr) {
    cudaEventDestroy(static_cast<cudaEvent_t>(per_thread_ready_));
    per_thread_ready_ = nullptr;
  }
  if (engine_.device >= 0) {
    cudaGetLastError();
  }
}

Status TensorRTDelegate::read_scratch_sizes() {
  const EngineProvider& provider = *engine_.provider;
  scratch_sizes_.assign(static_cast<size_t>(std::max(io_.num_profiles, 1)), 0);
  for (size_t p = 0; p < scratch_sizes_.size(); ++p) {
    TteError error{};
    const TteStatus s = provider.abi().device_memory_size(engine_.engine, static_cast<int32_t>(p),
                                                          &scratch_sizes_[p], &error);
    if (s != TTE_OK) {
      return provider.call_failed(s, error, "device_memory_size of profile " + std::to_string(p));
    }
    if (scratch_sizes_[p] < 0) {
      return Status(TTE_ERROR_INTERNAL, "engine provider '" + provider.name() + "' gave profile " +
                                            std::to_string(p) + " a scratch size of " +
                                            std::to_string(scratch_sizes_[p]) + " bytes");
    }
  }
  // An engine that needs no scratch in any profile borrows no arena.
  if (*std::max_element(scratch_sizes_.begin(), scratch_sizes_.end()) > 0) {
    ScratchArenas::instance().add_user();
    uses_arenas_ = true;
    return Status::Ok();
  }
  // Its context was still made without memory of its own, and TensorRT
  // wants memory set before enqueueV3 even then: "Setting memory to nullptr
  // is acceptable if the reported size is 0" (NvInferRuntime.h 11.1
  // :4064-4072, IExecutionContext::setDeviceMemoryV2; 10.3 the same text).
  TteError error{};
  const TteStatus s = provider.abi().set_device_memory(engine_.engine, nullptr, 0, &error);
  if (s != TTE_OK) {
    return provider.call_failed(s, error, "set_device_memory (NULL, 0 bytes)");
  }
  return Status::Ok();
}

Status TensorRTDelegate::give_scratch(ScratchArenas::Arena* arena) {
  const int64_t need =
      current_profile_ >= 0 && static_cast<size_t>(current_profile_) < scratch_sizes_.size()
          ? scratch_sizes_[current_profile_]
          : 0;
  Status status = ScratchArenas::instance().reserve(arena, need);
  if (!status.ok()) {
    return status;
  }
  if (arena->generation == scratch_generation_) {
    return Status::Ok();
  }
  const EngineProvider& provider = *engine_.provider;
  TteError error{};
  scratch_generation_ = 0;
  const TteStatus s =
      provider.abi().set_device_memory(engine_.engine, arena->memory, arena->bytes, &error);
  if (s != TTE_OK) {
    return provider.call_failed(s, error, "set_device_memory");
  }
  scratch_generation_ = arena->generation;
  return Status::Ok();
}

Status TensorRTDelegate::own_stream(void** stream) {
  if (stream_ == nullptr) {
    cudaStream_t created = nullptr;
    // A blocking stream, on purpose: callers that set no stream usually
    // produced their device inputs on the legacy default stream (torch's
    // default), and only a blocking stream waits for that work. Delegates'
    // own streams still run in parallel with each other.
    const cudaError_t status = cudaStreamCreateWithFlags(&created, cudaStreamDefault);
    if (status != cudaSuccess) {
      return cuda_failure(status, "creating the delegate's CUDA stream");
    }
    stream_ = created;
  }
  *stream = stream_;
  return Status::Ok();
}

Status TensorRTDelegate::stream_of_our_own(CallContext& call, void** stream) {
  return uses_arenas_ ? call_stream(call, engine_.device, stream) : own_stream(stream);
}

Status TensorRTDelegate::instead_of_per_thread_stream(CallContext& call, void** stream) {
  // cudaStreamPerThread is a default stream too, and TensorRT warns against
  // those (NvInferRuntime.h 11.1 :4639, IExecutionContext::enqueueV3: "Using
  // default stream may lead to performance issues due to additional
  // cudaDeviceSynchronize() calls ... Please use non-default stream
  // instead"). A blocking stream does not wait for the per-thread stream, so
  // an event orders the caller's work first; the call ends synchronized.
  void* replacement = nullptr;
  Status status = stream_of_our_own(call, &replacement);
  if (!status.ok()) {
    return status;
  }
  if (per_thread_ready_ == nullptr) {
    cudaEvent_t event = nullptr;
    const cudaError_t created = cudaEventCreateWithFlags(&event, cudaEventDisableTiming);
    if (created != cudaSuccess) {
      return cuda_failure(created, "creating the delegate's CUDA event");
    }
    per_thread_ready_ = event;
  }
  const auto ready = static_cast<cudaEvent_t>(per_thread_ready_);
  cudaError_t ordered = cudaEventRecord(ready, cudaStreamPerThread);
  if (ordered == cudaSuccess) {
    ordered = cudaStreamWaitEvent(static_cast<cudaStream_t>(replacement), ready, 0);
  }
  if (ordered != cudaSuccess) {
    return cuda_failure(ordered, "ordering the delegate's stream after cudaStreamPerThread");
  }
  *stream = replacement;
  return Status::Ok();
}

Status TensorRTDelegate::execute(CallContext& call, DelegateArgs args) {
  std::lock_guard<std::mutex> lock(mutex_);
  // Every call takes back what the calls before it offered to repeat: their
  // tickets no longer match.
  ++executions_;
  ++call.delegate_executions;
  call.repeat_offer = RepeatOffer{};
  if (engine_.device < 0) {
    return execute_locked(call, args);
  }
  DeviceGuard guard(engine_.device);
  if (guard.status() != cudaSuccess) {
    return cuda_failure(guard.status(), "selecting cuda:" + std::to_string(engine_.device));
  }
  return execute_locked(call, args);
}

Status TensorRTDelegate::execute_locked(CallContext& call, DelegateArgs args) {
  Status status = check_arguments(io_, args);
  if (!status.ok()) {
    return status;
  }
  if (output_bounds_.empty()) {
    for (size_t o = 0; o < io_.outputs.size(); ++o) {
      const auto sizes = args[io_.inputs.size() + o]->toTensor().sizes();
      output_bounds_.emplace_back(sizes.begin(), sizes.end());
    }
    data_dependent_.assign(io_.outputs.size(), 0);
  }
  const bool host_engine = engine_.provider->host_memory();
  // Host engines take no stream (engine_provider.h: host-memory providers
  // get NULL).
  void* stream = host_engine ? nullptr : call.stream();
  // The legacy default stream is never given to an engine: TensorRT then
  // adds cudaDeviceSynchronize calls (NvInferRuntime.h,
  // IExecutionContext::enqueueV3: "Using default stream may lead to
  // performance issues due to additional cudaDeviceSynchronize() calls"),
  // and it cannot be captured. The delegate's own stream is a blocking
  // stream, so it is ordered after the caller's legacy-stream work, and the
  // call ends synchronized as always.
  // Ordered after the per-thread stream by an event on each call.
  bool ordered_per_call = false;
  if (!host_engine && (!call.has_stream() || is_legacy_default_stream(stream))) {
    status = stream_of_our_own(call, &stream);
  } else if (!host_engine && stream == static_cast<void*>(cudaStreamPerThread)) {
    status = instead_of_per_thread_stream(call, &stream);
    ordered_per_call = true;
  }
  // Given back when the call returns, after the stream is synchronized.
  ScratchLease lease;
  if (status.ok() && uses_arenas_) {
    lease.borrow(engine_.device, stream);
  }
  int32_t profile = -1;
  if (status.ok()) {
    status = choose_profile(io_, args, &profile);
  }
  // Held until the call returns, after the stream is synchronized.
  std::unique_lock<std::mutex> profile_in_use;
  if (status.ok() && engine_.shared != nullptr && dynamic_shapes_) {
    // Delegates sharing one deserialized engine run on contexts of their
    // own, but "If the engine supports dynamic shapes, each execution
    // context in concurrent use must use a separate optimization profile"
    // (NvInferRuntime.h, class IExecutionContext: 10.3 :3561-3562, 11.1
    // :3951-3953): one call at a time per profile of the engine.
    profile_in_use = engine_.shared->use_profile(profile);
  }
  if (status.ok()) {
    status = batched() ? set_shapes_batched(args, profile, stream)
                       : set_profile_and_shapes(args, profile, stream);
  }
  if (status.ok() && !batched()) {
    status = resize_outputs(args);
  }
  if (!status.ok()) {
    return status;
  }
  const auto cuda_stream = static_cast<cudaStream_t>(stream);
  std::vector<Binding>& bindings = bindings_;
  status = binder_->bind(io_, args, cuda_stream, call.read_only, &bindings);
  if (status.ok()) {
    status = enqueue(bindings, stream, lease.get());
  }
  if (status.ok() && any_data_dependent_) {
    status = collect_data_dependent(args, bindings, stream);
  }
  if (status.ok()) {
    status = binder_->write_back(io_, bindings, cuda_stream);
  }
  if (host_engine) {
    return status;
  }
  // Always return with the work finished, on success and on failure (staging
  // copies may still read the caller's memory).
  const cudaError_t synced = cudaStreamSynchronize(cuda_stream);
  if (synced != cudaSuccess && status.ok()) {
    return cuda_failure(synced, "synchronizing the delegate's stream");
  }
  // The same call again would launch the same graph and nothing else when
  // it ended with a graph launch and every argument is used where it lies:
  // no staging copies, no scratch arena to give, no per-call ordering event,
  // no data-dependent output to read back, no profile lock of a shared
  // engine to hold.
  if (status.ok() && graphs_ != nullptr && graphs_->last_call_launched() && !any_data_dependent_ &&
      lease.get() == nullptr && !ordered_per_call && !profile_in_use.owns_lock() &&
      std::all_of(bindings.begin(), bindings.end(),
                  [](const Binding& b) { return !b.staged && b.mapped == nullptr; })) {
    call.repeat_offer = RepeatOffer{this, executions_};
  }
  return status;
}

Status TensorRTDelegate::repeat(uint64_t ticket, bool* repeated) {
  std::lock_guard<std::mutex> lock(mutex_);
  *repeated = false;
  if (ticket != executions_) {
    return Status::Ok();
  }
  std::optional<DeviceGuard> guard;
  if (engine_.device >= 0) {
    guard.emplace(engine_.device);
    if (guard->status() != cudaSuccess) {
      return cuda_failure(guard->status(), "selecting cuda:" + std::to_string(engine_.device));
    }
  }
  const Status launched = graphs_->launch_again();
  const cudaError_t synced = cudaStreamSynchronize(graphs_->last_stream());
  if (!launched.ok() || synced != cudaSuccess) {
    ++executions_;  // a failure ends the offer: the next call runs the method
  }
  if (!launched.ok()) {
    return launched.prefixed("engine provider '" + engine_.provider->name() +
                             "': enqueue failed: ");
  }
  if (synced != cudaSuccess) {
    return cuda_failure(synced, "synchronizing the delegate's stream");
  }
  *repeated = true;
  return Status::Ok();
}

Status TensorRTDelegate::set_profile_and_shapes(DelegateArgs args, int32_t profile, void* stream) {
  Status status;
  const EngineProvider& provider = *engine_.provider;
  const TteEngineProvider& abi = provider.abi();
  TteError error{};
  if (profile != current_profile_) {
    if (TteStatus s = abi.select_profile(engine_.engine, profile, stream, &error); s != TTE_OK) {
      return provider.call_failed(s, error, "select_profile");
    }
    current_profile_ = profile;
  }
  input_shapes_.clear();
  int64_t dims[TTE_MAX_RANK];
  for (size_t i = 0; i < io_.inputs.size(); ++i) {
    const EngineTensor& input = io_.inputs[i];
    engine_dims(args[i]->toTensor(), input.rank, dims);
    TteStatus s = abi.set_input_shape(engine_.engine, input.index, dims, input.rank, &error);
    if (s != TTE_OK) {
      return provider.call_failed(s, error, "set_input_shape of '" + input.name + "'");
    }
    input_shapes_.insert(input_shapes_.end(), dims, dims + input.rank);
  }
  return Status::Ok();
}

Status TensorRTDelegate::resize_outputs(DelegateArgs args) {
  const EngineProvider& provider = *engine_.provider;
  const TteEngineProvider& abi = provider.abi();
  TteError error{};
  int64_t dims[TTE_MAX_RANK];
  for (size_t o = 0; o < io_.outputs.size(); ++o) {
    const EngineTensor& output = io_.outputs[o];
    int32_t rank = 0;
    TteStatus s =
        abi.get_output_shape(engine_.engine, output.index, dims, TTE_MAX_RANK, &rank, &error);
    if (s != TTE_OK) {
      return provider.call_failed(s, error, "get_output_shape of '" + output.name + "'");
    }
    if (rank < 0 || rank > TTE_MAX_RANK) {
      return Status(TTE_ERROR_INTERNAL, "engine provider '" + provider.name() + "' gave output '" +
                                            output.name + "' rank " + std::to_string(rank));
    }
    Status status = fit_output(o, dims, rank, args);
    if (!status.ok()) {
      return status;
    }
  }
  return Status::Ok();
}

Status TensorRTDelegate::fit_output(size_t o, const int64_t* dims, int32_t rank,
                                    DelegateArgs args) {
  if (o == 0) {
    any_data_dependent_ = false;
  }
  if (!has_data_dependent_dim(dims, rank)) {
    data_dependent_[o] = 0;
    return fit_output_shape(io_, o, dims, rank, args);
  }
  const EngineProvider& provider = *engine_.provider;
  if (provider.abi().set_output_capacity == nullptr ||
      provider.abi().get_output_result == nullptr) {
    return Status(TTE_ERROR_NOT_SUPPORTED,
                  "engine provider '" + provider.name() + "' reports a data-dependent shape " +
                      format_dims(dims, rank) + " for output '" + io_.outputs[o].name +
                      "' but has no set_output_capacity/get_output_result (provider ABI 2): "
                      "update the provider");
  }
  data_dependent_[o] = 1;
  any_data_dependent_ = true;
  return fit_bound_shape(io_, o, rank, output_bounds_[o], args);
}

Status TensorRTDelegate::collect_data_dependent(DelegateArgs args, std::vector<Binding>& bindings,
                                                void* stream) {
  const EngineProvider& provider = *engine_.provider;
  const TteEngineProvider& abi = provider.abi();
  for (size_t o = 0; o < io_.outputs.size(); ++o) {
    if (!data_dependent_[o]) {
      continue;
    }
    const EngineTensor& output = io_.outputs[o];
    Binding& binding = bindings[io_.inputs.size() + o];
    int64_t dims[TTE_MAX_RANK];
    int32_t rank = 0;
    void* data = nullptr;
    TteError error{};
    const TteStatus s = abi.get_output_result(engine_.engine, output.index, dims, TTE_MAX_RANK,
                                              &rank, &data, &error);
    if (s != TTE_OK) {
      return provider.call_failed(s, error, "get_output_result of '" + output.name + "'");
    }
    if (rank < 0 || rank > TTE_MAX_RANK || has_data_dependent_dim(dims, rank)) {
      return Status(TTE_ERROR_INTERNAL, "engine provider '" + provider.name() + "' gave output '" +
                                            output.name + "' the result shape " +
                                            format_dims(dims, std::max(rank, 0)) +
                                            " after the run");
    }
    const executorch::aten::Tensor& tensor = args[io_.inputs.size() + o]->toTensor();
    const size_t element_size = tensor.element_size();
    size_t bytes = element_size;
    for (int32_t d = 0; d < rank; ++d) {
      bytes = dims[d] < 0 ? SIZE_MAX : bytes * static_cast<size_t>(dims[d]);
    }
    // ExecuTorch cannot grow a tensor past the bound it planned: failing is
    // the only answer that is not a truncated result.
    if (bytes > binding.nbytes) {
      return Status(TTE_ERROR_RUNTIME,
                    "output '" + output.name + "': the engine produced shape " +
                        format_dims(dims, rank) + " (" + std::to_string(bytes) +
                        " bytes), more than the " + std::to_string(binding.nbytes) +
                        " bytes ExecuTorch planned for it (upper bound " +
                        format_dims(output_bounds_[o].data(), output_bounds_[o].size()) +
                        "): export the output with a larger upper bound; no result was returned");
    }
    if (data != binding.address && bytes > 0) {
      // The engine asked for more than the bound and got the provider's own
      // memory; the result itself fits, so it moves into the bound memory.
      if (engine_.provider->host_memory()) {
        std::memmove(binding.address, data, bytes);
      } else {
        const cudaError_t copied = cudaMemcpyAsync(binding.address, data, bytes, cudaMemcpyDefault,
                                                   static_cast<cudaStream_t>(stream));
        if (copied != cudaSuccess) {
          return cuda_failure(copied,
                              "copying output '" + output.name + "' out of the provider's memory");
        }
      }
    }
    binding.nbytes = bytes;
    Status status = fit_output_shape(io_, o, dims, rank, args);
    if (!status.ok()) {
      return status;
    }
  }
  return Status::Ok();
}

Status TensorRTDelegate::set_shapes_batched(DelegateArgs args, int32_t profile, void* stream) {
  Status status;
  BatchArrays& b = batch_;
  if (b.input_indices.size() != io_.inputs.size()) {
    for (const EngineTensor& input : io_.inputs) {
      b.input_indices.push_back(input.index);
      b.input_ranks.push_back(input.rank);
    }
    for (const EngineTensor& output : io_.outputs) {
      b.output_indices.push_back(output.index);
    }
    for (size_t a = 0; a < io_.num_arguments(); ++a) {
      b.tensor_indices.push_back(io_.argument(a).index);
    }
    b.output_ranks.assign(io_.outputs.size(), 0);
    b.output_dims.assign(io_.outputs.size() * TTE_MAX_RANK, 0);
  }
  b.next_shapes.clear();
  int64_t dims[TTE_MAX_RANK];
  for (size_t i = 0; i < io_.inputs.size(); ++i) {
    engine_dims(args[i]->toTensor(), io_.inputs[i].rank, dims);
    b.next_shapes.insert(b.next_shapes.end(), dims, dims + io_.inputs[i].rank);
  }
  // The engine keeps what it was last given: unchanged shapes cost no call.
  if (!shapes_set_ || profile != current_profile_ || b.next_shapes != input_shapes_) {
    const EngineProvider& provider = *engine_.provider;
    TteEngineExecution call{};
    call.struct_size = sizeof(call);
    call.steps = TTE_EXECUTE_SET_SHAPES;
    call.profile = profile;
    call.num_inputs = static_cast<int32_t>(b.input_indices.size());
    call.input_indices = b.input_indices.data();
    call.input_ranks = b.input_ranks.data();
    call.input_dims = b.next_shapes.data();
    call.num_outputs = static_cast<int32_t>(b.output_indices.size());
    call.output_indices = b.output_indices.data();
    call.output_ranks = b.output_ranks.data();
    call.output_dims = b.output_dims.data();
    call.stream = stream;
    TteError error{};
    shapes_set_ = false;
    const TteStatus s = provider.abi().execute(engine_.engine, &call, &error);
    if (s != TTE_OK) {
      return provider.call_failed(s, error, "execute (set shapes)");
    }
    for (size_t o = 0; o < io_.outputs.size(); ++o) {
      if (b.output_ranks[o] < 0 || b.output_ranks[o] > TTE_MAX_RANK) {
        return Status(TTE_ERROR_INTERNAL, "engine provider '" + provider.name() +
                                              "' gave output '" + io_.outputs[o].name + "' rank " +
                                              std::to_string(b.output_ranks[o]));
      }
    }
    current_profile_ = profile;
    input_shapes_.swap(b.next_shapes);
    shapes_set_ = true;
  }
  for (size_t o = 0; o < io_.outputs.size(); ++o) {
    status = fit_output(o, &b.output_dims[o * TTE_MAX_RANK], b.output_ranks[o], args);
    if (!status.ok()) {
      return status;
    }
  }
  return Status::Ok();
}

Status TensorRTDelegate::enqueue(const std::vector<Binding>& bindings, void* stream,
                                 ScratchArenas::Arena* arena) {
  const EngineProvider& provider = *engine_.provider;
  const TteEngineProvider& abi = provider.abi();
  TteEngine* engine = engine_.engine;
  TteError error{};
  for (size_t o = 0; any_data_dependent_ && o < io_.outputs.size(); ++o) {
    if (!data_dependent_[o]) {
      continue;
    }
    const EngineTensor& spec = io_.outputs[o];
    const int64_t bytes = static_cast<int64_t>(bindings[io_.inputs.size() + o].nbytes);
    if (TteStatus s = abi.set_output_capacity(engine, spec.index, bytes, &error); s != TTE_OK) {
      return provider.call_failed(s, error, "set_output_capacity of '" + spec.name + "'");
    }
  }
  // Runs the engine with every argument at `addresses`: the bindings', or a
  // CUDA graph's own buffers. Batched providers get every address in the one
  // call that enqueues; neither kind is entered on a graph replay.
  auto enqueue_at = [&](const std::vector<void*>& addresses) -> Status {
    TteError e{};
    if (!batched()) {
      for (size_t a = 0; a < addresses.size(); ++a) {
        const EngineTensor& spec = io_.argument(a);
        TteStatus s = abi.set_tensor_address(engine, spec.index, addresses[a], &e);
        if (s != TTE_OK) {
          return provider.call_failed(s, e, "set_tensor_address of '" + spec.name + "'");
        }
      }
      return from_c_status(abi.enqueue(engine, stream, &e), e);
    }
    TteEngineExecution call{};
    call.struct_size = sizeof(call);
    call.steps = TTE_EXECUTE_ENQUEUE;
    call.num_tensors = static_cast<int32_t>(addresses.size());
    call.tensor_indices = batch_.tensor_indices.data();
    call.addresses = addresses.data();
    call.stream = stream;
    const Status status = from_c_status(abi.execute(engine, &call, &e), e);
    shapes_set_ = shapes_set_ && status.ok();
    return status;
  };
  std::vector<void*>& addresses = addresses_;
  addresses.resize(bindings.size());
  for (size_t a = 0; a < bindings.size(); ++a) {
    addresses[a] = bindings[a].address;
  }
  Status status;
  if (arena != nullptr) {
    // Host side only: the arena's lock orders set_device_memory + enqueue
    // among the delegates on this stream; the GPU work stays asynchronous.
    std::lock_guard<std::mutex> arena_lock(arena->mutex);
    status = give_scratch(arena);
    if (status.ok()) {
      RuntimeStats::instance().enqueues.fetch_add(1, std::memory_order_relaxed);
      status = enqueue_at(addresses);
    }
  } else if (graphs_ == nullptr || any_data_dependent_) {
    // Never captured with a data-dependent output: the engine picks its
    // memory and reads the shape back on the host during the run (TensorRT
    // calls IOutputAllocator::reallocateOutputAsync and notifyShape from
    // enqueueV3), which a replay would skip, and the result's size changes
    // with the data while a graph fixes every size.
    RuntimeStats::instance().enqueues.fetch_add(1, std::memory_order_relaxed);
    status = enqueue_at(addresses);
  } else {
    // A graph is kept per shape set: the execution context, the profile and
    // every input's dims.
    std::vector<int64_t>& key = graph_key_;
    key.clear();
    key.push_back(static_cast<int64_t>(reinterpret_cast<uintptr_t>(engine)));
    key.push_back(current_profile_);
    key.insert(key.end(), input_shapes_.begin(), input_shapes_.end());
    auto capturable = [&]() { return provider.engine_capturable(engine, stream); };
    status =
        graphs_->run(key, addresses, static_cast<cudaStream_t>(stream), enqueue_at, capturable);
  }
  if (status.ok()) {
    return status;
  }
  return status.prefixed("engine provider '" + provider.name() + "': enqueue failed: ");
}

}  // namespace tte
