// A method's inputs from the caller's values (TteInput): each checked
// against the method's declared signature (tag, dtype, rank, shape bounds,
// layout, device), then shared with the method or copied into its planned
// arena; host tensors for inputs the method keeps on a device are staged
// there first.
#pragma once

#include <cstddef>

#include <executorch/runtime/executor/method.h>

#include "common/status.h"
#include "program/program_module.h"
#include "torch_tensorrt_executorch/c_api.h"

namespace tte {

// Sets all `num_inputs` inputs (the method's input count). Copies run on
// `stream` (a cudaStream_t, may be the legacy default); returns with them
// finished, on failure too.
Status set_method_inputs(executorch::runtime::Method& method, MethodState& state,
                         const TteInput* inputs, size_t num_inputs, void* stream);

}  // namespace tte
