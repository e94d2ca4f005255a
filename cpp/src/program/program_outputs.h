// A method's outputs for the caller: memory for non-planned outputs the
// method leaves without any, then each output as a TteOutput, tensors as
// DLPack managed tensors (an owned copy, or a view of the method's memory)
// on the device the method produced them.
#pragma once

#include <cstddef>

#include <executorch/runtime/executor/method.h>

#include "common/status.h"
#include "program/program_module.h"
#include "torch_tensorrt_executorch/c_api.h"

namespace tte {

// Which outputs of a freshly loaded method need memory from the program.
void plan_output_buffers(executorch::runtime::Method& method, MethodState& state);
// Gives those outputs their (grow-only) buffers before an execute.
Status give_output_buffers(executorch::runtime::Method& method, MethodState& state);

// Fills `outputs` (as many as the method returns); on failure every output is
// released and left NONE. Device copies run on `stream`.
Status collect_method_outputs(executorch::runtime::Method& method, bool copy, void* stream,
                              TteOutput* outputs, size_t num_outputs);

// Calls each tensor's deleter and resets every entry to NONE.
void release_outputs(TteOutput* outputs, size_t count);

}  // namespace tte
