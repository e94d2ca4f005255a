// The first bytes of plan formats that are not TensorRT's, which providers
// tell apart before parsing anything: the test-engine format
// (docs/test-engine-format.md). The test providers parse such plans; the
// native provider refuses them without starting TensorRT. Shared by both, so
// production code never includes the test providers' headers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace tte {

inline constexpr char kTestEnginePlanMagic[] = "TTE-TEST-ENGINE\n";
inline constexpr size_t kTestEnginePlanMagicSize = sizeof(kTestEnginePlanMagic) - 1;  // 16

// True when `plan` starts with the test-engine magic: a test plan, valid or not.
inline bool is_test_engine_plan(const void* plan, uint64_t size) {
  return plan != nullptr && size >= kTestEnginePlanMagicSize &&
         std::memcmp(plan, kTestEnginePlanMagic, kTestEnginePlanMagicSize) == 0;
}

}  // namespace tte
