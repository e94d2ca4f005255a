// Why TensorRT may have refused a plan, from what its header says
// (blob/tensorrt_plan_header.h), for the provider's messages.
#pragma once

#include <string>

#include "blob/tensorrt_plan_header.h"

namespace tte::native {

// Why TensorRT may have refused a plan with this header, in one clause, for
// the library of `library_version` (the lean runtime when `lean`).
std::string refusal_hint(const PlanHeader& header, const std::string& library_version, bool lean);

}  // namespace tte::native
