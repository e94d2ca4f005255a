// ExecuTorch's Module as the Program API uses it, and the per-method state
// the Program keeps beside it.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <executorch/extension/module/module.h>

#include "backend/delegate_recorder.h"
#include "cuda/device_buffers.h"

namespace tte {

// Module keeps its loaded methods in a map it leaves to subclasses; the raw
// Method is what device-aware input copies and output buffers need.
class ProgramModule final : public executorch::extension::Module {
 public:
  using Module::Module;

  executorch::runtime::Method* loaded_method(const std::string& name) {
    auto it = methods_.find(name);
    return it == methods_.end() ? nullptr : it->second.method.get();
  }
};

// ExecuTorch hands out inputs only through accessors it has deprecated in
// favour of set_input; resizing a planned input before a copy into its
// arena, and reading where an input lives, need the tensor itself.
inline const executorch::runtime::EValue& method_input(executorch::runtime::Method& method,
                                                       size_t index) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  return method.get_input(index);
#pragma GCC diagnostic pop
}

// Memory for a non-planned output the method leaves without data: on the
// host or on the device the method places the output on.
struct OutputBuffer {
  AlignedHostBuffer host;
  DeviceBuffer device;
};

// What the Program keeps for one method besides ExecuTorch's Method.
struct MethodState {
  std::vector<DelegateRecord> records;
  bool info_load_tried = false;
  // Per output: whether the program must give it memory, and that memory.
  std::vector<bool> output_needs_buffer;
  std::vector<OutputBuffer> output_buffers;
  // Per input: device copies of host tensors for device-tagged, non-planned
  // inputs.
  std::vector<DeviceBuffer> input_staging;
};

}  // namespace tte
