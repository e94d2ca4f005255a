// ExecuTorch's Module as the Program API uses it, and the per-method state
// the Program keeps beside it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <executorch/extension/module/module.h>

#include "common/delegate_record.h"
#include "common/status.h"
#include "cuda/device_buffers.h"
#include "program/planned_arenas.h"
#include "program/repeated_run.h"
#include "torch_tensorrt_executorch/dlpack.h"

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
  // Drops a loaded method (its delegates with it).
  void unload_method(const std::string& name) { methods_.erase(name); }
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

// Memory for a non-planned output the method leaves without any: on the
// host or on the device the method places the output on.
struct OutputBuffer {
  // The output's size as the method declares it (its upper bound).
  size_t declared_bytes = 0;
  AlignedHostBuffer host;
  DeviceBuffer device;
  // Why a host buffer could not be had (past the bound, or refused by the
  // allocator): later runs fail with it at once, without a new attempt.
  Status host_refused;
};

// One tensor input as the method declares it, read once when the method
// loads so a run walks no program metadata.
struct InputSpec {
  executorch::runtime::etensor::ScalarType dtype{};
  std::vector<int64_t> bounds;     // upper bounds of dynamic dims
  std::vector<uint8_t> dim_order;  // one entry per dim
  std::string name;
  bool memory_planned = false;
  bool is_static = false;
  bool on_device = false;  // ExecuTorch keeps the input on a CUDA device
  int device = 0;
  // A planned input's own memory in the method's arena. A run may point the
  // input at the caller's page-locked memory instead (one DMA, no copy into
  // the arena); the next run points it back before ExecuTorch copies.
  void* home = nullptr;
  size_t home_bytes = 0;
};

struct MethodInstance;

// What the Program keeps for one method besides ExecuTorch's Method.
struct MethodState {
  std::string name;
  // Set once the method is loaded; owned by the module.
  executorch::runtime::Method* method = nullptr;
  std::vector<DelegateRecord> records;
  // Why the method failed to load, kept so that later calls fail at once.
  Status load_failure;
  bool info_load_tried = false;
  // Per input: its tag (ExecuTorch's), and for tensors its declaration.
  std::vector<executorch::runtime::Tag> input_tags;
  std::vector<InputSpec> input_specs;
  // Per input and per output: the method's value (ExecuTorch keeps its
  // values in one array for the method's life; get_input and get_output
  // find an index in the plan on every call).
  std::vector<const executorch::runtime::EValue*> input_values;
  std::vector<const executorch::runtime::EValue*> output_values;
  // Per input: the caller memory a planned input points at since the last
  // run ({NULL, 0} while it holds its own arena memory).
  struct Alias {
    const void* data = nullptr;
    size_t bytes = 0;
  };
  std::vector<Alias> input_aliases;
  // Per input: whether ExecuTorch's Method::set_input has taken it once (a
  // run then sets a tensor input as set_input would, without calling it).
  std::vector<char> inputs_taken;
  // Per output: whether the program must give it memory, and that memory.
  std::vector<bool> output_needs_buffer;
  std::vector<OutputBuffer> output_buffers;
  // Per output: an owned output from the caller's allocator the method
  // writes straight into during the run in progress (NULL where none).
  std::vector<DLManagedTensorVersioned*> caller_outputs;
  // Per input: device copies of host tensors for device-tagged, non-planned
  // inputs.
  std::vector<DeviceBuffer> input_staging;
  // The method's planned host arenas when the program provides them
  // (page-locked, so delegates copy them with one DMA); else empty and
  // ExecuTorch's Module owns the arenas.
  std::unique_ptr<PlannedHostArenas> arenas;
  // Whether a run may repeat the last one (program/repeated_run.h): the
  // method's one instruction is a TensorRTBackend delegate call and every
  // input is a tensor it does not plan; and the last run, when it may.
  bool repeatable = false;
  RepeatedRun repeated;
  // The primary instance (the one the Program's map holds) keeps the
  // instances made for concurrent runs (Program::run): each a module of its
  // own over the same program, with its own planned memory and delegates.
  std::mutex pool_mutex;
  std::vector<std::unique_ptr<MethodInstance>> extras;
};

// An instance of a method for a concurrent run.
struct MethodInstance {
  std::unique_ptr<ProgramModule> module;
  MethodState state;
  bool busy = false;  // guarded by the primary's pool_mutex
};

}  // namespace tte
