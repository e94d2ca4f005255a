#include "backend/tensor_binding.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "common/runtime_stats.h"

namespace tte {

using executorch::aten::Tensor;

namespace {

void count_copy(CopyKind kind, size_t bytes) { RuntimeStats::instance().record_copy(kind, bytes); }

// Without a device every tensor is host memory and no CUDA call is made at
// all. Otherwise ExecuTorch's own device tag is authoritative and free; else
// ask CUDA (a CPU-tagged tensor may still hold memory the caller shared).
PointerInfo locate(const Tensor& tensor) {
  if (cuda_device_count() == 0) {
    return PointerInfo{};
  }
  if (tensor.unsafeGetTensorImpl()->device_type() ==
      executorch::runtime::etensor::DeviceType::CUDA) {
    PointerInfo info;
    info.kind = PointerKind::kDevice;
    info.device = tensor.unsafeGetTensorImpl()->device_index();
    return info;
  }
  return classify_pointer(tensor.const_data_ptr());
}

bool is_engine_aligned(const void* address) {
  return reinterpret_cast<uintptr_t>(address) % kEngineAddressAlignment == 0;
}

}  // namespace

TensorBinder::TensorBinder(EngineMemory memory)
    : memory_(memory),
      stage_through_mapped_memory_(
          !memory.host &&
          mapped_staging_from_env(std::getenv(kMappedStagingEnv), memory.traits.integrated)) {}

void* TensorBinder::engine_address(const PointerInfo& info, void* data) const {
  void* address = nullptr;
  if (memory_.host) {
    address = info.kind != PointerKind::kDevice ? data : nullptr;
  } else if (stage_through_mapped_memory_ && info.kind == PointerKind::kHost) {
    // Where host memory is staged through mapped memory, page-locked host
    // memory is used where it lies, at its mapped address (what
    // device_address does on integrated GPUs, and on a discrete GPU with the
    // override: read over the bus instead of copied).
    address = info.device_pointer;
  } else {
    address = device_address(info, data, memory_.device, memory_.traits);
  }
  return address != nullptr && is_engine_aligned(address) ? address : nullptr;
}

void* TensorBinder::zero_size_address() {
  if (memory_.host) {
    alignas(256) static char host_dummy[256];
    return host_dummy;
  }
  if (zero_size_device_.reserve(256, memory_.device) != cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  return zero_size_device_.data();
}

Status TensorBinder::stage_through_mapped(size_t a, const std::string& name, bool is_input,
                                          Binding* binding) {
  const size_t n = binding->nbytes;
  const cudaError_t status = mapped_staging_[a].reserve(n, memory_.device);
  void* device = status == cudaSuccess ? mapped_device_pointer(mapped_staging_[a].data()) : nullptr;
  if (device == nullptr) {
    return cuda_failure(status != cudaSuccess ? status : cudaErrorInvalidValue,
                        "allocating " + std::to_string(n) +
                            " bytes of mapped host staging memory for '" + name + "'");
  }
  binding->address = device;
  binding->mapped = mapped_staging_[a].data();
  binding->staged = true;
  if (is_input) {
    // The engine's earlier reads of this buffer are finished: every call
    // returns with its stream synchronized.
    std::memcpy(binding->mapped, binding->data, n);
    count_copy(CopyKind::Mapped, n);
  }
  return Status::Ok();
}

Status TensorBinder::stage_input_or_output(size_t a, const std::string& name, bool is_input,
                                           cudaStream_t stream, Binding* binding) {
  const size_t n = binding->nbytes;
  if (stage_through_mapped_memory_ && binding->kind == PointerKind::kUnregistered) {
    return stage_through_mapped(a, name, is_input, binding);
  }
  cudaError_t status;
  if (memory_.host) {
    status = host_staging_[a].reserve(n);
    if (status != cudaSuccess) {
      // Aligned host memory (posix_memalign): no CUDA call to report.
      return Status(TTE_ERROR_HOST_OUT_OF_MEMORY, "cannot allocate " + std::to_string(n) +
                                                      " bytes of host staging memory for '" + name +
                                                      "'");
    }
    binding->address = host_staging_[a].data();
  } else {
    status = device_staging_[a].reserve(n, memory_.device);
    if (status != cudaSuccess) {
      return cuda_failure(status, "allocating " + std::to_string(n) +
                                      " bytes of device staging for '" + name + "'");
    }
    binding->address = device_staging_[a].data();
  }
  binding->staged = true;
  if (!is_input) {
    return Status::Ok();
  }
  CopyKind copied;
  if (memory_.host) {
    // Host memory that is only misaligned needs no CUDA (and there may be no
    // GPU at all).
    if (binding->kind == PointerKind::kDevice) {
      status = cudaMemcpy(binding->address, binding->data, n, cudaMemcpyDeviceToHost);
      copied = CopyKind::DeviceToHost;
    } else {
      std::memcpy(binding->address, binding->data, n);
      return Status::Ok();
    }
  } else if (binding->kind == PointerKind::kDevice || binding->kind == PointerKind::kManaged) {
    // Device memory the engine cannot take as it is (misaligned).
    status = cudaMemcpyAsync(binding->address, binding->data, n, cudaMemcpyDefault, stream);
    copied = CopyKind::DeviceToDevice;
  } else {
    // Pinned memory copies asynchronously as it is; pageable memory goes
    // through the stager's pinned chunks.
    status =
        binding->kind == PointerKind::kHost
            ? cudaMemcpyAsync(binding->address, binding->data, n, cudaMemcpyHostToDevice, stream)
            : stager_.host_to_device(binding->address, binding->data, n, stream, memory_.device);
    copied = CopyKind::HostToDevice;
  }
  if (status != cudaSuccess) {
    return cuda_failure(
        status, "copying input '" + name + "' to the " + (memory_.host ? "host" : "device"));
  }
  count_copy(copied, n);
  return Status::Ok();
}

Status TensorBinder::bind(const EngineIo& io, DelegateArgs args, cudaStream_t stream,
                          const ReadOnlyLoans& read_only, std::vector<Binding>* bindings) {
  device_staging_.resize(memory_.host ? 0 : args.size());
  host_staging_.resize(memory_.host ? args.size() : 0);
  mapped_staging_.resize(stage_through_mapped_memory_ ? args.size() : 0);
  bindings->assign(args.size(), Binding{});
  for (size_t a = 0; a < args.size(); ++a) {
    const bool is_input = a < io.inputs.size();
    const EngineTensor& spec = io.argument(a);
    const Tensor& tensor = args[a]->toTensor();
    Binding& binding = (*bindings)[a];
    binding.data = tensor.mutable_data_ptr();
    binding.nbytes = tensor.nbytes();
    const PointerInfo info = locate(tensor);
    binding.kind = info.kind;
    if (!is_input && spec.aliased_input >= 0) {
      // In place: the engine writes into its input's memory.
      const Binding& input = (*bindings)[spec.aliased_input];
      if (const std::string* lent = read_only.label_of(input.data, input.nbytes)) {
        return Status(TTE_ERROR_INVALID_ARGUMENT,
                      "the engine writes output '" + spec.name + "' in place into its input '" +
                          io.argument(spec.aliased_input).name + "', which is " + *lent +
                          ", passed read-only (DLPack read-only flag): pass a writable tensor "
                          "(e.g. a copy)");
      }
      binding.address = input.address;
      continue;
    }
    if (binding.nbytes == 0) {
      binding.address = zero_size_address();
      if (binding.address == nullptr) {
        return Status(TTE_ERROR_OUT_OF_MEMORY,
                      "cannot allocate the placeholder for empty tensor '" + spec.name + "'");
      }
      continue;
    }
    const char* role = is_input ? "input" : "output";
    if (binding.data == nullptr) {
      return Status(TTE_ERROR_INVALID_ARGUMENT,
                    std::string(role) + " '" + spec.name + "' has no data");
    }
    if (!memory_.host && info.kind == PointerKind::kDevice && info.device != memory_.device) {
      return Status(TTE_ERROR_INVALID_ARGUMENT,
                    std::string(role) + " '" + spec.name +
                        "' is on cuda:" + std::to_string(info.device) +
                        " but the engine runs on cuda:" + std::to_string(memory_.device));
    }
    if (void* address = engine_address(info, binding.data); address != nullptr) {
      binding.address = address;
      if (stage_through_mapped_memory_ && info.kind == PointerKind::kHost) {
        // Page-locked memory the engine uses where it lies: the CPU reaches
        // what the engine writes there at `data` (copy_out).
        binding.mapped = binding.data;
      }
      continue;
    }
    Status status = stage_input_or_output(a, spec.name, is_input, stream, &binding);
    if (!status.ok()) {
      return status;
    }
  }
  return Status::Ok();
}

cudaError_t TensorBinder::copy_out(void* dst, PointerKind kind, const Binding& from, size_t n,
                                   cudaStream_t stream, bool* synchronized) {
  const void* src = from.address;
  if (from.mapped != nullptr &&
      (kind == PointerKind::kUnregistered || kind == PointerKind::kHost)) {
    // The engine wrote mapped memory (a staging buffer, or page-locked memory
    // it used in place, e.g. an aliased input's): the CPU reads it into host
    // memory once the stream's work is done (once per call, for all such
    // outputs), no DMA.
    if (!*synchronized) {
      const cudaError_t status = cudaStreamSynchronize(stream);
      if (status != cudaSuccess) {
        return status;
      }
      *synchronized = true;
    }
    std::memcpy(dst, from.mapped, n);
    count_copy(CopyKind::Mapped, n);
    return cudaSuccess;
  }
  if (memory_.host) {
    if (kind != PointerKind::kDevice) {
      std::memcpy(dst, src, n);
      return cudaSuccess;
    }
    count_copy(CopyKind::HostToDevice, n);
    return cudaMemcpy(dst, src, n, cudaMemcpyDefault);
  }
  if (kind == PointerKind::kUnregistered && !memory_.traits.integrated) {
    count_copy(CopyKind::DeviceToHost, n);
    return stager_.device_to_host(dst, src, n, stream, memory_.device);
  }
  count_copy(kind == PointerKind::kHost ? CopyKind::DeviceToHost : CopyKind::DeviceToDevice, n);
  return cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault, stream);
}

Status TensorBinder::write_back(const EngineIo& io, const std::vector<Binding>& bindings,
                                cudaStream_t stream) {
  bool synchronized = false;
  for (size_t o = 0; o < io.outputs.size(); ++o) {
    const EngineTensor& output = io.outputs[o];
    const Binding& binding = bindings[io.inputs.size() + o];
    cudaError_t status = cudaSuccess;
    if (output.aliased_input >= 0) {
      const Binding& input = bindings[output.aliased_input];
      // The engine updated its input's memory. When that was a staging copy,
      // write it back, so the caller's tensor is updated in place as it is
      // on the unstaged path.
      if (input.staged && input.nbytes > 0) {
        status = copy_out(input.data, input.kind, input, input.nbytes, stream, &synchronized);
      }
      // And the delegate's own output tensor, when it is other memory.
      if (status == cudaSuccess && binding.nbytes > 0 && binding.data != input.data) {
        status = copy_out(binding.data, binding.kind, input, std::min(binding.nbytes, input.nbytes),
                          stream, &synchronized);
      }
    } else if (binding.staged) {
      status = copy_out(binding.data, binding.kind, binding, binding.nbytes, stream, &synchronized);
    }
    if (status != cudaSuccess) {
      return cuda_failure(status, "copying output '" + output.name + "' back");
    }
  }
  return Status::Ok();
}

}  // namespace tte
