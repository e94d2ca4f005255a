// Why tte-run stopped: the exit status, the message, and the name of the
// error (the Python package's exception class for the same TteStatus, so
// that `tte-run --json` and `torch-tensorrt-executorch run --json` print the
// same document on failure).
#pragma once

#include <string>

#include "tools/tte_run/arguments.h"
#include "torch_tensorrt_executorch/c_api.h"

namespace tte::tools {

struct Failure {
  int exit_code = kExitFailure;
  std::string message;
  std::string type = "Error";
};

// A failed C API call, named after its status.
Failure api_failure(const TteError& error);

// A usage error (exit status 2).
Failure usage_failure(const std::string& message);

// On stderr: "tte-run: error: MESSAGE" (or the message and the usage text).
// With --json, also on stdout: {"ok": false, "command": "tte-run",
// "exit_status": N, "error": {"type": ..., "message": ...}}.
void print_failure(const Arguments& args, const Failure& failure);

}  // namespace tte::tools
