// What TensorRTBackend accepts at load time: runtime specs (load options,
// which win) and compile specs. Options of the name: "provider" (string),
// "cuda_graphs" (bool), "weight_streaming_budget" (int or decimal string,
// bytes; also a compile spec).
#pragma once

#include <cstdint>
#include <string>

#include <executorch/runtime/backend/interface.h>

#include "common/status.h"

namespace tte {

struct LoadOptions {
  std::string provider;  // "" = the first that accepts
  bool cuda_graphs = false;
  bool has_weight_streaming_budget = false;
  int64_t weight_streaming_budget = 0;
};

// Unknown load options are logged and ignored; malformed ones refused.
Status read_load_options(
    const executorch::runtime::BackendInitContext& context,
    executorch::runtime::ArrayRef<executorch::runtime::CompileSpec> compile_specs,
    LoadOptions* out);

}  // namespace tte
