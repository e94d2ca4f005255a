#include "program/backend_options.h"

#include <array>
#include <cstring>
#include <limits>

#include "common/et_status.h"

namespace tte {

namespace et = executorch::runtime;

namespace {
// LoadBackendOptionsMap's limits (private constants there).
constexpr size_t kMaxOptionBackends = 8;
constexpr size_t kMaxBackendIdLength = 64;
}  // namespace

Status BackendOptionsMap::build(const std::vector<BackendOptionValue>& values) {
  for (const BackendOptionValue& value : values) {
    const std::string label = value.backend + "." + value.key;
    if (value.backend.empty() || value.backend.size() >= kMaxBackendIdLength) {
      return Status(TTE_ERROR_INVALID_ARGUMENT,
                    "backend option '" + label + "': the backend name must have 1 to " +
                        std::to_string(kMaxBackendIdLength - 1) + " characters");
    }
    if (value.key.empty() || value.key.size() >= et::kMaxOptionKeyLength) {
      return Status(TTE_ERROR_INVALID_ARGUMENT,
                    "backend option '" + label + "': the key must have 1 to " +
                        std::to_string(et::kMaxOptionKeyLength - 1) + " characters");
    }
    et::BackendOption option;
    std::memcpy(option.key, value.key.data(), value.key.size());
    switch (value.type) {
      case TTE_OPTION_BOOL:
        option.value = value.int_value != 0;
        break;
      case TTE_OPTION_INT:
        if (value.int_value < std::numeric_limits<int>::min() ||
            value.int_value > std::numeric_limits<int>::max()) {
          // ExecuTorch's option holds a 32-bit int; a larger one (a budget
          // of 2 << 30 bytes) travels as its decimal string, which
          // TensorRTBackend's integer options also take.
          std::array<char, et::kMaxOptionValueLength> text{};
          const std::string digits = std::to_string(value.int_value);
          std::memcpy(text.data(), digits.data(), digits.size());
          option.value = text;
        } else {
          option.value = static_cast<int>(value.int_value);
        }
        break;
      case TTE_OPTION_STRING: {
        if (value.string_value.size() >= et::kMaxOptionValueLength) {
          return Status(TTE_ERROR_INVALID_ARGUMENT,
                        "backend option '" + label + "': string values hold at most " +
                            std::to_string(et::kMaxOptionValueLength - 1) + " bytes, got " +
                            std::to_string(value.string_value.size()));
        }
        std::array<char, et::kMaxOptionValueLength> text{};
        std::memcpy(text.data(), value.string_value.data(), value.string_value.size());
        option.value = text;
        break;
      }
      default:
        return Status(TTE_ERROR_INVALID_ARGUMENT,
                      "backend option '" + label + "': unknown type " + std::to_string(value.type) +
                          " (expected TTE_OPTION_BOOL, _INT or _STRING)");
    }
    size_t slot = 0;
    while (slot < backends_.size() && backends_[slot] != value.backend) {
      ++slot;
    }
    if (slot == backends_.size()) {
      if (backends_.size() == kMaxOptionBackends) {
        return Status(TTE_ERROR_INVALID_ARGUMENT, "backend options name more than " +
                                                      std::to_string(kMaxOptionBackends) +
                                                      " backends (ExecuTorch's limit)");
      }
      backends_.push_back(value.backend);
      storage_.emplace_back();
    }
    std::vector<et::BackendOption>& options = storage_[slot];
    bool replaced = false;
    for (et::BackendOption& existing : options) {
      if (std::strcmp(existing.key, option.key) == 0) {
        existing = option;
        replaced = true;
      }
    }
    if (!replaced) {
      options.push_back(option);
    }
  }
  for (size_t i = 0; i < backends_.size(); ++i) {
    const et::Error error = map_.set_options(
        backends_[i].c_str(), et::Span<et::BackendOption>(storage_[i].data(), storage_[i].size()));
    if (error != et::Error::Ok) {
      return Status(TTE_ERROR_INVALID_ARGUMENT,
                    "backend options for '" + backends_[i] + "' refused by ExecuTorch (" +
                        et_error_text(error) + "): it takes options for at most " +
                        std::to_string(kMaxOptionBackends) +
                        " backends, each named by 1 to 63 characters; got a " +
                        std::to_string(backends_[i].size()) +
                        "-character name: pass the backend's name as it registered it");
    }
  }
  return Status::Ok();
}

// Fields of a flatbuffer table, read from raw bytes with every offset checked
// against the buffer (program.fbs: ExecutionPlan.name and .delegates,

}  // namespace tte
