// A method's memory-planned host arenas in page-locked memory, handed to
// ExecuTorch's Module when the method loads (Module::load_method's
// planned_memory). The delegate then copies planned host tensors to and
// from the device with one DMA each, instead of staging them through bounce
// buffers, and a page-locked caller input can stand in for its arena slot.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <executorch/runtime/core/hierarchical_allocator.h>
#include <executorch/runtime/core/span.h>
#include <executorch/runtime/executor/method_meta.h>

#include "cuda/device_buffers.h"

namespace tte {

class PlannedHostArenas {
 public:
  // The arenas of `meta`, or null when ExecuTorch's own are kept: the method
  // uses no TensorRTBackend delegate, this process sees no CUDA device, a
  // buffer is placed on a device (ExecuTorch's DeviceAllocator serves those),
  // or page-locked memory cannot be had.
  static std::unique_ptr<PlannedHostArenas> make(const executorch::runtime::MethodMeta& meta);

  executorch::runtime::HierarchicalAllocator* allocator() { return allocator_.get(); }

 private:
  PlannedHostArenas() = default;
  std::vector<PinnedHostBuffer> buffers_;
  std::vector<executorch::runtime::Span<uint8_t>> spans_;
  std::unique_ptr<executorch::runtime::HierarchicalAllocator> allocator_;
};

}  // namespace tte
