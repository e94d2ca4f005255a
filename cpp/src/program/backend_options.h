// Load-time options for backends (TteBackendOption, tte-run's --option) as
// ExecuTorch's LoadBackendOptionsMap, which points into storage it does not
// own: BackendOptionsMap keeps both.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <executorch/runtime/backend/backend_options_map.h>

#include "common/status.h"
#include "torch_tensorrt_executorch/c_api.h"

namespace tte {

// A load-time option for one backend, owned.
struct BackendOptionValue {
  std::string backend;
  std::string key;
  TteOptionType type = TTE_OPTION_BOOL;
  int64_t int_value = 0;
  std::string string_value;
};

class BackendOptionsMap {
 public:
  // Checks every value against ExecuTorch's limits (key and value lengths,
  // 32-bit ints, 8 backends); a later value for the same backend and key
  // replaces an earlier one.
  Status build(const std::vector<BackendOptionValue>& values);
  const executorch::runtime::LoadBackendOptionsMap& map() const { return map_; }

 private:
  std::vector<std::vector<executorch::runtime::BackendOption>> storage_;
  std::vector<std::string> backends_;
  executorch::runtime::LoadBackendOptionsMap map_;
};

}  // namespace tte
