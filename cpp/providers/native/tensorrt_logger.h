// TensorRT's log routed to the host's log (ProviderEnvironment::log), with
// TensorRT's severities mapped to ours. TensorRT reports why a call failed
// only through its logger, so the last error of each thread is kept for the
// provider's own error messages. An error logged while a
// TensorRtErrorCapture lives on the thread is the reason its call's failure
// message carries (tensorrt_reason()), so it is logged at info, shown with
// the log-level switch (the rule of the ExecuTorch log route); any other
// error is logged at error.
#pragma once

#include <NvInferRuntime.h>

#include <string>

#include "native/native_tensorrt_provider.h"

namespace tte::native {

class TensorRtLogger final : public nvinfer1::ILogger {
 public:
  explicit TensorRtLogger(const ProviderEnvironment& environment) : environment_(environment) {}

  void log(Severity severity, const char* message) noexcept override;

  // The last error TensorRT logged on this thread since the last clear.
  static void clear_thread_error();
  static const std::string& thread_error();

 private:
  ProviderEnvironment environment_;
};

// Around one TensorRT call whose failure message appends tensorrt_reason():
// clears the thread's last error, and keeps the errors TensorRT logs on the
// thread meanwhile out of the error level.
class TensorRtErrorCapture {
 public:
  TensorRtErrorCapture();
  ~TensorRtErrorCapture();
  TensorRtErrorCapture(const TensorRtErrorCapture&) = delete;
  TensorRtErrorCapture& operator=(const TensorRtErrorCapture&) = delete;
};

// A line of the provider's own, printf-style, through the host's log.
void log_line(const ProviderEnvironment& environment, TteLogLevel level, const char* file, int line,
              const char* format, ...) __attribute__((format(printf, 5, 6)));

// " (TensorRT: <last error>)" when TensorRT logged an error on this thread,
// else "", to append to a failure message.
std::string tensorrt_reason();

}  // namespace tte::native

#define TTE_NATIVE_LOG(environment, level, ...)                                                 \
  do {                                                                                          \
    if ((environment).log_enabled(TTE_LOG_##level)) {                                           \
      ::tte::native::log_line((environment), TTE_LOG_##level, __FILE__, __LINE__, __VA_ARGS__); \
    }                                                                                           \
  } while (0)
