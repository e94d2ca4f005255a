#include "blob/tensorrt_plan_header.h"

#include <cstring>

namespace tte {
namespace {

constexpr unsigned char kTag[4] = {'f', 't', 'r', 't'};
constexpr uint64_t kVersionOffset = 24;
constexpr uint64_t kHeaderSize = 28;

}  // namespace

PlanHeader read_plan_header(const void* plan, uint64_t plan_size) {
  PlanHeader header;
  const auto* bytes = static_cast<const unsigned char*>(plan);
  if (plan == nullptr || plan_size < sizeof(kTag) || std::memcmp(bytes, kTag, sizeof(kTag)) != 0) {
    return header;
  }
  header.has_tag = true;
  if (plan_size >= kHeaderSize) {
    uint32_t serialization = 0;
    std::memcpy(&serialization, bytes + sizeof(kTag), sizeof(serialization));
    // A major of 0 is no TensorRT's: the bytes are not a version.
    if (serialization == 0 && bytes[kVersionOffset] != 0) {
      header.has_version = true;
      for (int i = 0; i < 4; ++i) {
        header.version[i] = bytes[kVersionOffset + i];
      }
    }
  }
  return header;
}

std::string plan_built_by(const PlanHeader& header) {
  if (!header.has_version) {
    return "an unknown TensorRT version";
  }
  return "TensorRT " + std::to_string(header.version[0]) + "." + std::to_string(header.version[1]) +
         "." + std::to_string(header.version[2]);
}

}  // namespace tte
