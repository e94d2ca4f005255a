#include "blob/binding_names.h"

#include <algorithm>
#include <charconv>
#include <utility>

namespace tte {
namespace {

// Sorts one direction's (index, name) pairs and checks they are 0..n-1.
bool order_direction(std::vector<std::pair<std::uint64_t, std::string>>& indexed,
                     const char* direction, std::vector<std::string>* names, std::string* error) {
  std::stable_sort(indexed.begin(), indexed.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (std::size_t i = 0; i < indexed.size(); ++i) {
    if (i > 0 && indexed[i].first == indexed[i - 1].first) {
      *error = std::string("engine ") + direction + "s '" + indexed[i - 1].second + "' and '" +
               indexed[i].second + "' both have index " + std::to_string(indexed[i].first);
      return false;
    }
    if (indexed[i].first != i) {
      *error = std::string("engine has ") + std::to_string(indexed.size()) + " " + direction +
               "s but none with index " + std::to_string(i) + " (next is '" + indexed[i].second +
               "'); indices must run from 0 to " + std::to_string(indexed.size() - 1);
      return false;
    }
  }
  names->reserve(indexed.size());
  for (auto& entry : indexed) names->push_back(std::move(entry.second));
  return true;
}

}  // namespace

std::optional<std::uint64_t> parse_binding_index(std::string_view name) {
  const std::size_t separator = name.find_last_of("._");
  if (separator == std::string_view::npos || separator + 1 == name.size()) return std::nullopt;
  const char* begin = name.data() + separator + 1;
  const char* end = name.data() + name.size();
  // from_chars takes no sign or space for an unsigned type; only digits pass.
  std::uint64_t index = 0;
  const auto [ptr, ec] = std::from_chars(begin, end, index);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return index;
}

ParseResult<OrderedBindingNames> order_binding_names(const std::vector<EngineIoName>& engine_io) {
  std::vector<std::pair<std::uint64_t, std::string>> inputs;
  std::vector<std::pair<std::uint64_t, std::string>> outputs;
  for (const EngineIoName& io : engine_io) {
    const std::optional<std::uint64_t> index = parse_binding_index(io.name);
    if (!index) {
      return ParseResult<OrderedBindingNames>::failure(
          "the blob lists no io_bindings, so engine tensors are bound by the index in their names, "
          "but engine " +
          std::string(io.is_input ? "input" : "output") + " '" + io.name +
          "' has none (expected a name like input_0 or output.1)");
    }
    (io.is_input ? inputs : outputs).emplace_back(*index, io.name);
  }
  OrderedBindingNames ordered;
  std::string error;
  if (!order_direction(inputs, "input", &ordered.inputs, &error) ||
      !order_direction(outputs, "output", &ordered.outputs, &error)) {
    return ParseResult<OrderedBindingNames>::failure(
        "the blob lists no io_bindings and the engine's I/O names do not give an order: " + error);
  }
  return ParseResult<OrderedBindingNames>::success(std::move(ordered));
}

}  // namespace tte
