#include "backend/load_options.h"

#include <array>
#include <cstring>
#include <variant>

#include "blob/weight_streaming_budget.h"
#include "common/logging.h"

namespace tte {

namespace et = executorch::runtime;

namespace {
constexpr const char* kProviderOption = "provider";
constexpr const char* kCudaGraphsOption = "cuda_graphs";
constexpr const char* kWeightStreamingBudget = "weight_streaming_budget";
}  // namespace

Status read_load_options(const et::BackendInitContext& context,
                         et::ArrayRef<et::CompileSpec> compile_specs, LoadOptions* out) {
  LoadOptions options;
  for (const et::CompileSpec& spec : compile_specs) {
    if (spec.key == nullptr || std::strcmp(spec.key, kWeightStreamingBudget) != 0) {
      continue;
    }
    auto budget = parse_weight_streaming_budget(spec.value.buffer, spec.value.nbytes);
    if (!budget) {
      return Status(TTE_ERROR_INVALID_PROGRAM, std::string("compile spec '") +
                                                   kWeightStreamingBudget + "': " + budget.error());
    }
    options.has_weight_streaming_budget = true;
    options.weight_streaming_budget = budget.value();
  }
  // Load options override compile specs.
  for (const et::BackendOption& option : context.runtime_specs()) {
    const auto* text = std::get_if<std::array<char, et::kMaxOptionValueLength>>(&option.value);
    const auto* integer = std::get_if<int>(&option.value);
    const auto* boolean = std::get_if<bool>(&option.value);
    if (std::strcmp(option.key, kProviderOption) == 0) {
      if (text == nullptr) {
        return Status(TTE_ERROR_INVALID_ARGUMENT,
                      std::string("load option '") + kProviderOption +
                          "' must be a string (an engine provider name)");
      }
      options.provider = text->data();
    } else if (std::strcmp(option.key, kCudaGraphsOption) == 0) {
      if (boolean != nullptr) {
        options.cuda_graphs = *boolean;
      } else if (integer != nullptr) {
        options.cuda_graphs = *integer != 0;
      } else {
        return Status(TTE_ERROR_INVALID_ARGUMENT,
                      std::string("load option '") + kCudaGraphsOption + "' must be a bool");
      }
    } else if (std::strcmp(option.key, kWeightStreamingBudget) == 0) {
      if (integer != nullptr && *integer >= 0) {
        options.weight_streaming_budget = *integer;
      } else if (text != nullptr) {
        auto budget = parse_weight_streaming_budget(text->data(), std::strlen(text->data()));
        if (!budget) {
          return Status(
              TTE_ERROR_INVALID_ARGUMENT,
              std::string("load option '") + kWeightStreamingBudget + "': " + budget.error());
        }
        options.weight_streaming_budget = budget.value();
      } else {
        return Status(TTE_ERROR_INVALID_ARGUMENT,
                      std::string("load option '") + kWeightStreamingBudget +
                          "' must be a non-negative int or a decimal string of bytes");
      }
      options.has_weight_streaming_budget = true;
    } else {
      TTE_LOG(WARNING, "ignoring unknown load option '%s' (known: %s, %s, %s)", option.key,
              kProviderOption, kCudaGraphsOption, kWeightStreamingBudget);
    }
  }
  *out = options;
  return Status::Ok();
}

}  // namespace tte
