#include "program/program_inputs.h"

#include <cuda_runtime_api.h>

#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <executorch/runtime/core/exec_aten/util/scalar_type_util.h>
#include <executorch/runtime/core/exec_aten/util/tensor_util.h>

#include "common/dtypes.h"
#include "common/text.h"
#include "common/et_status.h"
#include "cuda/cuda_device.h"
#include "program/dlpack_convert.h"
#include "program/program_metadata.h"

namespace tte {

namespace et = executorch::runtime;
using et::etensor::DeviceType;
using executorch::aten::SizesType;
using executorch::aten::StridesType;
using executorch::aten::Tensor;
using executorch::aten::TensorImpl;

namespace {

struct InputContext {
  et::Method* method;
  MethodState* state;
  void* stream;
  bool stream_used = false;
};

Status copy_async(void* dst, const void* src, size_t nbytes, InputContext& context,
                  const std::string& label) {
  if (nbytes == 0) {
    return Status::Ok();
  }
  if (cuda_device_count() == 0) {
    return Status(TTE_ERROR_NO_DEVICE,
                  label + " needs a CUDA copy, but this process sees no CUDA device");
  }
  const cudaError_t error = cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDefault,
                                            static_cast<cudaStream_t>(context.stream));
  if (error != cudaSuccess) {
    cudaGetLastError();
    return Status(TTE_ERROR_RUNTIME, "copying " + label + " (" + std::to_string(nbytes) +
                                         " bytes) failed: " + cuda_error_text(error));
  }
  context.stream_used = true;
  return Status::Ok();
}

Status set_tensor_input(InputContext& context, const et::TensorInfo& meta, size_t index,
                        const DLTensor* tensor) {
  const std::string label = io_label(true, index, std::string(meta.name()));
  if (tensor == nullptr) {
    return Status(TTE_ERROR_INVALID_ARGUMENT, label + " is a tensor but got NULL");
  }
  const MemorySpace space = memory_space(tensor->device.device_type);
  if (space == MemorySpace::kUnsupported) {
    return Status(TTE_ERROR_NOT_SUPPORTED,
                  label + " is on " + device_name(tensor->device) +
                      "; expected cpu, cuda, cuda_host or cuda_managed memory");
  }
  const std::optional<ScalarType> type = scalar_type_from_dlpack(tensor->dtype);
  if (!type || *type != meta.scalar_type()) {
    return Status(TTE_ERROR_INVALID_ARGUMENT, label + ": expected " +
                                                  scalar_type_name(meta.scalar_type()) + ", got " +
                                                  dlpack_dtype_name(tensor->dtype));
  }
  const auto bounds = meta.sizes();
  std::vector<int64_t> bound_dims(bounds.begin(), bounds.end());
  if (tensor->ndim < 0 || static_cast<size_t>(tensor->ndim) != bounds.size()) {
    return Status(TTE_ERROR_INVALID_ARGUMENT,
                  label + ": expected rank " + std::to_string(bounds.size()) + " (shape " +
                      format_dims(bound_dims) + "), got rank " + std::to_string(tensor->ndim));
  }
  if (tensor->ndim > 0 && tensor->shape == nullptr) {
    return Status(TTE_ERROR_INVALID_ARGUMENT, label + " has a NULL shape array");
  }
  std::vector<int64_t> dims(tensor->shape, tensor->shape + tensor->ndim);

  const et::EValue& target_value = method_input(*context.method, index);
  const Tensor target = target_value.toTensor();
  const bool is_static = target.shape_dynamism() == executorch::aten::TensorShapeDynamism::STATIC;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] < 0 || dims[d] > std::numeric_limits<SizesType>::max()) {
      return Status(TTE_ERROR_INVALID_ARGUMENT,
                    label + " has an invalid shape " + format_dims(dims));
    }
    if (is_static && dims[d] != bound_dims[d]) {
      return Status(TTE_ERROR_INVALID_ARGUMENT,
                    label + ": expected shape " + format_dims(bound_dims) + ", got " +
                        format_dims(dims) + " (the program's shape is static)");
    }
    if (!is_static && dims[d] > bound_dims[d]) {
      return Status(TTE_ERROR_INVALID_ARGUMENT,
                    label + ": shape " + format_dims(dims) + " exceeds the upper bounds " +
                        format_dims(bound_dims) + " in dim " + std::to_string(d));
    }
  }
  const auto order = meta.dim_order();
  const std::vector<uint8_t> dim_order(order.begin(), order.end());
  const std::vector<int64_t> expected_strides = dense_strides(dims, dim_order);
  if (!strides_match(*tensor, expected_strides)) {
    const std::string strides =
        tensor->strides == nullptr
            ? std::string("row-major")
            : format_dims(tensor->strides, static_cast<size_t>(tensor->ndim));
    return Status(TTE_ERROR_INVALID_ARGUMENT, label + " is not contiguous (strides " + strides +
                                                  ", expected " + format_dims(expected_strides) +
                                                  " for shape " + format_dims(dims) +
                                                  "); pass a contiguous copy");
  }
  const std::optional<uint64_t> count = element_count(tensor->shape, tensor->ndim);
  const size_t nbytes = static_cast<size_t>(*count) * et::elementSize(*type);
  if (tensor->data == nullptr && nbytes > 0) {
    return Status(TTE_ERROR_INVALID_ARGUMENT,
                  label + " has NULL data but shape " + format_dims(dims));
  }
  char* source =
      tensor->data == nullptr ? nullptr : static_cast<char*>(tensor->data) + tensor->byte_offset;

  std::vector<SizesType> sizes(dims.begin(), dims.end());
  std::vector<StridesType> strides(expected_strides.begin(), expected_strides.end());
  std::vector<uint8_t> order_copy = dim_order;
  if (order_copy.size() != sizes.size()) {
    order_copy.resize(sizes.size());
    for (size_t d = 0; d < order_copy.size(); ++d) {
      order_copy[d] = static_cast<uint8_t>(d);
    }
  }
  const bool target_on_device = target.device_type() == DeviceType::CUDA;
  const int target_device = target.device_index();

  auto share_or_copy = [&](void* data, DeviceType tag) -> Status {
    TensorImpl impl(meta.scalar_type(), static_cast<ssize_t>(sizes.size()), sizes.data(), data,
                    order_copy.data(), strides.data(),
                    executorch::aten::TensorShapeDynamism::STATIC, tag,
                    tag == DeviceType::CUDA ? target_device : 0);
    const et::Error error = context.method->set_input(et::EValue(Tensor(&impl)), index);
    if (error != et::Error::Ok) {
      return Status(status_code_of(error), "setting " + label + " failed: " + et_error_text(error));
    }
    return Status::Ok();
  };

  if (meta.is_memory_planned()) {
    if (space == MemorySpace::kHost && !target_on_device) {
      return share_or_copy(source, DeviceType::CPU);
    }
    const et::Error error = et::resize_tensor(target, {sizes.data(), sizes.size()});
    if (error != et::Error::Ok) {
      return Status(status_code_of(error), "resizing " + label + " to " + format_dims(dims) +
                                               " failed: " + et_error_text(error));
    }
    return copy_async(target.mutable_data_ptr(), source, nbytes, context, label);
  }
  if (!target_on_device) {
    return share_or_copy(source,
                         space == MemorySpace::kDevice ? DeviceType::CUDA : DeviceType::CPU);
  }
  if (space == MemorySpace::kDevice) {
    if (tensor->device.device_type == kDLCUDA && tensor->device.device_id != target_device) {
      return Status(TTE_ERROR_INVALID_ARGUMENT,
                    label + " is on " + device_name(tensor->device) +
                        " but the program places it on cuda:" + std::to_string(target_device));
    }
    return share_or_copy(source, DeviceType::CUDA);
  }
  // A host tensor for an input the program keeps on the device: stage it.
  DeviceBuffer& staging = context.state->input_staging[index];
  Status status = reserve_on_device(staging, nbytes, target_device, label);
  if (!status.ok()) {
    return status;
  }
  status = copy_async(staging.data(), source, nbytes, context, label);
  if (!status.ok()) {
    return status;
  }
  return share_or_copy(nbytes == 0 ? nullptr : staging.data(), DeviceType::CUDA);
}

Status set_scalar_input(InputContext& context, et::Tag expected, size_t index,
                        const TteInput& input) {
  const std::string label = "input " + std::to_string(index);
  et::EValue value;
  bool matches = false;
  switch (expected) {
    case et::Tag::None: matches = input.tag == TTE_VALUE_NONE; break;
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
                    label + " is a " + tag_name(expected) + ", which the C API cannot pass");
  }
  if (!matches) {
    return Status(TTE_ERROR_INVALID_ARGUMENT, label + ": expected " + tag_name(expected) +
                                                  ", got " + value_tag_name(input.tag));
  }
  const et::Error error = context.method->set_input(value, index);
  if (error != et::Error::Ok) {
    return Status(status_code_of(error),
                  "setting " + label + " failed: " + et_error_text(error) +
                      (expected == et::Tag::None
                           ? std::string()
                           : std::string(" (ExecuTorch requires a ") + tag_name(expected) +
                                 " input to equal the value the program was exported with)"));
  }
  return Status::Ok();
}

}  // namespace

Status set_method_inputs(et::Method& method, MethodState& state, const TteInput* inputs,
                         size_t num_inputs, void* stream) {
  const et::MethodMeta meta = method.method_meta();
  InputContext context{&method, &state, stream};
  Status status;
  for (size_t i = 0; i < num_inputs && status.ok(); ++i) {
    auto tag = meta.input_tag(i);
    if (!tag.ok()) {
      status =
          Status(TTE_ERROR_INVALID_PROGRAM, "cannot read the type of input " + std::to_string(i));
    } else if (*tag != et::Tag::Tensor) {
      status = set_scalar_input(context, *tag, i, inputs[i]);
    } else if (inputs[i].tag != TTE_VALUE_TENSOR) {
      status = Status(TTE_ERROR_INVALID_ARGUMENT, "input " + std::to_string(i) +
                                                      ": expected a tensor, got " +
                                                      value_tag_name(inputs[i].tag));
    } else {
      auto info = meta.input_tensor_meta(i);
      status = info.ok() ? set_tensor_input(context, *info, i, inputs[i].tensor)
                         : Status(TTE_ERROR_INVALID_PROGRAM,
                                  "cannot read the metadata of input " + std::to_string(i));
    }
  }
  if (context.stream_used) {
    // Staged copies may still read the caller's memory: wait for them
    // whether or not every input was set.
    const cudaError_t error = cudaStreamSynchronize(static_cast<cudaStream_t>(context.stream));
    if (error != cudaSuccess && status.ok()) {
      cudaGetLastError();
      status = Status(TTE_ERROR_RUNTIME,
                      std::string("copying inputs failed: ") + cuda_error_text(error));
    }
  }
  return status;
}

}  // namespace tte
