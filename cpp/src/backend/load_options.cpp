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

constexpr const char kWeightStreamingBudget[] = "weight_streaming_budget";

using Text = std::array<char, et::kMaxOptionValueLength>;

// The refusal of a value the row does not take, in the row's words.
Status wrong_type(const LoadOptionSpec& row) {
  return Status(TTE_ERROR_INVALID_ARGUMENT,
                std::string("load option '") + row.name + "' must be " + row.must_be);
}

Status read_bool(const LoadOptionSpec& row, const et::BackendOption& option, bool* out) {
  if (const auto* boolean = std::get_if<bool>(&option.value)) {
    *out = *boolean;
  } else if (const auto* integer = std::get_if<int>(&option.value)) {
    *out = *integer != 0;
  } else {
    return wrong_type(row);
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

Status read_budget_option(const LoadOptionSpec& row, const et::BackendOption& option,
                          LoadOptions* options) {
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
    return wrong_type(row);
  }
  options->has_weight_streaming_budget = true;
  return Status::Ok();
}

// The readers of the table's rows.

Status read_text(const LoadOptionSpec& row, const et::BackendOption& option, std::string* out) {
  const auto* text = std::get_if<Text>(&option.value);
  if (text == nullptr) {
    return wrong_type(row);
  }
  *out = text_of(*text);
  return Status::Ok();
}

Status read_dla_core(const LoadOptionSpec& row, const et::BackendOption& option, LoadOptions* out) {
  const auto* integer = std::get_if<int>(&option.value);
  if (integer == nullptr || *integer < 0) {
    return wrong_type(row);
  }
  out->has_dla_core = true;
  out->dla_core = *integer;
  return Status::Ok();
}

Status read_plugin_libraries(const LoadOptionSpec& row, const et::BackendOption& option,
                             LoadOptions* out) {
  std::string text;
  Status status = read_text(row, option, &text);
  if (status.ok()) {
    out->plugin_libraries = split_paths(text);
  }
  return status;
}

constexpr uint32_t kBool = 1u << TTE_OPTION_BOOL;
constexpr uint32_t kInt = 1u << TTE_OPTION_INT;
constexpr uint32_t kString = 1u << TTE_OPTION_STRING;

}  // namespace

const std::vector<LoadOptionSpec>& load_option_table() {
  static const std::string runs_must_be =
      "an int from 1 to " + std::to_string(kMaxMaxConcurrentRuns) + " (runs of one method at once)";
  static const std::string runs_fallback = std::to_string(kDefaultMaxConcurrentRuns);
  // Bools also take ints (0 is false), as ExecuTorch's options may carry them.
  static const std::vector<LoadOptionSpec> table = {
      {"provider", kString, "str", "a string (an engine provider name)",
       "the first provider that accepts the plan",
       "the engine provider to use, instead of the first that accepts the plan",
       [](const LoadOptionSpec& row, const et::BackendOption& o, LoadOptions* out) {
         return read_text(row, o, &out->provider);
       }},
      {kCudaGraphsOption, kBool | kInt, "bool", "a bool", "false",
       "capture the enqueue into a CUDA graph and replay it, one graph per shape set",
       [](const LoadOptionSpec& row, const et::BackendOption& o, LoadOptions* out) {
         return read_bool(row, o, &out->cuda_graphs);
       }},
      {kWeightStreamingBudget, kInt | kString, "int or decimal str",
       "a non-negative int or a decimal string of bytes",
       "the compile spec, else TensorRT's default (no streaming)",
       "bytes of weights kept on the device; overrides the compile spec", read_budget_option},
      {"engine_host_code_allowed", kBool | kInt, "bool", "a bool", "true",
       "false refuses plans that carry host code (version-compatible plans embedding the lean "
       "runtime)",
       [](const LoadOptionSpec& row, const et::BackendOption& o, LoadOptions* out) {
         return read_bool(row, o, &out->engine_host_code_allowed);
       }},
      {"dla_core", kInt, "int", "an int >= 0 (a DLA core index)", "the GPU",
       "the DLA core the engine runs on (Jetson)", read_dla_core},
      {"plugin_libraries", kString, "str", "a string of library paths separated by ':'", "none",
       "TensorRT plugin libraries to load before deserializing, separated by ':'",
       read_plugin_libraries},
      {"runtime_cache_path", kString, "str", "a string (a file path)", "none",
       "TensorRT-RTX: a file that keeps compiled kernels between processes",
       [](const LoadOptionSpec& row, const et::BackendOption& o, LoadOptions* out) {
         return read_text(row, o, &out->runtime_cache_path);
       }},
      {"share_device_memory", kBool | kInt, "bool", "a bool", "true",
       "engines' scratch (activation) memory comes from one arena per CUDA stream",
       [](const LoadOptionSpec& row, const et::BackendOption& o, LoadOptions* out) {
         return read_bool(row, o, &out->share_device_memory);
       }},
      {kMaxConcurrentRunsOption, kInt, "int", runs_must_be.c_str(), runs_fallback.c_str(),
       "runs of one method at once from different threads (the Program API's option)", nullptr},
      {"share_engines", kBool | kInt, "bool", "a bool", "true",
       "a plan already loaded on the device is not deserialized again",
       [](const LoadOptionSpec& row, const et::BackendOption& o, LoadOptions* out) {
         return read_bool(row, o, &out->share_engines);
       }},
  };
  return table;
}

const LoadOptionSpec* find_load_option(const char* name) {
  if (name == nullptr) {
    return nullptr;
  }
  for (const LoadOptionSpec& spec : load_option_table()) {
    if (std::strcmp(spec.name, name) == 0) {
      return &spec;
    }
  }
  return nullptr;
}

Status read_load_options(const et::BackendInitContext& context,
                         et::ArrayRef<et::CompileSpec> compile_specs, LoadOptions* out) {
  LoadOptions options;
  Status status = read_budget_spec(compile_specs, &options);
  // Load options override compile specs.
  for (const et::BackendOption& option : context.runtime_specs()) {
    if (!status.ok()) {
      break;
    }
    const LoadOptionSpec* spec = find_load_option(option.key);
    if (spec == nullptr) {
      std::string known;
      for (const LoadOptionSpec& row : load_option_table()) {
        known += (known.empty() ? "" : ", ") + std::string(row.name);
      }
      TTE_LOG(WARNING, "ignoring unknown load option '%s' (known: %s)", option.key, known.c_str());
    } else if (spec->read == nullptr) {
      // Through the stock runtime, which has no such option.
      TTE_LOG(INFO, "load option '%s' is the Program API's; TensorRTBackend ignores it",
              option.key);
    } else {
      status = spec->read(*spec, option, &options);
    }
  }
  if (status.ok()) {
    *out = std::move(options);
  }
  return status;
}

}  // namespace tte
