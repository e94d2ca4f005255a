// A method's outputs for the caller: memory for non-planned outputs the
// method leaves without any, then each output as a TteOutput, tensors as
// DLPack managed tensors on the device the method produced them on: views
// of the method's memory (which keep it alive), or owned copies in memory
// from the caller's allocator, else from a pool (device) or the heap (host).
#pragma once

#include <cstddef>
#include <memory>

#include <executorch/runtime/executor/method.h>

#include "common/call_context.h"
#include "common/status.h"
#include "program/program_module.h"
#include "torch_tensorrt_executorch/c_api.h"

namespace tte {

// Which outputs of a freshly loaded method need memory from the program.
void plan_output_buffers(executorch::runtime::Method& method, MethodState& state);

struct OutputOptions {
  bool copy = true;
  void* stream = nullptr;                 // a cudaStream_t for device copies (NULL: legacy default)
  TteOutputAllocator allocate = nullptr;  // owned outputs' memory, when set
  void* allocator_context = nullptr;
  // What a view holds on to: the owner of the method's memory.
  std::shared_ptr<const void> keep_alive;
  // Bound on a host buffer for an unplanned output, as on planned memory
  // (the load option; 0: what is available when it is first reserved).
  uint64_t max_planned_memory = 0;
};

// Gives those outputs their memory before an execute: for an owned run with
// a caller's allocator, an output whose shape is static gets a tensor from
// that allocator, which the method writes straight into (no copy, no wait for
// one); any other gets the program's (grow-only) buffer. On failure no
// caller tensor is left held.
Status give_output_buffers(CallContext& call, executorch::runtime::Method& method,
                           MethodState& state, const OutputOptions& options);

// Hands back the caller tensors a failed run did not get to return.
void release_caller_outputs(MethodState& state);

// Fills `outputs` (as many as the method returns, from the values
// plan_output_buffers recorded) and returns with every copy finished; on
// failure every output is released and left NONE.
Status collect_method_outputs(MethodState& state, const OutputOptions& options, TteOutput* outputs,
                              size_t num_outputs);

// Calls each tensor's deleter and resets every entry to NONE.
void release_outputs(TteOutput* outputs, size_t count);

}  // namespace tte
