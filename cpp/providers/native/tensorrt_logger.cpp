#include "native/tensorrt_logger.h"

#include <cstdarg>
#include <cstdio>

namespace tte::native {
namespace {

thread_local std::string t_last_error;
// TensorRtErrorCapture scopes alive on this thread.
thread_local int t_captures = 0;

TteLogLevel level_of(nvinfer1::ILogger::Severity severity) {
  switch (severity) {
    case nvinfer1::ILogger::Severity::kINTERNAL_ERROR:
    case nvinfer1::ILogger::Severity::kERROR:
      return TTE_LOG_ERROR;
    case nvinfer1::ILogger::Severity::kWARNING:
      return TTE_LOG_WARNING;
    case nvinfer1::ILogger::Severity::kINFO:
      return TTE_LOG_INFO;
    default:
      return TTE_LOG_DEBUG;
  }
}

}  // namespace

void TensorRtLogger::log(Severity severity, const char* message) noexcept {
  if (message == nullptr) {
    return;
  }
  TteLogLevel level = level_of(severity);
  try {
    if (level == TTE_LOG_ERROR) {
      t_last_error = message;
    }
    // A call's error is said by its failure message; an internal error
    // (ILogger::Severity, NvInferRuntime.h 11.1 :1592: "An internal error
    // has occurred. Execution is unrecoverable") is logged as an error always.
    if (level == TTE_LOG_ERROR && t_captures > 0 && severity != Severity::kINTERNAL_ERROR) {
      level = TTE_LOG_INFO;
    }
    if (environment_.log_enabled(level)) {
      const std::string line = std::string("TensorRT: ") + message;
      environment_.log(level, __FILE__, __LINE__, line.c_str());
    }
  } catch (...) {
    // TensorRT calls this from noexcept code; a log line is not worth a crash.
  }
}

void TensorRtLogger::clear_thread_error() { t_last_error.clear(); }

TensorRtErrorCapture::TensorRtErrorCapture() {
  TensorRtLogger::clear_thread_error();
  ++t_captures;
}

TensorRtErrorCapture::~TensorRtErrorCapture() { --t_captures; }

const std::string& TensorRtLogger::thread_error() { return t_last_error; }

void log_line(const ProviderEnvironment& environment, TteLogLevel level, const char* file, int line,
              const char* format, ...) {
  char text[1024];
  va_list args;
  va_start(args, format);
  std::vsnprintf(text, sizeof(text), format, args);
  va_end(args);
  environment.log(level, file, line, text);
}

std::string tensorrt_reason() {
  const std::string& error = TensorRtLogger::thread_error();
  return error.empty() ? std::string() : " (TensorRT: " + error + ")";
}

}  // namespace tte::native
