#include "program/method_load_checks.h"

#include <map>

#include <executorch/runtime/core/device_allocator.h>

#include "common/et_status.h"
#include "common/host_memory.h"
#include "common/text.h"
#include "cuda/cuda_device.h"
#include "program/executorch_step.h"

namespace tte {

namespace et = executorch::runtime;
using et::etensor::DeviceType;

namespace {

Status check_device_arenas(const et::MethodMeta& meta, const std::string& method) {
  // Module aborts the process when a device arena cannot be allocated
  // (ET_CHECK on DeviceMemoryBuffer::create): refuse what a device cannot
  // hold now. Racy against other users of the device, but it turns the
  // common case (a damaged or oversized plan) into an error.
  std::map<int, uint64_t> device_bytes;
  for (size_t i = 0; i < meta.num_memory_planned_buffers(); ++i) {
    auto device = meta.memory_planned_buffer_device(i);
    auto size = meta.memory_planned_buffer_size(i);
    if (device.ok() && !device->is_cpu() && size.ok()) {
      uint64_t& total = device_bytes[device->index()];
      total = saturating_add(total, static_cast<uint64_t>(*size));
    }
  }
  for (const auto& [index, bytes] : device_bytes) {
    DeviceGuard guard(index);
    size_t free_bytes = 0;
    size_t total_bytes = 0;
    const cudaError_t error =
        guard.status() == cudaSuccess ? cudaMemGetInfo(&free_bytes, &total_bytes) : guard.status();
    if (error != cudaSuccess) {
      return cuda_failure(error, "reading the free memory of cuda:" + std::to_string(index) +
                                     " for method '" + method + "'");
    }
    if (bytes > free_bytes) {
      return Status(TTE_ERROR_OUT_OF_MEMORY,
                    "method '" + method + "' plans " + byte_count_text(bytes) +
                        " on cuda:" + std::to_string(index) + ", more than the device has free (" +
                        byte_count_text(free_bytes) + " of " + byte_count_text(total_bytes) +
                        "): free device memory, or run it on a larger device");
    }
  }
  return Status::Ok();
}

}  // namespace
Status check_method_before_load(const et::MethodMeta& meta, const std::string& method,
                                uint64_t max_planned_memory) {
  // Method aborts the process on an I/O entry that points past its value
  // table; MethodMeta checks the same indices and returns an error.
  for (const bool is_input : {true, false}) {
    const size_t count = is_input ? meta.num_inputs() : meta.num_outputs();
    for (size_t i = 0; i < count; ++i) {
      auto tag = is_input ? meta.input_tag(i) : meta.output_tag(i);
      et::Error error = tag.error();
      if (tag.ok() && *tag == et::Tag::Tensor) {
        error = (is_input ? meta.input_tensor_meta(i) : meta.output_tensor_meta(i)).error();
      }
      if (error != et::Error::Ok) {
        return damaged_method_meta(error, std::string("method '") + method +
                                              "': " + (is_input ? "input " : "output ") +
                                              std::to_string(i) + " cannot be read");
      }
    }
  }
  // Module allocates and zero-fills the host arenas before anything else of
  // the method runs (a damaged 2 KB file can ask for gigabytes): bound them.
  uint64_t host_bytes = 0;
  for (size_t i = 0; i < meta.num_memory_planned_buffers(); ++i) {
    auto size = meta.memory_planned_buffer_size(i);
    auto device = meta.memory_planned_buffer_device(i);
    if (!size.ok() || *size < 0) {
      return Status(TTE_ERROR_INVALID_PROGRAM, "method '" + method +
                                                   "' is damaged: planned buffer " +
                                                   std::to_string(i) + " has no valid size");
    }
    if (!device.ok() || device->is_cpu()) {
      host_bytes = saturating_add(host_bytes, static_cast<uint64_t>(*size));
    }
  }
  const uint64_t limit = max_planned_memory > 0 ? max_planned_memory : available_host_memory();
  if (host_bytes > limit) {
    const std::string plans =
        "method '" + method + "' plans " + byte_count_text(host_bytes) + " of host memory";
    if (max_planned_memory > 0) {
      return Status(TTE_ERROR_HOST_OUT_OF_MEMORY,
                    plans + ", more than max_planned_memory allows (" + byte_count_text(limit) +
                        "): raise max_planned_memory if that size is right");
    }
    return Status(TTE_ERROR_HOST_OUT_OF_MEMORY,
                  plans + ", more than is available to this process now (" +
                      byte_count_text(limit) +
                      "): free memory, or, if that size is right, open the program with "
                      "max_planned_memory set to at least " +
                      std::to_string(host_bytes) + " (bytes)");
  }
  // Device-planned arenas come from ExecuTorch's DeviceAllocator registry;
  // say why before Module fails with a bare NotFound (or aborts).
  for (size_t i = 0; i < meta.num_memory_planned_buffers(); ++i) {
    auto device = meta.memory_planned_buffer_device(i);
    if (!device.ok() || device->is_cpu()) {
      continue;
    }
    auto size = meta.memory_planned_buffer_size(i);
    const std::string where =
        "method '" + method + "' plans " + std::to_string(size.ok() ? *size : 0) +
        " bytes on cuda:" + std::to_string(device->index()) +
        " (exported with target_device=cuda:" + std::to_string(device->index()) + ")";
    if (device->type() != DeviceType::CUDA) {
      return Status(TTE_ERROR_NOT_SUPPORTED, "method '" + method +
                                                 "' plans memory on device type " +
                                                 std::to_string(static_cast<int>(device->type())) +
                                                 ", which this runtime does not know");
    }
    if (cuda_device_count() == 0) {
      return Status(
          TTE_ERROR_NO_DEVICE,
          where + ", but this process sees no CUDA device (" + cuda_unavailable_reason() +
              "): run it on a machine with an NVIDIA GPU, or export the program with host I/O");
    }
    if (device->index() >= cuda_device_count()) {
      return Status(TTE_ERROR_NO_DEVICE, where + ", but this process sees only " +
                                             std::to_string(cuda_device_count()) +
                                             " CUDA device(s)");
    }
    if (et::get_device_allocator(DeviceType::CUDA) == nullptr) {
      return Status(TTE_ERROR_INVALID_STATE, where +
                                                 ", but no CUDA DeviceAllocator is registered with "
                                                 "ExecuTorch");
    }
  }
  return check_device_arenas(meta, method);
}
}  // namespace tte
