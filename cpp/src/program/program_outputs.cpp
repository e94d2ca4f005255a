#include "program/program_outputs.h"

#include <cuda_runtime_api.h>

#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/dtypes.h"
#include "common/et_status.h"
#include "cuda/cuda_device.h"
#include "program/dlpack_convert.h"
#include "program/program_metadata.h"

namespace tte {

namespace et = executorch::runtime;
using et::etensor::DeviceType;
using executorch::aten::Tensor;

namespace {

// Where an output's memory lives: the tensor's device tag, or for CPU-tagged
// tensors what the CUDA runtime says about the address.
DLDevice output_device(const Tensor& tensor) {
  if (tensor.device_type() == DeviceType::CUDA) {
    return DLDevice{kDLCUDA, tensor.device_index()};
  }
  const PointerInfo info = classify_pointer(tensor.const_data_ptr());
  switch (info.kind) {
    case PointerKind::kDevice: return DLDevice{kDLCUDA, info.device};
    case PointerKind::kManaged: return DLDevice{kDLCUDAManaged, info.device};
    default: return DLDevice{kDLCPU, 0};
  }
}

// A DLManagedTensorVersioned with the arrays and memory it points to.
struct OutputTensor {
  DLManagedTensorVersioned managed{};
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  AlignedHostBuffer host_copy;
  DeviceBuffer device_copy;

  static void destroy(DLManagedTensorVersioned* self) {
    delete static_cast<OutputTensor*>(self->manager_ctx);
  }

  void* owned_data() const {
    return device_copy.data() != nullptr ? device_copy.data() : host_copy.data();
  }

  // An owned copy of the output's `nbytes` at `data` on `device`.
  Status copy_from(const void* data, size_t nbytes, DLDevice device, void* stream, size_t index) {
    if (device.device_type == kDLCPU) {
      if (host_copy.reserve(nbytes) != cudaSuccess) {
        return Status(TTE_ERROR_OUT_OF_MEMORY, "cannot allocate " + std::to_string(nbytes) +
                                                   " host bytes for output " +
                                                   std::to_string(index));
      }
      std::memcpy(host_copy.data(), data, nbytes);
      return Status::Ok();
    }
    const Status reserved =
        reserve_on_device(device_copy, nbytes, device.device_id, "output " + std::to_string(index));
    if (!reserved.ok()) {
      return reserved;
    }
    DeviceGuard guard(device.device_id);
    const auto cuda_stream = static_cast<cudaStream_t>(stream);
    cudaError_t error =
        cudaMemcpyAsync(device_copy.data(), data, nbytes, cudaMemcpyDefault, cuda_stream);
    if (error == cudaSuccess) {
      error = cudaStreamSynchronize(cuda_stream);
    }
    if (error != cudaSuccess) {
      cudaGetLastError();
      return Status(TTE_ERROR_RUNTIME, "copying output " + std::to_string(index) +
                                           " failed: " + cuda_error_text(error));
    }
    return Status::Ok();
  }
};

Status make_output(const et::EValue& value, size_t index, bool copy, void* stream,
                   TteOutput* output) {
  *output = TteOutput{};
  switch (value.tag) {
    case et::Tag::None: output->tag = TTE_VALUE_NONE; return Status::Ok();
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
    case et::Tag::Tensor: break;
    default: output->tag = TTE_VALUE_OTHER; return Status::Ok();
  }
  const Tensor tensor = value.toTensor();
  const std::optional<DLDataType> dtype = dlpack_from_scalar_type(tensor.scalar_type());
  if (!dtype) {
    return Status(TTE_ERROR_NOT_SUPPORTED,
                  "output " + std::to_string(index) + " has element type " +
                      scalar_type_name(tensor.scalar_type()) + ", which DLPack cannot describe");
  }
  auto result = std::make_unique<OutputTensor>();
  result->managed.manager_ctx = result.get();
  result->shape.assign(tensor.sizes().begin(), tensor.sizes().end());
  result->strides.assign(tensor.strides().begin(), tensor.strides().end());
  const DLDevice device = output_device(tensor);
  const size_t nbytes = tensor.nbytes();
  void* data = tensor.mutable_data_ptr();
  uint64_t flags = 0;
  if (copy && data != nullptr && nbytes > 0) {
    const Status status = result->copy_from(data, nbytes, device, stream, index);
    if (!status.ok()) {
      return status;
    }
    data = result->owned_data();
    flags |= DLPACK_FLAG_BITMASK_IS_COPIED;
  } else if (copy) {
    data = nullptr;
    flags |= DLPACK_FLAG_BITMASK_IS_COPIED;
  }
  DLManagedTensorVersioned& managed = result->managed;
  managed.version = DLPackVersion{1, 0};
  managed.deleter = &OutputTensor::destroy;
  managed.flags = flags;
  managed.dl_tensor.data = data;
  managed.dl_tensor.device = device;
  managed.dl_tensor.ndim = static_cast<int32_t>(result->shape.size());
  managed.dl_tensor.dtype = *dtype;
  managed.dl_tensor.shape = result->shape.data();
  managed.dl_tensor.strides = result->strides.data();
  managed.dl_tensor.byte_offset = 0;
  output->tag = TTE_VALUE_TENSOR;
  output->tensor = &result.release()->managed;
  return Status::Ok();
}

}  // namespace

void plan_output_buffers(et::Method& method, MethodState& state) {
  const et::MethodMeta meta = method.method_meta();
  const size_t count = method.outputs_size();
  state.output_needs_buffer.assign(count, false);
  state.output_buffers.clear();
  state.output_buffers.resize(count);
  for (size_t i = 0; i < count; ++i) {
    const et::EValue& value = method.get_output(i);
    auto info = meta.output_tensor_meta(i);
    state.output_needs_buffer[i] = value.isTensor() && info.ok() && !info->is_memory_planned() &&
                                   value.toTensor().const_data_ptr() == nullptr;
  }
}

Status give_output_buffers(et::Method& method, MethodState& state) {
  const et::MethodMeta meta = method.method_meta();
  for (size_t i = 0; i < state.output_needs_buffer.size(); ++i) {
    if (!state.output_needs_buffer[i]) {
      continue;
    }
    auto info = meta.output_tensor_meta(i);
    const Tensor tensor = method.get_output(i).toTensor();
    const std::string label = io_label(false, i, std::string(info->name()));
    const size_t nbytes = info->nbytes();
    OutputBuffer& buffer = state.output_buffers[i];
    void* data = nullptr;
    size_t capacity = 0;
    if (tensor.device_type() == DeviceType::CUDA) {
      const Status reserved =
          reserve_on_device(buffer.device, nbytes, tensor.device_index(), label);
      if (!reserved.ok()) {
        return reserved;
      }
      data = buffer.device.data();
      capacity = buffer.device.capacity();
    } else {
      if (buffer.host.reserve(nbytes) != cudaSuccess) {
        return Status(TTE_ERROR_OUT_OF_MEMORY,
                      "cannot allocate " + std::to_string(nbytes) + " host bytes for " + label);
      }
      data = buffer.host.data();
      capacity = buffer.host.capacity();
    }
    const et::Error error = method.set_output_data_ptr(data, capacity, i);
    if (error != et::Error::Ok) {
      return Status(status_code_of(error),
                    "giving " + label + " its buffer failed: " + et_error_text(error));
    }
  }
  return Status::Ok();
}

Status collect_method_outputs(et::Method& method, bool copy, void* stream, TteOutput* outputs,
                              size_t num_outputs) {
  for (size_t i = 0; i < num_outputs; ++i) {
    const Status status = make_output(method.get_output(i), i, copy, stream, &outputs[i]);
    if (!status.ok()) {
      release_outputs(outputs, num_outputs);
      return status;
    }
  }
  return Status::Ok();
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
