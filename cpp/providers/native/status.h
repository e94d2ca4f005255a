// The outcome of a provider operation: a TteStatus and, on failure, the one
// line the user reads. The ABI functions copy it into a TteError.
#pragma once

#include <string>
#include <utility>

#include "torch_tensorrt_executorch/engine_provider.h"

namespace tte::native {

class Status {
 public:
  Status() = default;
  Status(TteStatus code, std::string message)
      : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == TTE_OK; }
  TteStatus code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  TteStatus code_ = TTE_OK;
  std::string message_;
};

}  // namespace tte::native
