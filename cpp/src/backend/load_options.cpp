#include "backend/load_options.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <variant>

#include "blob/weight_streaming_budget.h"
#include "common/logging.h"

namespace tte {

namespace et = executorch::runtime;

namespace {

constexpr const char* kProviderOption = "provider";
constexpr const char* kWeightStreamingBudget = "weight_streaming_budget";
constexpr const char* kEngineHostCodeOption = "engine_host_code_allowed";
constexpr const char* kDlaCoreOption = "dla_core";
constexpr const char* kPluginLibrariesOption = "plugin_libraries";
constexpr const char* kRuntimeCachePathOption = "runtime_cache_path";
constexpr const char* kShareDeviceMemoryOption = "share_device_memory";
constexpr const char* kShareEnginesOption = "share_engines";

using Text = std::array<char, et::kMaxOptionValueLength>;

Status wrong_type(const char* key, const char* expected) {
  return Status(TTE_ERROR_INVALID_ARGUMENT,
                std::string("load option '") + key + "' must be " + expected);
}

Status read_bool(const et::BackendOption& option, bool* out) {
  if (const auto* boolean = std::get_if<bool>(&option.value)) {
    *out = *boolean;
  } else if (const auto* integer = std::get_if<int>(&option.value)) {
    *out = *integer != 0;
  } else {
    return wrong_type(option.key, "a bool");
  }
  return Status::Ok();
}

// The option's text, bounded: the array need not hold a NUL.
std::string text_of(const Text& text) {
  return std::string(text.data(), strnlen(text.data(), text.size()));
}

std::vector<std::string> split_paths(const std::string& text) {
  std::vector<std::string> paths;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find(':', start), text.size());
    if (end > start) {
      paths.push_back(text.substr(start, end - start));
    }
    start = end + 1;
  }
  return paths;
}

// The compile spec, at most once: two values cannot both be meant (upstream
// refuses them too).
Status read_budget_spec(et::ArrayRef<et::CompileSpec> compile_specs, LoadOptions* options) {
  int seen = 0;
  for (const et::CompileSpec& spec : compile_specs) {
    if (spec.key == nullptr || std::strcmp(spec.key, kWeightStreamingBudget) != 0) {
      continue;
    }
    if (++seen > 1) {
      return Status(TTE_ERROR_INVALID_PROGRAM, std::string("the delegate has two '") +
                                                   kWeightStreamingBudget +
                                                   "' compile specs; export it with one");
    }
    auto budget = parse_weight_streaming_budget(spec.value.buffer, spec.value.nbytes);
    if (!budget) {
      return Status(TTE_ERROR_INVALID_PROGRAM, std::string("compile spec '") +
                                                   kWeightStreamingBudget + "': " + budget.error());
    }
    options->has_weight_streaming_budget = true;
    options->weight_streaming_budget = budget.value();
  }
  return Status::Ok();
}

Status read_budget_option(const et::BackendOption& option, LoadOptions* options) {
  if (const auto* integer = std::get_if<int>(&option.value); integer != nullptr && *integer >= 0) {
    options->weight_streaming_budget = *integer;
  } else if (const auto* text = std::get_if<Text>(&option.value)) {
    const std::string value = text_of(*text);
    if (value.empty()) {
      // Upstream's rule: an empty option sets nothing.
      TTE_LOG(WARNING,
              "load option '%s' is empty and was ignored (the compile spec, else "
              "TensorRT's own default, no streaming, applies)",
              kWeightStreamingBudget);
      return Status::Ok();
    }
    auto budget = parse_weight_streaming_budget(value.data(), value.size());
    if (!budget) {
      return Status(TTE_ERROR_INVALID_ARGUMENT,
                    std::string("load option '") + kWeightStreamingBudget + "': " + budget.error());
    }
    options->weight_streaming_budget = budget.value();
  } else {
    return wrong_type(kWeightStreamingBudget, "a non-negative int or a decimal string of bytes");
  }
  options->has_weight_streaming_budget = true;
  return Status::Ok();
}

}  // namespace

Status read_load_options(const et::BackendInitContext& context,
                         et::ArrayRef<et::CompileSpec> compile_specs, LoadOptions* out) {
  LoadOptions options;
  Status status = read_budget_spec(compile_specs, &options);
  // Load options override compile specs.
  for (const et::BackendOption& option : context.runtime_specs()) {
    if (!status.ok()) {
      break;
    }
    const auto* text = std::get_if<Text>(&option.value);
    const auto* integer = std::get_if<int>(&option.value);
    if (std::strcmp(option.key, kProviderOption) == 0) {
      if (text == nullptr) {
        return wrong_type(kProviderOption, "a string (an engine provider name)");
      }
      options.provider = text_of(*text);
    } else if (std::strcmp(option.key, kCudaGraphsOption) == 0) {
      status = read_bool(option, &options.cuda_graphs);
    } else if (std::strcmp(option.key, kWeightStreamingBudget) == 0) {
      status = read_budget_option(option, &options);
    } else if (std::strcmp(option.key, kEngineHostCodeOption) == 0) {
      status = read_bool(option, &options.engine_host_code_allowed);
    } else if (std::strcmp(option.key, kDlaCoreOption) == 0) {
      if (integer == nullptr || *integer < 0) {
        return wrong_type(kDlaCoreOption, "an int >= 0 (a DLA core index)");
      }
      options.has_dla_core = true;
      options.dla_core = *integer;
    } else if (std::strcmp(option.key, kPluginLibrariesOption) == 0) {
      if (text == nullptr) {
        return wrong_type(kPluginLibrariesOption, "a string of library paths separated by ':'");
      }
      options.plugin_libraries = split_paths(text_of(*text));
    } else if (std::strcmp(option.key, kRuntimeCachePathOption) == 0) {
      if (text == nullptr) {
        return wrong_type(kRuntimeCachePathOption, "a string (a file path)");
      }
      options.runtime_cache_path = text_of(*text);
    } else if (std::strcmp(option.key, kShareDeviceMemoryOption) == 0) {
      status = read_bool(option, &options.share_device_memory);
    } else if (std::strcmp(option.key, kShareEnginesOption) == 0) {
      status = read_bool(option, &options.share_engines);
    } else {
      TTE_LOG(WARNING,
              "ignoring unknown load option '%s' (known: %s, %s, %s, %s, %s, %s, %s, %s, %s)",
              option.key, kProviderOption, kCudaGraphsOption, kWeightStreamingBudget,
              kEngineHostCodeOption, kDlaCoreOption, kPluginLibrariesOption,
              kRuntimeCachePathOption, kShareDeviceMemoryOption, kShareEnginesOption);
    }
  }
  if (status.ok()) {
    *out = std::move(options);
  }
  return status;
}

}  // namespace tte
