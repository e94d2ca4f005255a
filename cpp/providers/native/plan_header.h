// What the first bytes of a TensorRT plan say, for messages when TensorRT
// refuses one. A serialized engine starts with the tag "ftrt" (0x74727466
// little-endian) and a serialization version; for version 0, bytes 24..27
// are the TensorRT version that built it (as TensorRT's own samples read
// them). Only diagnostics: TensorRT alone decides what it loads.
#pragma once

#include <cstdint>
#include <string>

namespace tte::native {

struct PlanHeader {
  bool has_tag = false;
  bool has_version = false;
  int32_t version[4] = {0, 0, 0, 0};  // major, minor, patch, build
};

PlanHeader read_plan_header(const void* plan, uint64_t plan_size);

// Why TensorRT may have refused a plan with this header, in one clause, for
// the library of `library_version` (the lean runtime when `lean`).
std::string refusal_hint(const PlanHeader& header, const std::string& library_version, bool lean);

}  // namespace tte::native
