// The `weight_streaming_budget` compile spec and load option: how many bytes
// of an engine's streamable weights stay on the device.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/parse_result.h"

namespace tte {

// Parses exactly `size` bytes (not NUL-terminated) as an ASCII decimal
// int64 >= 0: digits only, leading zeros allowed, no sign or spaces.
ParseResult<std::int64_t> parse_weight_streaming_budget(const void* data, std::size_t size);

}  // namespace tte
