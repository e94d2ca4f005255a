// Checks of a method before Module loads it, on what MethodMeta says: its
// I/O entries readable, its host arenas within the planned-memory bound, its
// device arenas on a device that can hold them.
#pragma once

#include <cstdint>
#include <string>

#include <executorch/runtime/executor/method_meta.h>

#include "common/status.h"

namespace tte {

// Before Module::load_method: every I/O entry of `meta` readable (Method
// aborts on one past its value table); host arenas within
// `max_planned_memory` bytes (0: within available_host_memory()); and
// device-planned arenas with a CUDA device, a registered DeviceAllocator and
// the free device memory to give them.
Status check_method_before_load(const executorch::runtime::MethodMeta& meta,
                                const std::string& method, uint64_t max_planned_memory);

}  // namespace tte
