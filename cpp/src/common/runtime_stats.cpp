#include "common/runtime_stats.h"

#include <cstddef>
#include <cstring>
#include <initializer_list>

#include "torch_tensorrt_executorch/c_api.h"

namespace tte {

RuntimeStats& RuntimeStats::instance() {
  static RuntimeStats stats;
  return stats;
}

void RuntimeStats::record_copy(CopyKind kind, uint64_t bytes) {
  constexpr auto relaxed = std::memory_order_relaxed;
  switch (kind) {
    case CopyKind::HostToDevice:
      h2d_copies.fetch_add(1, relaxed);
      h2d_bytes.fetch_add(bytes, relaxed);
      break;
    case CopyKind::DeviceToHost:
      d2h_copies.fetch_add(1, relaxed);
      d2h_bytes.fetch_add(bytes, relaxed);
      break;
    case CopyKind::DeviceToDevice:
      d2d_copies.fetch_add(1, relaxed);
      d2d_bytes.fetch_add(bytes, relaxed);
      break;
  }
}

void RuntimeStats::reset() {
  for (auto* counter : {&h2d_copies, &h2d_bytes, &d2h_copies, &d2h_bytes, &d2d_copies,
                        &d2d_bytes, &enqueues, &graph_captures, &graph_replays,
                        &graph_fallbacks}) {
    counter->store(0, std::memory_order_relaxed);
  }
}

}  // namespace tte

extern "C" {

TTE_API void tte_get_runtime_stats(TteRuntimeStats* out) {
  if (out == nullptr || out->struct_size < offsetof(TteRuntimeStats, h2d_copies)) {
    return;
  }
  const auto& s = tte::RuntimeStats::instance();
  TteRuntimeStats full{};
  full.struct_size = sizeof(TteRuntimeStats);
  full.h2d_copies = s.h2d_copies.load();
  full.h2d_bytes = s.h2d_bytes.load();
  full.d2h_copies = s.d2h_copies.load();
  full.d2h_bytes = s.d2h_bytes.load();
  full.d2d_copies = s.d2d_copies.load();
  full.d2d_bytes = s.d2d_bytes.load();
  full.enqueues = s.enqueues.load();
  full.graph_captures = s.graph_captures.load();
  full.graph_replays = s.graph_replays.load();
  full.graph_fallbacks = s.graph_fallbacks.load();
  // Copy only what the caller's (possibly older) struct has room for.
  const uint32_t caller_size = out->struct_size;
  const size_t n = caller_size < sizeof(full) ? caller_size : sizeof(full);
  std::memcpy(out, &full, n);
  out->struct_size = caller_size;
}

TTE_API void tte_reset_runtime_stats(void) { tte::RuntimeStats::instance().reset(); }

}  // extern "C"
