#include "common/logging.h"

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <strings.h>

#include <executorch/runtime/platform/log.h>

namespace tte {
namespace {

constexpr TteLogLevel kDefaultLevel = TTE_LOG_WARNING;
constexpr const char* kLevelEnv = "TORCH_TENSORRT_EXECUTORCH_LOG_LEVEL";

TteLogLevel level_from_env() {
  const char* value = std::getenv(kLevelEnv);
  if (value == nullptr || *value == '\0') {
    return kDefaultLevel;
  }
  static const struct {
    const char* name;
    TteLogLevel level;
  } kNames[] = {{"debug", TTE_LOG_DEBUG},     {"info", TTE_LOG_INFO},
                {"warning", TTE_LOG_WARNING}, {"warn", TTE_LOG_WARNING},
                {"error", TTE_LOG_ERROR},     {"off", TTE_LOG_OFF}};
  for (const auto& entry : kNames) {
    if (strcasecmp(value, entry.name) == 0) {
      return entry.level;
    }
  }
  std::fprintf(stderr,
               "TensorRTBackend: ignoring %s='%s' (expected debug, info, "
               "warning, error or off)\n",
               kLevelEnv, value);
  return kDefaultLevel;
}

// Function-local so that other static initializers of the library can log
// before this file's initializers have run.
std::atomic<int>& level_storage() {
  static std::atomic<int> level{level_from_env()};
  return level;
}

// Reads the environment at load, not at the first log line.
const bool kLevelReadAtLoad = (level_storage().load(), true);

const char* level_prefix(TteLogLevel level) {
  switch (level) {
    case TTE_LOG_DEBUG:
      return "debug";
    case TTE_LOG_INFO:
      return "info";
    case TTE_LOG_WARNING:
      return "warning";
    default:
      return "error";
  }
}

const char* short_file_name(const char* path) {
  const char* slash = std::strrchr(path, '/');
  return slash != nullptr ? slash + 1 : path;
}

// ExecuTorch's log sink cuts lines at 256 bytes; longer ones (lists of
// providers or tensor names) go to stderr whole rather than truncated.
constexpr size_t kExecuTorchMaxLine = 256;

void emit(TteLogLevel level, const char* file, int line, const char* text) {
  const char* prefix = level_prefix(level);
#if ET_LOG_ENABLED
  if (std::strlen(text) + std::strlen(prefix) + 20 < kExecuTorchMaxLine) {
    // ExecuTorch has no warning level: warnings print at Info, prefixed.
    executorch::runtime::LogLevel et_level = executorch::runtime::LogLevel::Info;
    if (level == TTE_LOG_DEBUG) {
      et_level = executorch::runtime::LogLevel::Debug;
    } else if (level >= TTE_LOG_ERROR) {
      et_level = executorch::runtime::LogLevel::Error;
    }
    // What ET_LOG expands to, with the caller's file and line instead of ours.
    executorch::runtime::internal::logf(
        et_level, executorch::runtime::internal::get_log_timestamp(), short_file_name(file),
        "TensorRTBackend", static_cast<size_t>(line), "TensorRTBackend %s: %s", prefix, text);
    return;
  }
#endif
  std::fprintf(stderr, "[%s:%d] TensorRTBackend %s: %s\n", short_file_name(file), line, prefix,
               text);
  std::fflush(stderr);
}

}  // namespace

TteLogLevel log_level() {
  (void)kLevelReadAtLoad;
  return static_cast<TteLogLevel>(level_storage().load(std::memory_order_relaxed));
}

void set_log_level(TteLogLevel level) {
  if (level < TTE_LOG_DEBUG) {
    level = TTE_LOG_DEBUG;
  } else if (level > TTE_LOG_OFF) {
    level = TTE_LOG_OFF;
  }
  level_storage().store(level, std::memory_order_relaxed);
}

bool log_enabled(TteLogLevel level) {
  return level != TTE_LOG_OFF && level >= log_level();
}

void log_message(TteLogLevel level, const char* file, int line,
                 const char* format, ...) {
  char text[4096];
  va_list args;
  va_start(args, format);
  std::vsnprintf(text, sizeof(text), format, args);
  va_end(args);
  if (log_enabled(level)) {
    emit(level, file, line, text);
  }
}

}  // namespace tte
