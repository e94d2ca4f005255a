#include "common/runtime_stats.h"

#include <initializer_list>

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
    case CopyKind::Mapped:
      mapped_copies.fetch_add(1, relaxed);
      mapped_bytes.fetch_add(bytes, relaxed);
      break;
  }
}

void RuntimeStats::reset() {
  for (auto* counter : {&h2d_copies,
                        &h2d_bytes,
                        &d2h_copies,
                        &d2h_bytes,
                        &d2d_copies,
                        &d2d_bytes,
                        &enqueues,
                        &graph_captures,
                        &graph_replays,
                        &graph_fallbacks,
                        &shared_engine_reuses,
                        &graph_io_copies,
                        &graph_io_bytes,
                        &graph_uncapturable,
                        &plan_digests,
                        &graph_updates,
                        &plan_digest_bytes,
                        &mapped_copies,
                        &mapped_bytes,
                        &run_repeats}) {
    counter->store(0, std::memory_order_relaxed);
  }
}

}  // namespace tte
