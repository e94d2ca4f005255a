// The plugin's log: one level for everything it prints, set through the C
// API (tte_set_log_level) or the TORCH_TENSORRT_EXECUTORCH_LOG_LEVEL
// environment variable (debug|info|warning|error|off, read at load), default
// warning. Lines go through ExecuTorch's log sink, so they appear where the
// runtime's own messages do.
#pragma once

#include <string>

#include "torch_tensorrt_executorch/c_api.h"

namespace tte {

TteLogLevel log_level();
void set_log_level(TteLogLevel level);
bool log_enabled(TteLogLevel level);

// Prefer TTE_LOG, which skips formatting when the level is filtered out.
void log_message(TteLogLevel level, const char* file, int line,
                 const char* format, ...) __attribute__((format(printf, 4, 5)));

// The last ERROR line of this thread, whatever the level filter: ExecuTorch
// reports a delegate failure as a bare Error code, so C API callers use this
// to tell the user why.
const std::string& thread_last_error();
void clear_thread_last_error();

// Logs `message` at ERROR and fills `error` (may be NULL) for a C caller.
// Returns `status`.
TteStatus report_error(TteError* error, TteStatus status, const std::string& message);
// Copies a message into a TteError without logging (for messages that were
// already logged).
void fill_error(TteError* error, TteStatus status, const std::string& message);

}  // namespace tte

// Errors are always formatted (to keep thread_last_error), only printed when
// enabled.
#define TTE_LOG(level, ...)                                                  \
  do {                                                                       \
    if (TTE_LOG_##level == TTE_LOG_ERROR ||                                  \
        ::tte::log_enabled(TTE_LOG_##level)) {                               \
      ::tte::log_message(TTE_LOG_##level, __FILE__, __LINE__, __VA_ARGS__);  \
    }                                                                        \
  } while (0)
