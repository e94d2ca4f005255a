#include "program/planned_arenas.h"

#include <cstring>

#include "common/logging.h"
#include "cuda/cuda_device.h"
#include "torch_tensorrt_executorch/c_api.h"

namespace tte {

namespace et = executorch::runtime;

std::unique_ptr<PlannedHostArenas> PlannedHostArenas::make(const et::MethodMeta& meta) {
  const size_t count = meta.num_memory_planned_buffers();
  if (count == 0 || !meta.uses_backend(TTE_BACKEND_NAME) || cuda_device_count() == 0) {
    return nullptr;
  }
  for (size_t i = 0; i < count; ++i) {
    auto device = meta.memory_planned_buffer_device(i);
    if (!device.ok() || device->type() != et::etensor::DeviceType::CPU) {
      return nullptr;
    }
  }
  std::unique_ptr<PlannedHostArenas> arenas(new PlannedHostArenas());
  arenas->buffers_.resize(count);
  arenas->spans_.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    auto size = meta.memory_planned_buffer_size(i);
    if (!size.ok() || *size < 0) {
      return nullptr;
    }
    const size_t bytes = static_cast<size_t>(*size);
    PinnedHostBuffer& buffer = arenas->buffers_[i];
    if (buffer.reserve(bytes) != cudaSuccess) {
      TTE_LOG(INFO,
              "method '%s': no page-locked memory for its %zu-byte arena; keeping pageable arenas",
              meta.name(), bytes);
      return nullptr;
    }
    // ExecuTorch's own arenas start zeroed; programs may rely on it.
    std::memset(buffer.data(), 0, bytes);
    arenas->spans_.emplace_back(static_cast<uint8_t*>(buffer.data()), bytes);
  }
  arenas->allocator_ = std::make_unique<et::HierarchicalAllocator>(
      et::Span<et::Span<uint8_t>>(arenas->spans_.data(), arenas->spans_.size()));
  return arenas;
}

}  // namespace tte
