#include "program/program_inputs.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <executorch/runtime/core/exec_aten/util/scalar_type_util.h>
#include <executorch/runtime/core/exec_aten/util/tensor_util.h>

#include "common/dtypes.h"
#include "common/et_status.h"
#include "common/text.h"
#include "cuda/cuda_device.h"
#include "program/dlpack_convert.h"
#include "program/executorch_step.h"
#include "program/program_metadata.h"

namespace tte {

namespace et = executorch::runtime;
using et::etensor::DeviceType;
using executorch::aten::DimOrderType;
using executorch::aten::SizesType;
using executorch::aten::StridesType;
using executorch::aten::Tensor;
using executorch::aten::TensorImpl;

namespace {

// ExecuTorch's own limit on tensor rank.
constexpr size_t kMaxRank = 16;
// A page-locked caller input smaller than this is copied into the arena:
// asking CUDA where its memory lives costs more than the copy.
constexpr size_t kMinAliasBytes = size_t{64} << 10;

// One run's inputs: the call (its stream, its read-only loans), the method
// and its state.
struct InputContext {
  CallContext& call;
  et::Method* method;
  MethodState* state;
  bool stream_used = false;
};

// `label()` names the input; called only for a message.
template <typename Label>
Status copy_async(void* dst, const void* src, size_t nbytes, InputContext& context,
                  const Label& label) {
  if (nbytes == 0) {
    return Status::Ok();
  }
  if (cuda_device_count() == 0) {
    return Status(TTE_ERROR_NO_DEVICE,
                  label() + " needs a CUDA copy, but this process sees no CUDA device (" +
                      cuda_unavailable_reason() + ")");
  }
  const cudaError_t error = cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDefault,
                                            static_cast<cudaStream_t>(context.call.stream()));
  if (error != cudaSuccess) {
    cudaGetLastError();
    return Status(TTE_ERROR_RUNTIME, "copying " + label() + " (" + std::to_string(nbytes) +
                                         " bytes) failed: " + cuda_error_text(error));
  }
  context.stream_used = true;
  return Status::Ok();
}

// Whether a host input at `data` is page-locked memory the delegate can DMA
// from as it is.
bool page_locked(const DLTensor& tensor, const void* data) {
  return tensor.device.device_type == kDLCUDAHost ||
         classify_pointer(data).kind == PointerKind::kHost;
}

// A planned input back on its own arena memory, if a run pointed it at the
// caller's.
Status restore_home(InputContext& context, size_t index, const Tensor& target,
                    const InputSpec& spec) {
  MethodState::Alias& alias = context.state->input_aliases[index];
  if (alias.data == nullptr) {
    return Status::Ok();
  }
  alias = MethodState::Alias{};
  ExecuTorchStep step(context.call, ProgramStep::kSetInput);
  const et::Error error = et::internal::set_tensor_data(target, spec.home, spec.home_bytes);
  if (error != et::Error::Ok) {
    return step.failed(error, "pointing " + io_label(context.state->name, true, index, spec.name) +
                                  " back at its planned memory (" +
                                  std::to_string(spec.home_bytes) +
                                  " bytes) after a run that read the caller's memory failed");
  }
  return Status::Ok();
}

// A tensor input ExecuTorch has taken once through Method::set_input, set
// again as set_input itself sets it (runtime/executor/method.cpp, ExecuTorch
// 1.5: resize to the new shape, then copy into a planned input's memory or
// point an unplanned one at the caller's), without the lookups set_input
// repeats on every call (the method's metadata, found by name). The checks
// set_input makes (dtype, shape, byte count) were made by the caller;
// `input_set_`, which execute() requires, stays set once set. False when
// ExecuTorch refuses: the caller then goes through set_input, whose log and
// error say why.
bool set_taken_input(const Tensor& target, bool planned, void* data, size_t nbytes,
                     const SizesType* sizes, size_t rank) {
  if (data == nullptr || nbytes == 0) {
    return false;  // set_input's own rules for empty tensors apply
  }
  const auto now = target.sizes();
  const bool same_shape =
      now.size() == rank && std::equal(now.begin(), now.end(), sizes, sizes + rank);
  if (!planned && same_shape && target.const_data_ptr() == data) {
    return true;  // already the caller's memory, as the last run left it
  }
  if (!same_shape && et::resize_tensor(target, {sizes, rank}) != et::Error::Ok) {
    return false;
  }
  if (target.nbytes() != nbytes) {
    return false;
  }
  if (planned) {
    std::memcpy(target.mutable_data_ptr(), data, nbytes);
    return true;
  }
  return et::internal::set_tensor_data(target, data, nbytes) == et::Error::Ok;
}

Status set_tensor_input(InputContext& context, const InputSpec& spec, size_t index,
                        const DLTensor* tensor, bool read_only) {
  // Messages are built only on failure.
  auto label = [&] { return io_label(context.state->name, true, index, spec.name); };
  if (tensor == nullptr) {
    return Status(TTE_ERROR_INVALID_ARGUMENT, label() + " is a tensor but got NULL");
  }
  const MemorySpace space = memory_space(tensor->device.device_type);
  if (space == MemorySpace::kUnsupported) {
    return Status(TTE_ERROR_NOT_SUPPORTED,
                  label() + " is on " + device_name(tensor->device) +
                      "; expected cpu, cuda, cuda_host or cuda_managed memory");
  }
  const std::optional<ScalarType> type = scalar_type_from_dlpack(tensor->dtype);
  if (!type || *type != spec.dtype) {
    return Status(TTE_ERROR_INVALID_ARGUMENT, label() + ": expected " +
                                                  scalar_type_name(spec.dtype) + ", got " +
                                                  dlpack_dtype_name(tensor->dtype));
  }
  const size_t rank = spec.bounds.size();
  // The rank is checked before the shape array is read: a producer's ndim
  // says nothing about how many values its shape array really holds.
  if (tensor->ndim < 0 || static_cast<size_t>(tensor->ndim) != rank) {
    return Status(TTE_ERROR_INVALID_ARGUMENT, label() + ": expected rank " + std::to_string(rank) +
                                                  " (shape " + format_dims(spec.bounds) +
                                                  "), got rank " + std::to_string(tensor->ndim));
  }
  if (rank > kMaxRank) {
    return Status(TTE_ERROR_NOT_SUPPORTED, label() + " has rank " + std::to_string(rank) +
                                               "; at most " + std::to_string(kMaxRank) +
                                               " is supported");
  }
  if (rank > 0 && tensor->shape == nullptr) {
    return Status(TTE_ERROR_INVALID_ARGUMENT, label() + " has a NULL shape array");
  }
  const int64_t* dims = tensor->shape;
  for (size_t d = 0; d < rank; ++d) {
    if (dims[d] < 0 || dims[d] > std::numeric_limits<SizesType>::max()) {
      return Status(TTE_ERROR_INVALID_ARGUMENT,
                    label() + " has an invalid shape " + format_dims(dims, rank));
    }
    if (spec.is_static && dims[d] != spec.bounds[d]) {
      return Status(TTE_ERROR_INVALID_ARGUMENT,
                    label() + ": expected shape " + format_dims(spec.bounds) + ", got " +
                        format_dims(dims, rank) + " (the program's shape is static)");
    }
    if (!spec.is_static && dims[d] > spec.bounds[d]) {
      return Status(TTE_ERROR_INVALID_ARGUMENT,
                    label() + ": shape " + format_dims(dims, rank) + " exceeds the upper bounds " +
                        format_dims(spec.bounds) + " in dim " + std::to_string(d));
    }
  }
  int64_t expected_strides[kMaxRank];
  dense_strides(dims, spec.dim_order.data(), rank, expected_strides);
  if (!strides_match(*tensor, expected_strides)) {
    const std::string strides =
        tensor->strides == nullptr ? std::string("row-major") : format_dims(tensor->strides, rank);
    return Status(TTE_ERROR_INVALID_ARGUMENT,
                  label() + " is not contiguous (strides " + strides + ", expected " +
                      format_dims(expected_strides, rank) + " for shape " +
                      format_dims(dims, rank) + "); pass a contiguous copy");
  }
  const std::optional<uint64_t> count = element_count(dims, static_cast<int32_t>(rank));
  const size_t nbytes = static_cast<size_t>(*count) * et::elementSize(*type);
  if (tensor->data == nullptr && nbytes > 0) {
    return Status(TTE_ERROR_INVALID_ARGUMENT,
                  label() + " has NULL data but shape " + format_dims(dims, rank));
  }
  char* source =
      tensor->data == nullptr ? nullptr : static_cast<char*>(tensor->data) + tensor->byte_offset;
  if (read_only) {
    context.call.read_only.add(source, nbytes, label());
  }

  SizesType sizes[kMaxRank];
  StridesType strides[kMaxRank];
  DimOrderType order[kMaxRank];
  for (size_t d = 0; d < rank && d < kMaxRank; ++d) {
    sizes[d] = static_cast<SizesType>(dims[d]);
    strides[d] = static_cast<StridesType>(expected_strides[d]);
    order[d] = spec.dim_order[d];
  }

  auto share_or_copy = [&](void* data, DeviceType tag) -> Status {
    std::vector<char>& taken = context.state->inputs_taken;
    if (index < taken.size() && taken[index] &&
        set_taken_input(context.state->input_values[index]->toTensor(), spec.memory_planned, data,
                        nbytes, sizes, rank)) {
      return Status::Ok();
    }
    TensorImpl impl(spec.dtype, static_cast<ssize_t>(rank), sizes, data, order, strides,
                    executorch::aten::TensorShapeDynamism::STATIC, tag,
                    tag == DeviceType::CUDA ? spec.device : 0);
    ExecuTorchStep step(context.call, ProgramStep::kSetInput);
    const et::Error error = context.method->set_input(et::EValue(Tensor(&impl)), index);
    if (error != et::Error::Ok) {
      return step.failed(error, "setting " + label() + " failed");
    }
    if (index < taken.size()) {
      taken[index] = 1;
    }
    return Status::Ok();
  };

  if (spec.memory_planned) {
    const Tensor target = context.state->input_values[index]->toTensor();
    Status status = restore_home(context, index, target, spec);
    if (!status.ok()) {
      return status;
    }
    if (space == MemorySpace::kHost && !spec.on_device) {
      if (context.state->arenas != nullptr && nbytes >= kMinAliasBytes &&
          page_locked(*tensor, source)) {
        // The delegate can DMA straight from the caller's memory: point the
        // input there instead of copying it into the arena.
        ExecuTorchStep step(context.call, ProgramStep::kSetInput);
        et::Error error = et::resize_tensor(target, {sizes, rank});
        if (error == et::Error::Ok) {
          error = et::internal::set_tensor_data(target, source, nbytes);
        }
        if (error != et::Error::Ok) {
          return step.failed(error, "setting " + label() + " to the caller's " +
                                        std::to_string(nbytes) + " bytes of shape " +
                                        format_dims(sizes, rank) + " failed");
        }
        context.state->input_aliases[index] = MethodState::Alias{source, nbytes};
        return Status::Ok();
      }
      return share_or_copy(source, DeviceType::CPU);
    }
    ExecuTorchStep step(context.call, ProgramStep::kSetInput);
    const et::Error error = et::resize_tensor(target, {sizes, rank});
    if (error != et::Error::Ok) {
      return step.failed(error,
                         "resizing " + label() + " to " + format_dims(dims, rank) + " failed");
    }
    return copy_async(target.mutable_data_ptr(), source, nbytes, context, label);
  }
  if (!spec.on_device) {
    return share_or_copy(source,
                         space == MemorySpace::kDevice ? DeviceType::CUDA : DeviceType::CPU);
  }
  if (space == MemorySpace::kDevice) {
    if (tensor->device.device_type == kDLCUDA && tensor->device.device_id != spec.device) {
      return Status(TTE_ERROR_INVALID_ARGUMENT,
                    label() + " is on " + device_name(tensor->device) +
                        " but the program places it on cuda:" + std::to_string(spec.device));
    }
    return share_or_copy(source, DeviceType::CUDA);
  }
  // A host tensor for an input the program keeps on the device: stage it.
  DeviceBuffer& staging = context.state->input_staging[index];
  const Status reserved = reserve_on_device(staging, nbytes, spec.device, label);
  if (!reserved.ok()) {
    return reserved;
  }
  const Status status = copy_async(staging.data(), source, nbytes, context, label);
  if (!status.ok()) {
    return status;
  }
  return share_or_copy(nbytes == 0 ? nullptr : staging.data(), DeviceType::CUDA);
}

Status set_scalar_input(InputContext& context, et::Tag expected, size_t index,
                        const TteInput& input) {
  auto label = [&] { return io_label(context.state->name, true, index, ""); };
  et::EValue value;
  bool matches = false;
  switch (expected) {
    case et::Tag::None:
      matches = input.tag == TTE_VALUE_NONE;
      break;
    case et::Tag::Int:
      matches = input.tag == TTE_VALUE_INT;
      value = et::EValue(input.int_value);
      break;
    case et::Tag::Double:
      matches = input.tag == TTE_VALUE_DOUBLE;
      value = et::EValue(input.double_value);
      break;
    case et::Tag::Bool:
      matches = input.tag == TTE_VALUE_BOOL;
      value = et::EValue(input.bool_value != 0);
      break;
    default:
      return Status(TTE_ERROR_NOT_SUPPORTED,
                    label() + " is a " + tag_name(expected) + ", which the C API cannot pass");
  }
  if (!matches) {
    return Status(TTE_ERROR_INVALID_ARGUMENT, label() + ": expected " + tag_name(expected) +
                                                  ", got " + value_tag_name(input.tag));
  }
  ExecuTorchStep step(context.call, ProgramStep::kSetInput);
  const et::Error error = context.method->set_input(value, index);
  if (error != et::Error::Ok) {
    return step.failed(error,
                       "setting " + label() + " failed" +
                           (expected == et::Tag::None
                                ? std::string()
                                : std::string(" (ExecuTorch requires a ") + tag_name(expected) +
                                      " input to equal the value the program was exported with)"));
  }
  return Status::Ok();
}

}  // namespace

void plan_method_inputs(et::Method& method, MethodState& state) {
  const et::MethodMeta meta = method.method_meta();
  const size_t count = method.inputs_size();
  state.input_tags.assign(count, et::Tag::None);
  state.input_specs.assign(count, InputSpec{});
  state.input_aliases.assign(count, MethodState::Alias{});
  state.inputs_taken.assign(count, 0);
  state.input_values.assign(count, nullptr);
  state.input_staging.clear();
  state.input_staging.resize(count);
  for (size_t i = 0; i < count; ++i) {
    state.input_values[i] = &method_input(method, i);
    auto tag = meta.input_tag(i);
    // An unreadable tag is reported by the run that meets it.
    state.input_tags[i] = tag.ok() ? *tag : et::Tag::String;
    if (!tag.ok() || *tag != et::Tag::Tensor) {
      continue;
    }
    auto info = meta.input_tensor_meta(i);
    if (!info.ok()) {
      state.input_tags[i] = et::Tag::String;
      continue;
    }
    InputSpec& spec = state.input_specs[i];
    spec.dtype = info->scalar_type();
    spec.bounds.assign(info->sizes().begin(), info->sizes().end());
    const auto order = info->dim_order();
    if (order.size() == spec.bounds.size()) {
      spec.dim_order.assign(order.begin(), order.end());
    } else {
      spec.dim_order.resize(spec.bounds.size());
      for (size_t d = 0; d < spec.dim_order.size(); ++d) {
        spec.dim_order[d] = static_cast<uint8_t>(d);
      }
    }
    spec.name = std::string(info->name());
    spec.memory_planned = info->is_memory_planned();
    const Tensor target = method_input(method, i).toTensor();
    spec.is_static = target.shape_dynamism() == executorch::aten::TensorShapeDynamism::STATIC;
    spec.on_device = target.device_type() == DeviceType::CUDA;
    spec.device = target.device_index();
    if (spec.memory_planned) {
      spec.home = target.mutable_data_ptr();
      spec.home_bytes = info->nbytes();
    }
  }
}

Status set_method_inputs(CallContext& call, et::Method& method, MethodState& state,
                         const TteInput* inputs, size_t num_inputs) {
  InputContext context{call, &method, &state};
  Status status;
  for (size_t i = 0; i < num_inputs && status.ok(); ++i) {
    const et::Tag tag = state.input_tags[i];
    if (tag == et::Tag::Tensor) {
      if (inputs[i].tag != TTE_VALUE_TENSOR) {
        status = Status(TTE_ERROR_INVALID_ARGUMENT,
                        io_label(state.name, true, i, state.input_specs[i].name) +
                            ": expected a tensor, got " + value_tag_name(inputs[i].tag));
      } else {
        // For a tensor, int_value carries its DLPack flags (c_api.h).
        const bool read_only =
            (static_cast<uint64_t>(inputs[i].int_value) & DLPACK_FLAG_BITMASK_READ_ONLY) != 0;
        status = set_tensor_input(context, state.input_specs[i], i, inputs[i].tensor, read_only);
      }
    } else if (tag == et::Tag::String) {
      // plan_method_inputs could not read this input's declaration.
      status =
          damaged_method_meta(et::Error::InvalidProgram, "cannot read the declaration of " +
                                                             io_label(state.name, true, i, ""));
    } else {
      status = set_scalar_input(context, tag, i, inputs[i]);
    }
  }
  if (context.stream_used) {
    // Staged copies may still read the caller's memory: wait for them
    // whether or not every input was set.
    const cudaError_t error =
        cudaStreamSynchronize(static_cast<cudaStream_t>(context.call.stream()));
    if (error != cudaSuccess && status.ok()) {
      cudaGetLastError();
      status = Status(TTE_ERROR_RUNTIME,
                      std::string("copying inputs failed: ") + cuda_error_text(error));
    }
  }
  return status;
}

bool in_input_alias(const MethodState& state, const void* data, size_t nbytes) {
  const auto* begin = static_cast<const char*>(data);
  for (const MethodState::Alias& alias : state.input_aliases) {
    const auto* alias_begin = static_cast<const char*>(alias.data);
    if (alias_begin != nullptr && begin < alias_begin + alias.bytes &&
        alias_begin < begin + std::max<size_t>(nbytes, 1)) {
      return true;
    }
  }
  return false;
}

}  // namespace tte
