// The reason behind the last failure this library returned to ExecuTorch on
// the calling thread. ExecuTorch's interfaces (BackendInterface::init and
// execute, DeviceAllocator) return a bare Error, and Method passes only that
// code on; the full Status waits here for the Program API, which clears it
// before calling into ExecuTorch and reads it when the call fails. This is
// the library's only channel for a reason across an ExecuTorch interface.
#pragma once

#include <executorch/runtime/core/error.h>

#include "common/status.h"

namespace tte {

// Logs `failure` (one line at error), keeps it for this thread and returns
// the ExecuTorch error that stands for its code.
executorch::runtime::Error report_to_executorch(const Status& failure);
// What report_to_executorch kept on this thread since the last clear; Ok
// when nothing failed.
const Status& executorch_failure();
void clear_executorch_failure();

}  // namespace tte
