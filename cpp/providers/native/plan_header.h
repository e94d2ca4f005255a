// Why TensorRT may have refused a plan, from what its header says
// (blob/tensorrt_plan_header.h), for the provider's messages.
#pragma once

#include <string>

#include "blob/tensorrt_plan_header.h"
#include "native/tensorrt_library.h"

namespace tte::native {

// Why the loaded library (of version `library`) cannot load a plan of this
// header because the plan is newer ("" when it is not): TensorRT reads no
// plan of a later minor than its own, version-compatible or not (those run
// on the same or later releases of their major). Decided from the loaded
// library's own version (getInferLibVersion), before TensorRT sees the plan.
std::string newer_plan_refusal(const PlanHeader& header, const TensorRtVersion& library);

// Why TensorRT may have refused a plan with this header, in one clause, for
// the library of `library_version` (the lean runtime when `lean`).
std::string refusal_hint(const PlanHeader& header, const std::string& library_version, bool lean);

}  // namespace tte::native
