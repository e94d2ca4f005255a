// The plugin's log: one level for everything it prints, set through the C
// API (tte_set_log_level) or the TORCH_TENSORRT_EXECUTORCH_LOG_LEVEL
// environment variable (debug|info|warning|error|off, read at load), default
// warning. Lines go to stderr, "[file:line] ORIGIN LEVEL: text"; ExecuTorch's
// own log is routed into it (executorch_log.h), origin "ExecuTorch".
#pragma once

#include <cstddef>

#include "torch_tensorrt_executorch/c_api.h"

namespace tte {

TteLogLevel log_level();
void set_log_level(TteLogLevel level);
bool log_enabled(TteLogLevel level);

// One line from `origin` ("TensorRTBackend", "ExecuTorch"), when `level` is
// enabled.
void log_line(TteLogLevel level, const char* origin, const char* file, size_t line,
              const char* text);

// Prefer TTE_LOG, which skips formatting when the level is filtered out.
void log_message(TteLogLevel level, const char* file, int line, const char* format, ...)
    __attribute__((format(printf, 4, 5)));

}  // namespace tte

#define TTE_LOG(level, ...)                                                 \
  do {                                                                      \
    if (::tte::log_enabled(TTE_LOG_##level)) {                              \
      ::tte::log_message(TTE_LOG_##level, __FILE__, __LINE__, __VA_ARGS__); \
    }                                                                       \
  } while (0)
