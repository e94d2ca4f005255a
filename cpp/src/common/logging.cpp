#include "common/logging.h"

#include <strings.h>
#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

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
  } kNames[] = {{"debug", TTE_LOG_DEBUG},  {"info", TTE_LOG_INFO},   {"warning", TTE_LOG_WARNING},
                {"warn", TTE_LOG_WARNING}, {"error", TTE_LOG_ERROR}, {"off", TTE_LOG_OFF}};
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
  if (path == nullptr) {
    return "?";
  }
  const char* slash = std::strrchr(path, '/');
  return slash != nullptr ? slash + 1 : path;
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

bool log_enabled(TteLogLevel level) { return level != TTE_LOG_OFF && level >= log_level(); }

void log_line(TteLogLevel level, const char* origin, const char* file, size_t line,
              const char* text) {
  if (!log_enabled(level)) {
    return;
  }
  // Straight to stderr, one write per line: ExecuTorch's own log sink is
  // routed into this log (executorch_log.h), so going through it would loop.
  std::fprintf(stderr, "[%s:%zu] %s %s: %s\n", short_file_name(file), line, origin,
               level_prefix(level), text);
  std::fflush(stderr);
}

void log_message(TteLogLevel level, const char* file, int line, const char* format, ...) {
  if (!log_enabled(level)) {
    return;
  }
  char text[4096];
  va_list args;
  va_start(args, format);
  std::vsnprintf(text, sizeof(text), format, args);
  va_end(args);
  log_line(level, "TensorRTBackend", file, static_cast<size_t>(line), text);
}

}  // namespace tte
