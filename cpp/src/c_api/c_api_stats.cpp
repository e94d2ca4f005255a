// The runtime-statistics group of c_api.h, over RuntimeStats.
#include <cstddef>
#include <cstring>

#include "backend/engine_loader.h"
#include "backend/scratch_arenas.h"
#include "c_api/c_boundary.h"
#include "common/runtime_stats.h"
#include "torch_tensorrt_executorch/c_api.h"

namespace {

void copy_runtime_stats(TteRuntimeStats* out) {
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
  tte::ScratchArenas& arenas = tte::ScratchArenas::instance();
  full.scratch_arenas = arenas.arena_count();
  full.scratch_arena_bytes = static_cast<uint64_t>(arenas.total_bytes());
  full.scratch_arena_peak_bytes = static_cast<uint64_t>(arenas.peak_bytes());
  full.shared_engines = tte::shared_engine_count();
  full.shared_engine_reuses = s.shared_engine_reuses.load();
  full.graph_io_copies = s.graph_io_copies.load();
  full.graph_io_bytes = s.graph_io_bytes.load();
  full.graph_uncapturable = s.graph_uncapturable.load();
  full.plan_digests = s.plan_digests.load();
  full.plan_digest_bytes = s.plan_digest_bytes.load();
  full.graph_updates = s.graph_updates.load();
  full.mapped_copies = s.mapped_copies.load();
  full.mapped_bytes = s.mapped_bytes.load();
  full.run_repeats = s.run_repeats.load();
  // Copy only what the caller's (possibly older) struct has room for.
  const uint32_t caller_size = out->struct_size;
  const size_t n = caller_size < sizeof(full) ? caller_size : sizeof(full);
  std::memcpy(out, &full, n);
  out->struct_size = caller_size;
}

}  // namespace

extern "C" {

TTE_API void tte_get_runtime_stats(TteRuntimeStats* out) {
  tte::c_boundary::void_call("tte_get_runtime_stats", [out] { copy_runtime_stats(out); });
}

TTE_API void tte_reset_runtime_stats(void) {
  tte::c_boundary::void_call("tte_reset_runtime_stats", [] {
    tte::RuntimeStats::instance().reset();
    tte::ScratchArenas::instance().reset_peak();
  });
}

}  // extern "C"
