#include "native/plan_header.h"

#include <cstring>

namespace tte::native {
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
    if (serialization == 0) {
      header.has_version = true;
      for (int i = 0; i < 4; ++i) {
        header.version[i] = bytes[kVersionOffset + i];
      }
    }
  }
  return header;
}

std::string refusal_hint(const PlanHeader& header, const std::string& library_version, bool lean) {
  if (!header.has_tag) {
    return "it is not a TensorRT plan (it does not begin with TensorRT's plan tag)";
  }
  std::string built_by = "an unknown TensorRT version";
  if (header.has_version) {
    built_by = "TensorRT " + std::to_string(header.version[0]) + "." +
               std::to_string(header.version[1]) + "." + std::to_string(header.version[2]);
  }
  if (lean) {
    return "the plan says it was built by " + built_by + "; the lean runtime (" + library_version +
           ") loads only version-compatible plans (built with the VERSION_COMPATIBLE flag) of its "
           "own or an older TensorRT, and refuses damaged or truncated ones";
  }
  return "the plan says it was built by " + built_by + "; TensorRT " + library_version +
         " loads plans of its own version built for this GPU, or version-compatible ones, and "
         "refuses damaged or truncated ones";
}

}  // namespace tte::native
