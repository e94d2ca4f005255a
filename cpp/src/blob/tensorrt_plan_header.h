// What the first bytes of a TensorRT plan say. A serialized engine starts
// with the tag "ftrt" (0x74727466 little-endian) and a serialization version;
// for version 0, bytes 24..27 are the TensorRT version that built it (as
// TensorRT's own samples read them). The plugin reads the major to pick the
// native provider of that major (backend/engine_loader.cpp); the native
// provider reads it to refuse another major's plan before TensorRT sees it,
// and for messages. TensorRT alone decides what it loads.
#pragma once

#include <cstdint>
#include <string>

namespace tte {

struct PlanHeader {
  bool has_tag = false;
  bool has_version = false;
  int32_t version[4] = {0, 0, 0, 0};  // major, minor, patch, build
};

PlanHeader read_plan_header(const void* plan, uint64_t plan_size);

// "TensorRT 10.3.0", or "an unknown TensorRT version" without a version.
std::string plan_built_by(const PlanHeader& header);

}  // namespace tte
