// tte-run's command line: what it takes, and the backend options it passes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "torch_tensorrt_executorch/c_api.h"

namespace tte::tools {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

extern const char kUsage[];

struct Arguments {
  std::string model;
  std::vector<std::string> data_paths;
  std::string method;
  std::vector<std::string> inputs;
  int num_runs = 10;
  int warmup = 1;
  std::vector<std::string> providers;
  std::vector<std::string> options;
  std::string save_dir;
  bool json = false;
};

struct UsageError {
  std::string message;
};

// Exits with the usage text for -h/--help.
std::optional<UsageError> parse_arguments(int argc, char** argv, Arguments* args);

// Owned strings behind a TteBackendOption.
struct OptionText {
  std::string backend;
  std::string key;
  std::string value;
  TteBackendOption option{};
};

// BACKEND.KEY=VALUE; VALUE is true/false, an int32, or else a string.
std::optional<UsageError> parse_option(const std::string& text, OptionText* out);

}  // namespace tte::tools
