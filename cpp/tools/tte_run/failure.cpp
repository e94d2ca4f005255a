#include "tools/tte_run/failure.h"

#include <cstdio>

#include <nlohmann/json.hpp>

namespace tte::tools {
namespace {

// The class names of torch_tensorrt_executorch_runtime.errors._BY_STATUS.
const char* error_type(TteStatus status) {
  switch (status) {
    case TTE_ERROR_INVALID_ARGUMENT:
      return "InvalidArgumentError";
    case TTE_ERROR_NOT_ACCEPTED:
      return "NotAcceptedError";
    case TTE_ERROR_RUNTIME:
      return "ExecutionError";
    case TTE_ERROR_OUT_OF_MEMORY:
      return "DeviceOutOfMemoryError";
    case TTE_ERROR_NO_DEVICE:
      return "NoDeviceError";
    case TTE_ERROR_NOT_SUPPORTED:
      return "NotSupportedError";
    case TTE_ERROR_NOT_FOUND:
      return "NotFoundError";
    case TTE_ERROR_INVALID_PROGRAM:
      return "InvalidProgramError";
    case TTE_ERROR_INTERNAL:
      return "InternalError";
    case TTE_ERROR_INVALID_STATE:
      return "InvalidStateError";
    case TTE_ERROR_HOST_OUT_OF_MEMORY:
      return "HostOutOfMemoryError";
    default:
      return "Error";
  }
}

}  // namespace

Failure api_failure(const TteError& error) {
  return Failure{kExitFailure, error.message, error_type(error.code)};
}

Failure usage_failure(const std::string& message) {
  return Failure{kExitUsage, message, "UsageError"};
}

void print_failure(const Arguments& args, const Failure& failure) {
  if (args.json) {
    // In the order the Python CLI prints its keys.
    nlohmann::ordered_json doc;
    doc["ok"] = false;
    doc["command"] = "tte-run";
    doc["exit_status"] = failure.exit_code;
    doc["error"] = {{"type", failure.type}, {"message", failure.message}};
    std::printf("%s\n", doc.dump(2).c_str());
  }
  if (failure.exit_code == kExitUsage) {
    std::fprintf(stderr, "tte-run: %s\n%s", failure.message.c_str(), kUsage);
  } else {
    std::fprintf(stderr, "tte-run: error: %s\n", failure.message.c_str());
  }
}

}  // namespace tte::tools
