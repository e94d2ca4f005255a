#include "program/program_outputs.h"

#include <cuda_runtime_api.h>

#include <cstring>
#include <memory>
#include <optional>
#include <string>

#include <executorch/runtime/core/exec_aten/util/tensor_util.h>

#include "common/dtypes.h"
#include "common/et_status.h"
#include "common/host_memory.h"
#include "common/text.h"
#include "cuda/cuda_device.h"
#include "program/dlpack_convert.h"
#include "program/executorch_step.h"
#include "program/program_inputs.h"
#include "program/program_metadata.h"

namespace tte {

namespace et = executorch::runtime;
using et::etensor::DeviceType;
using executorch::aten::Tensor;

namespace {

constexpr size_t kMaxRank = 16;

// Where an output's memory lives: the tensor's device tag, or for CPU-tagged
// tensors what the CUDA runtime says about the address.
DLDevice output_device(const Tensor& tensor) {
  if (tensor.device_type() == DeviceType::CUDA) {
    return DLDevice{kDLCUDA, tensor.device_index()};
  }
  if (cuda_device_count() == 0) {
    return DLDevice{kDLCPU, 0};
  }
  const PointerInfo info = classify_pointer(tensor.const_data_ptr());
  switch (info.kind) {
    case PointerKind::kDevice:
      return DLDevice{kDLCUDA, info.device};
    case PointerKind::kManaged:
      return DLDevice{kDLCUDAManaged, info.device};
    default:
      return DLDevice{kDLCPU, 0};
  }
}

// A DLManagedTensorVersioned made here, with the arrays it points to and
// what its memory is: a view (holding the memory's owner), a host copy, or a
// device copy from the pool.
struct OutputTensor {
  DLManagedTensorVersioned managed{};
  int64_t shape[kMaxRank];
  int64_t strides[kMaxRank];
  std::shared_ptr<const void> keep_alive;
  AlignedHostBuffer host_copy;
  void* device_copy = nullptr;
  int device = -1;

  ~OutputTensor() {
    if (device_copy != nullptr) {
      DeviceOutputPool::free(device_copy, device);
    }
  }
  static void destroy(DLManagedTensorVersioned* self) {
    delete static_cast<OutputTensor*>(self->manager_ctx);
  }
};

// One tensor output on its way out.
struct TensorOutput {
  const Tensor* tensor;
  size_t index;
  DLDevice device;
  size_t nbytes;
  DLDataType dtype;
  std::string label() const { return "output " + std::to_string(index); }
};

// Device copies queued on the run's stream, waited for once: the device
// they were queued on (-1: none yet).
struct QueuedCopies {
  void* stream = nullptr;
  int device = -1;

  cudaError_t wait() {
    if (device < 0) {
      return cudaSuccess;
    }
    DeviceGuard guard(device);
    device = -1;
    const cudaError_t error = cudaStreamSynchronize(static_cast<cudaStream_t>(stream));
    if (error != cudaSuccess) {
      cudaGetLastError();
    }
    return error;
  }
};

// Queues (device) or does (host) the copy of the output's bytes to `dst`.
Status copy_output(const TensorOutput& out, void* dst, DLDevice dst_device, QueuedCopies* queued) {
  if (out.nbytes == 0) {
    return Status::Ok();
  }
  const void* src = out.tensor->const_data_ptr();
  if (out.device.device_type == kDLCPU && dst_device.device_type == kDLCPU) {
    std::memcpy(dst, src, out.nbytes);
    return Status::Ok();
  }
  const int device = out.device.device_type == kDLCPU ? dst_device.device_id : out.device.device_id;
  // A stream (the legacy default one, at least) belongs to a device: wait
  // for copies queued on another device first.
  cudaError_t error =
      queued->device >= 0 && queued->device != device ? queued->wait() : cudaSuccess;
  if (error == cudaSuccess) {
    DeviceGuard guard(device);
    error = cudaMemcpyAsync(dst, src, out.nbytes, cudaMemcpyDefault,
                            static_cast<cudaStream_t>(queued->stream));
  }
  if (error != cudaSuccess) {
    cudaGetLastError();
    return Status(TTE_ERROR_RUNTIME,
                  "copying " + out.label() + " failed: " + cuda_error_text(error));
  }
  queued->device = device;
  return Status::Ok();
}

// A compact tensor of `shape`, `dtype` and `device` from `options.allocate`,
// checked before anything is written to it, for output `index`.
Status allocate_caller_tensor(size_t index, const int64_t* shape, size_t rank, DLDataType dtype,
                              DLDevice device, size_t nbytes, const OutputOptions& options,
                              DLManagedTensorVersioned** result) {
  auto label = [index] { return "output " + std::to_string(index); };
  DLTensor prototype{};
  prototype.device = device;
  prototype.ndim = static_cast<int32_t>(rank);
  prototype.dtype = dtype;
  prototype.shape = const_cast<int64_t*>(shape);
  DLManagedTensorVersioned* made = nullptr;
  TteError error{};
  const TteStatus code = options.allocate(options.allocator_context, &prototype, &made, &error);
  if (code != TTE_OK || made == nullptr) {
    // No tensor and no status: out of the memory it was asked for.
    const TteStatus none =
        device.device_type == kDLCPU ? TTE_ERROR_HOST_OUT_OF_MEMORY : TTE_ERROR_OUT_OF_MEMORY;
    return from_c_status(code != TTE_OK ? code : none, error)
        .prefixed("allocating " + label() + " (" + format_dims(shape, rank) + ", " +
                  dlpack_dtype_name(dtype) + ") failed: ");
  }
  const DLTensor& got = made->dl_tensor;
  bool fits = made->version.major == 1 && got.ndim == prototype.ndim &&
              got.dtype.code == dtype.code && got.dtype.bits == dtype.bits &&
              got.dtype.lanes == dtype.lanes && got.device.device_type == device.device_type &&
              got.device.device_id == device.device_id && (got.data != nullptr || nbytes == 0);
  for (size_t d = 0; fits && d < rank; ++d) {
    fits = got.shape[d] == shape[d];
  }
  if (fits) {
    int64_t dense[kMaxRank];
    dense_strides(shape, nullptr, rank, dense);
    fits = strides_match(got, dense);
  }
  if (!fits) {
    if (made->deleter != nullptr) {
      made->deleter(made);
    }
    return Status(TTE_ERROR_INTERNAL, "the output allocator gave " + label() +
                                          " a tensor that is not a compact " +
                                          format_dims(shape, rank) + " " +
                                          dlpack_dtype_name(dtype) + " on " + device_name(device));
  }
  *result = made;
  return Status::Ok();
}

void* caller_data(const DLManagedTensorVersioned& made) {
  const DLTensor& got = made.dl_tensor;
  return got.data == nullptr ? nullptr : static_cast<char*>(got.data) + got.byte_offset;
}

void delete_caller_tensor(DLManagedTensorVersioned* made) {
  if (made != nullptr && made->deleter != nullptr) {
    made->deleter(made);
  }
}

// An owned copy in the caller's memory: `options.allocate` makes a tensor of
// the output's dtype, shape and device, checked before it is written.
Status caller_copy(const TensorOutput& out, const OutputOptions& options, QueuedCopies* queued,
                   TteOutput* output) {
  const Tensor& tensor = *out.tensor;
  int64_t shape[kMaxRank];
  const size_t rank = tensor.dim();
  for (size_t d = 0; d < rank; ++d) {
    shape[d] = tensor.size(d);
  }
  const DLDevice device = out.device.device_type == kDLCUDAManaged
                              ? DLDevice{kDLCUDA, out.device.device_id}
                              : out.device;
  DLManagedTensorVersioned* made = nullptr;
  const Status allocated =
      allocate_caller_tensor(out.index, shape, rank, out.dtype, device, out.nbytes, options, &made);
  if (!allocated.ok()) {
    return allocated;
  }
  const Status status = copy_output(out, caller_data(*made), device, queued);
  if (!status.ok()) {
    delete_caller_tensor(made);
    return status;
  }
  made->flags |= DLPACK_FLAG_BITMASK_IS_COPIED;
  output->tag = TTE_VALUE_TENSOR;
  output->tensor = made;
  return Status::Ok();
}

// The caller tensor the method was given for this output, taken, when the
// method wrote the output there with the shape it was allocated with: the
// output itself, nothing to copy. NULL otherwise; the tensor is then left
// in `given`, handed back once any copy that may read it has finished.
DLManagedTensorVersioned* written_caller_tensor(const Tensor& tensor,
                                                DLManagedTensorVersioned*& given) {
  DLManagedTensorVersioned* made = given;
  if (made == nullptr) {
    return nullptr;
  }
  const DLTensor& got = made->dl_tensor;
  bool written = tensor.const_data_ptr() == caller_data(*made) &&
                 static_cast<int32_t>(tensor.dim()) == got.ndim;
  for (int32_t d = 0; written && d < got.ndim; ++d) {
    written = tensor.size(d) == got.shape[d];
  }
  if (!written) {
    return nullptr;
  }
  given = nullptr;
  return made;
}

Status make_tensor_output(const TensorOutput& out, const MethodState& state,
                          const OutputOptions& options, QueuedCopies* queued, TteOutput* output) {
  const Tensor& tensor = *out.tensor;
  const size_t rank = tensor.dim();
  if (rank > kMaxRank) {
    return Status(TTE_ERROR_NOT_SUPPORTED, out.label() + " has rank " + std::to_string(rank) +
                                               "; at most " + std::to_string(kMaxRank) +
                                               " is supported");
  }
  void* data = tensor.mutable_data_ptr();
  // A view must be of memory the program owns: an output that is an input
  // the caller's memory stands in for is copied.
  const bool copy = options.copy || in_input_alias(state, data, out.nbytes);
  if (copy && options.allocate != nullptr) {
    return caller_copy(out, options, queued, output);
  }
  auto result = std::make_unique<OutputTensor>();
  result->managed.manager_ctx = result.get();
  for (size_t d = 0; d < rank; ++d) {
    result->shape[d] = tensor.size(d);
    result->strides[d] = tensor.strides()[d];
  }
  DLDevice device = out.device;
  uint64_t flags = 0;
  if (copy) {
    flags |= DLPACK_FLAG_BITMASK_IS_COPIED;
    void* dst = nullptr;
    if (out.nbytes > 0) {
      if (device.device_type == kDLCPU) {
        if (result->host_copy.reserve(out.nbytes) != cudaSuccess) {
          return Status(
              TTE_ERROR_HOST_OUT_OF_MEMORY,
              "cannot allocate " + std::to_string(out.nbytes) + " host bytes for " + out.label());
        }
        dst = result->host_copy.data();
      } else {
        device = DLDevice{kDLCUDA, device.device_id};
        DeviceGuard guard(device.device_id);
        const cudaError_t error =
            DeviceOutputPool::allocate(&result->device_copy, out.nbytes, device.device_id,
                                       static_cast<cudaStream_t>(options.stream));
        if (error != cudaSuccess) {
          return Status(TTE_ERROR_OUT_OF_MEMORY,
                        "cannot allocate " + std::to_string(out.nbytes) +
                            " bytes on cuda:" + std::to_string(device.device_id) + " for " +
                            out.label() + " (" + cuda_error_text(error) + ")");
        }
        result->device = device.device_id;
        dst = result->device_copy;
      }
      const Status status = copy_output(out, dst, device, queued);
      if (!status.ok()) {
        return status;
      }
    }
    data = dst;
  } else {
    result->keep_alive = options.keep_alive;
  }
  DLManagedTensorVersioned& managed = result->managed;
  managed.version = DLPackVersion{1, 0};
  managed.deleter = &OutputTensor::destroy;
  managed.flags = flags;
  managed.dl_tensor.data = data;
  managed.dl_tensor.device = device;
  managed.dl_tensor.ndim = static_cast<int32_t>(rank);
  managed.dl_tensor.dtype = out.dtype;
  managed.dl_tensor.shape = result->shape;
  managed.dl_tensor.strides = result->strides;
  managed.dl_tensor.byte_offset = 0;
  output->tag = TTE_VALUE_TENSOR;
  output->tensor = &result.release()->managed;
  return Status::Ok();
}

Status make_output(const et::EValue& value, size_t index, MethodState& state,
                   const OutputOptions& options, QueuedCopies* queued, TteOutput* output) {
  *output = TteOutput{};
  switch (value.tag) {
    case et::Tag::None:
      output->tag = TTE_VALUE_NONE;
      return Status::Ok();
    case et::Tag::Int:
      output->tag = TTE_VALUE_INT;
      output->int_value = value.toInt();
      return Status::Ok();
    case et::Tag::Double:
      output->tag = TTE_VALUE_DOUBLE;
      output->double_value = value.toDouble();
      return Status::Ok();
    case et::Tag::Bool:
      output->tag = TTE_VALUE_BOOL;
      output->bool_value = value.toBool() ? 1 : 0;
      return Status::Ok();
    case et::Tag::Tensor:
      break;
    default:
      output->tag = TTE_VALUE_OTHER;
      return Status::Ok();
  }
  const Tensor tensor = value.toTensor();
  if (index < state.caller_outputs.size()) {
    if (DLManagedTensorVersioned* made =
            written_caller_tensor(tensor, state.caller_outputs[index])) {
      made->flags |= DLPACK_FLAG_BITMASK_IS_COPIED;
      output->tag = TTE_VALUE_TENSOR;
      output->tensor = made;
      return Status::Ok();
    }
  }
  const std::optional<DLDataType> dtype = dlpack_from_scalar_type(tensor.scalar_type());
  if (!dtype) {
    return Status(TTE_ERROR_NOT_SUPPORTED,
                  "output " + std::to_string(index) + " has element type " +
                      scalar_type_name(tensor.scalar_type()) + ", which DLPack cannot describe");
  }
  const TensorOutput out{&tensor, index, output_device(tensor), tensor.nbytes(), *dtype};
  return make_tensor_output(out, state, options, queued, output);
}

}  // namespace

void plan_output_buffers(et::Method& method, MethodState& state) {
  const et::MethodMeta meta = method.method_meta();
  const size_t count = method.outputs_size();
  state.output_needs_buffer.assign(count, false);
  state.output_buffers.clear();
  state.output_buffers.resize(count);
  release_caller_outputs(state);
  state.caller_outputs.assign(count, nullptr);
  state.output_values.assign(count, nullptr);
  for (size_t i = 0; i < count; ++i) {
    const et::EValue& value = method.get_output(i);
    state.output_values[i] = &value;
    auto info = meta.output_tensor_meta(i);
    state.output_needs_buffer[i] = value.isTensor() && info.ok() && !info->is_memory_planned() &&
                                   value.toTensor().const_data_ptr() == nullptr;
    if (state.output_needs_buffer[i]) {
      state.output_buffers[i].declared_bytes = info->nbytes();
    }
  }
}

namespace {

// Names output `index` of a method in messages; the text is made only for
// one.
struct OutputName {
  et::Method& method;
  size_t index;
  std::string text() const {
    const et::MethodMeta meta = method.method_meta();
    auto info = meta.output_tensor_meta(index);
    return io_label(meta.name(), false, index, info.ok() ? std::string(info->name()) : "");
  }
};

// Points output `i`, which plan_output_buffers found to be a tensor the
// method does not plan, at `size` bytes at `data`: what
// Method::set_output_data_ptr does for such an output (ExecuTorch 1.5,
// runtime/executor/method.cpp: the size check, then
// internal::set_tensor_data), without the lookup of the method's metadata by
// name it makes on every call. Where the size does not fit, set_output_data_ptr
// itself refuses, with its log and error.
Status point_output_at(CallContext& call, et::Method& method, size_t i, const Tensor& tensor,
                       void* data, size_t size, const OutputName& name) {
  if (tensor.nbytes() <= size &&
      et::internal::set_tensor_data(tensor, data, size) == et::Error::Ok) {
    return Status::Ok();
  }
  ExecuTorchStep step(call, ProgramStep::kSetOutput);
  const et::Error error = method.set_output_data_ptr(data, size, i);
  if (error != et::Error::Ok) {
    return step.failed(error, "giving " + name.text() + " its buffer failed");
  }
  return Status::Ok();
}

// Gives output `i` a tensor from the caller's allocator when its shape is
// known before the run (static); `given` says whether it did.
Status give_caller_buffer(CallContext& call, et::Method& method, MethodState& state,
                          const OutputOptions& options, size_t i, const Tensor& tensor,
                          const OutputName& name, bool* given) {
  *given = false;
  const size_t rank = tensor.dim();
  const std::optional<DLDataType> dtype = dlpack_from_scalar_type(tensor.scalar_type());
  const size_t nbytes = tensor.nbytes();
  if (tensor.shape_dynamism() != executorch::aten::TensorShapeDynamism::STATIC || rank > kMaxRank ||
      !dtype || nbytes == 0) {
    return Status::Ok();
  }
  int64_t shape[kMaxRank];
  for (size_t d = 0; d < rank; ++d) {
    shape[d] = tensor.size(d);
  }
  const DLDevice device = tensor.device_type() == DeviceType::CUDA
                              ? DLDevice{kDLCUDA, tensor.device_index()}
                              : DLDevice{kDLCPU, 0};
  DLManagedTensorVersioned* made = nullptr;
  const Status allocated =
      allocate_caller_tensor(i, shape, rank, *dtype, device, nbytes, options, &made);
  if (!allocated.ok()) {
    return allocated;
  }
  const Status pointed = point_output_at(call, method, i, tensor, caller_data(*made), nbytes, name);
  if (!pointed.ok()) {
    delete_caller_tensor(made);
    return pointed;
  }
  state.caller_outputs[i] = made;
  *given = true;
  return Status::Ok();
}

// A host buffer of `nbytes` for an unplanned output, within the bound that
// planned memory has (method_load_checks.cpp).
Status reserve_output_on_host(AlignedHostBuffer& buffer, size_t nbytes, const std::string& label,
                              uint64_t max_planned_memory) {
  const uint64_t limit = max_planned_memory > 0 ? max_planned_memory : available_host_memory();
  if (nbytes > limit) {
    return Status(
        TTE_ERROR_HOST_OUT_OF_MEMORY,
        label + " needs a buffer of " + byte_count_text(nbytes) + " of host memory, more than " +
            (max_planned_memory > 0 ? "max_planned_memory allows (" : "is available now (") +
            byte_count_text(limit) +
            "): if that size is right, open the program with max_planned_memory set to at "
            "least " +
            std::to_string(nbytes) + " (bytes)");
  }
  if (buffer.reserve(nbytes) != cudaSuccess) {
    return Status(TTE_ERROR_HOST_OUT_OF_MEMORY, "cannot allocate " + std::to_string(nbytes) +
                                                    " host bytes for " + label +
                                                    ": free memory, then open the program again");
  }
  return Status::Ok();
}

}  // namespace

void release_caller_outputs(MethodState& state) {
  for (DLManagedTensorVersioned*& made : state.caller_outputs) {
    delete_caller_tensor(made);
    made = nullptr;
  }
}

Status give_output_buffers(CallContext& call, et::Method& method, MethodState& state,
                           const OutputOptions& options) {
  const bool to_caller = options.copy && options.allocate != nullptr;
  for (size_t i = 0; i < state.output_needs_buffer.size(); ++i) {
    if (!state.output_needs_buffer[i]) {
      continue;
    }
    const Tensor tensor = state.output_values[i]->toTensor();
    const OutputName name{method, i};
    if (to_caller) {
      bool given = false;
      const Status status =
          give_caller_buffer(call, method, state, options, i, tensor, name, &given);
      if (!status.ok()) {
        release_caller_outputs(state);
        return status;
      }
      if (given) {
        continue;
      }
    }
    OutputBuffer& buffer = state.output_buffers[i];
    const size_t nbytes = buffer.declared_bytes;
    void* data = nullptr;
    size_t capacity = 0;
    if (tensor.device_type() == DeviceType::CUDA) {
      const Status reserved = reserve_on_device(buffer.device, nbytes, tensor.device_index(),
                                                [&name] { return name.text(); });
      if (!reserved.ok()) {
        release_caller_outputs(state);
        return reserved;
      }
      data = buffer.device.data();
      capacity = buffer.device.capacity();
    } else {
      if (buffer.host_refused.ok() &&
          (buffer.host.data() == nullptr || buffer.host.capacity() < nbytes)) {
        buffer.host_refused =
            reserve_output_on_host(buffer.host, nbytes, name.text(), options.max_planned_memory);
      }
      if (!buffer.host_refused.ok()) {
        release_caller_outputs(state);
        return buffer.host_refused;
      }
      data = buffer.host.data();
      capacity = buffer.host.capacity();
    }
    if (tensor.const_data_ptr() == data) {
      continue;  // given this buffer by an earlier run, and still holding it
    }
    const Status pointed = point_output_at(call, method, i, tensor, data, capacity, name);
    if (!pointed.ok()) {
      release_caller_outputs(state);
      return pointed;
    }
  }
  return Status::Ok();
}

Status collect_method_outputs(MethodState& state, const OutputOptions& options, TteOutput* outputs,
                              size_t num_outputs) {
  QueuedCopies queued{options.stream};
  Status status;
  for (size_t i = 0; i < num_outputs && status.ok(); ++i) {
    status = make_output(*state.output_values[i], i, state, options, &queued, &outputs[i]);
  }
  // Copies may still read the method's memory: wait for them on failure too.
  const cudaError_t error = queued.wait();
  if (error != cudaSuccess && status.ok()) {
    status = Status(TTE_ERROR_RUNTIME,
                    std::string("copying the outputs failed: ") + cuda_error_text(error));
  }
  // Caller tensors not returned: of outputs not reached (a failure before
  // them), or that the method did not write in place (copied from).
  release_caller_outputs(state);
  if (!status.ok()) {
    release_outputs(outputs, num_outputs);
  }
  return status;
}

void release_outputs(TteOutput* outputs, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    if (outputs[i].tensor != nullptr && outputs[i].tensor->deleter != nullptr) {
      outputs[i].tensor->deleter(outputs[i].tensor);
    }
    outputs[i] = TteOutput{};
  }
}

}  // namespace tte
