#include "native/plan_header.h"

#include "common/tensorrt_install.h"

namespace tte::native {

std::string newer_plan_refusal(const PlanHeader& header, const TensorRtVersion& library) {
  if (!header.has_version || header.version[0] != library.major ||
      header.version[1] <= library.minor) {
    return "";
  }
  return "the plan was built by " + plan_built_by(header) + ", newer than the TensorRT " +
         library.text() + " found: no TensorRT reads a plan of a later release; " +
         tensorrt_install_hint(header.version[0], header.version[1], true);
}

std::string refusal_hint(const PlanHeader& header, const std::string& library_version, bool lean) {
  if (!header.has_tag) {
    return "it is not a TensorRT plan (it does not begin with TensorRT's plan tag)";
  }
  const std::string built_by = plan_built_by(header);
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
