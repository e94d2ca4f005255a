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
TteStatus status_code_of(executorch::runtime::Error error);
// "InvalidProgram (0x23)".
std::string et_error_text(executorch::runtime::Error error);

}  // namespace tte
