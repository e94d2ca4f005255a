// The one status type inside the library and its providers: TTE_OK, or a
// TteStatus code with the one line the user reads (what was expected, what
// was found, what to do). It becomes a TteError exactly once, where it
// crosses a C boundary (c_api.h, engine_provider.h), through to_c_status;
// where it must cross an ExecuTorch interface, through
// report_to_executorch (call_context.h). Header-only, so the provider
// libraries use it without linking the plugin.
#pragma once

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "torch_tensorrt_executorch/engine_provider.h"

namespace tte {

class Status {
 public:
  Status() = default;
  Status(TteStatus code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == TTE_OK; }
  TteStatus code() const { return code_; }
  const std::string& message() const { return message_; }

  // The same failure, its message prefixed with where it happened.
  Status prefixed(const std::string& context) const {
    return ok() ? *this : Status(code_, context + message_);
  }

 private:
  TteStatus code_ = TTE_OK;
  std::string message_;
};

// Copies `status` into `error` (may be NULL; long messages are cut to the
// struct's capacity) and returns its code.
inline TteStatus to_c_status(const Status& status, TteError* error) {
  if (error != nullptr) {
    error->code = status.code();
    // Every successful call passes here: no formatting, only the terminator.
    const std::string& message = status.message();
    const size_t n = std::min(message.size(), sizeof(error->message) - 1);
    std::memcpy(error->message, message.data(), n);
    error->message[n] = '\0';
  }
  return status.code();
}

// A TteError a callee filled, back as a Status.
inline Status from_c_status(TteStatus code, const TteError& error) {
  if (code == TTE_OK) {
    return Status::Ok();
  }
  return Status(code, error.message[0] != '\0' ? std::string(error.message) : "(no message)");
}

}  // namespace tte
