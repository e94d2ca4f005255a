// ExecuTorch's Error codes next to the library's Status: the mapping both
// ways and the text shown for one.
#pragma once

#include <string>

#include <executorch/runtime/core/error.h>

#include "common/status.h"

namespace tte {

// The ExecuTorch error that stands for `code` where an interface can only
// return an executorch::runtime::Error.
executorch::runtime::Error to_et_error(TteStatus code);
// The status code for an ExecuTorch error (TTE_ERROR_RUNTIME for the rest).
// ExecuTorch's memory errors do not say which memory ran out: they map to
// TTE_ERROR_OUT_OF_MEMORY, and a caller that knows it was host memory (the
// Program API reading a program) says TTE_ERROR_HOST_OUT_OF_MEMORY itself.
// TTE_ERROR_OUT_OF_MEMORY and TTE_ERROR_HOST_OUT_OF_MEMORY both map to
// Error::MemoryAllocationFailed the other way.
TteStatus status_code_of(executorch::runtime::Error error);
// "InvalidProgram (0x23)".
std::string et_error_text(executorch::runtime::Error error);

}  // namespace tte
