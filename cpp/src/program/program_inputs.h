// A method's inputs from the caller's values (TteInput): each checked
// against the method's declared signature (tag, dtype, rank, shape bounds,
// layout, device), then shared with the method or copied into its planned
// arena; host tensors for inputs the method keeps on a device are staged
// there first. The declarations are read once, when the method loads.
#pragma once

#include <cstddef>

#include <executorch/runtime/executor/method.h>

#include "common/call_context.h"
#include "common/status.h"
#include "program/program_module.h"
#include "torch_tensorrt_executorch/c_api.h"

namespace tte {

// Reads what set_method_inputs checks against into `state` (once, after the
// method loads).
void plan_method_inputs(executorch::runtime::Method& method, MethodState& state);

// Sets all `num_inputs` inputs (the method's input count) for the run
// `call`. Copies run on the call's stream (a cudaStream_t, may be the legacy
// default); returns with them finished, on failure too. Inputs passed
// read-only are lent to the call (CallContext::read_only).
Status set_method_inputs(CallContext& call, executorch::runtime::Method& method, MethodState& state,
                         const TteInput* inputs, size_t num_inputs);

// True when [data, data + nbytes) lies in caller memory a planned input of
// this run points at (so a view of it would not be the program's memory).
bool in_input_alias(const MethodState& state, const void* data, size_t nbytes);

}  // namespace tte
