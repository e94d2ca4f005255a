// Binding by the engine's own I/O names, for blobs whose io_bindings list is
// empty. Torch-TensorRT names engine tensors with a numeric suffix after the
// last '.' or '_' (`input_0`, `output.1`, `profile.input_3`): the suffix is
// the tensor's position among the engine's inputs, or among its outputs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/parse_result.h"

namespace tte {

// The decimal index after the last '.' or '_' of `name`, or nothing when
// there is no such separator, nothing after it, or anything but digits
// after it (`input`, `input.`, `input_`, `input.foo`, `input.3x`), or the
// index does not fit in 64 bits.
std::optional<std::uint64_t> parse_binding_index(std::string_view name);

struct EngineIoName {
  std::string name;
  bool is_input = false;
};

struct OrderedBindingNames {
  std::vector<std::string> inputs;   // index 0, 1, ...
  std::vector<std::string> outputs;  // index 0, 1, ...
};

// Orders engine inputs and outputs by their suffix index. Fails, naming the
// tensor, when a name has no index, two tensors of one direction share an
// index, or the indices of a direction are not exactly 0..n-1.
ParseResult<OrderedBindingNames> order_binding_names(const std::vector<EngineIoName>& engine_io);

}  // namespace tte
