// Scratch (activation) memory shared by delegates (docs/architecture.md,
// "Shared scratch memory"). Engines loaded with user-managed device memory
// get no scratch of their own; before each enqueue the delegate borrows the
// arena of its (device, CUDA stream) and gives the engine that arena's
// memory. Work enqueued on one stream runs in order, so every engine
// enqueued on that stream can use the same memory: a method's delegates,
// which run one after another, need the largest one's scratch, not the sum.
//
// An arena only grows. Before its old memory is freed the stream is
// synchronized: engines enqueued earlier on that stream may still be using
// it (their delegates released the arena lock right after enqueue). Growth
// is rare (once per larger profile), so a synchronization then costs less
// than an event recorded after every use.
//
// Bounded: an arena is "busy" from borrow to give_back (the delegate gives
// it back after synchronizing its stream), and only idle arenas are freed:
// the least recently used beyond kMaxArenas, and all of them when the last
// delegate that may use them goes away. An idle arena has no work in flight.
// Host providers (device -1, no stream) have one arena of host memory.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "common/call_context.h"
#include "common/status.h"

namespace tte {

class ScratchArenas {
 public:
  struct Arena {
    std::mutex mutex;        // held around set_device_memory + enqueue
    int device = -1;         // -1: host memory
    void* stream = nullptr;  // host arenas: NULL
    // Guarded by `mutex`. `generation` is unique to one block of memory in
    // the process (0: none yet), so a delegate sets it on its engine only
    // when it changed since that engine last got it.
    void* memory = nullptr;
    int64_t bytes = 0;
    uint64_t generation = 0;
    // Guarded by the registry's mutex.
    int busy = 0;
    uint64_t last_use = 0;
  };

  // Arenas kept at most while idle (each stream in use keeps its own).
  static constexpr size_t kMaxArenas = 16;

  static ScratchArenas& instance();

  // A delegate that may borrow arenas counts as a user from load to
  // destruction; arenas are freed when the last user goes.
  void add_user();
  void remove_user();

  // The arena of (device, stream), created empty on first use, busy until
  // give_back. Never fails (memory is allocated by reserve). Never given
  // cudaStreamPerThread (one handle for a stream of each thread's own): the
  // delegate runs on a stream of the call's instead.
  Arena* borrow(int device, void* stream);
  void give_back(Arena* arena);

  // The pool of call streams (call_stream): an idle stream of `device`, or
  // a new one; and back into the pool.
  Status take_stream(int device, void** stream);
  void return_stream(int device, void* stream);
  // Idle pooled streams (for tests).
  size_t idle_stream_count();

  // With arena->mutex held: at least `bytes` of memory, 256-byte aligned.
  // Grows (synchronizing the stream before the old memory is freed).
  Status reserve(Arena* arena, int64_t bytes);

  // For tests and benchmarks.
  size_t arena_count();
  int64_t total_bytes();
  // The largest total_bytes since the last reset_peak.
  int64_t peak_bytes();
  void reset_peak();

 private:
  ScratchArenas() = default;
  void free_memory(Arena* arena);  // arena idle or locked, registry mutex held or not
  void evict_idle_locked(size_t keep);
  // Frees the idle arenas of `stream`, about to be destroyed.
  void release_stream_locked(int device, const void* stream);
  // Synchronizes and destroys `stream` with its idle arenas.
  void destroy_stream_locked(int device, void* stream);

  std::mutex mutex_;
  std::vector<std::unique_ptr<Arena>> arenas_;
  struct IdleStream {
    int device;
    void* stream;
  };
  std::vector<IdleStream> idle_streams_;  // most recently returned last
  int users_ = 0;
  uint64_t clock_ = 0;
  std::mutex bytes_mutex_;
  int64_t total_bytes_ = 0;
  int64_t peak_bytes_ = 0;
};

// Arena borrowed for one delegate call, given back when this goes out of
// scope (after the delegate synchronized its stream).
class ScratchLease {
 public:
  ScratchLease() = default;
  ~ScratchLease() { reset(); }
  ScratchLease(const ScratchLease&) = delete;
  ScratchLease& operator=(const ScratchLease&) = delete;
  void borrow(int device, void* stream) {
    reset();
    arena_ = ScratchArenas::instance().borrow(device, stream);
  }
  void reset() {
    if (arena_ != nullptr) {
      ScratchArenas::instance().give_back(arena_);
      arena_ = nullptr;
    }
  }
  ScratchArenas::Arena* get() const { return arena_; }

 private:
  ScratchArenas::Arena* arena_ = nullptr;
};

// The stream of `call` on `device`, for delegates with shared scratch
// memory whose caller named no stream (blocking, as a delegate's own
// stream): borrowed from a pool when the call first needs it and given back
// when the call ends, after its delegates synchronized it. A call's
// delegates then share one stream, hence one arena; calls one after another
// reuse the same stream and arena, whatever their thread, and concurrent
// calls get streams of their own. Idle streams beyond kMaxArenas per device
// are destroyed with their arenas, and all of them with the last delegate.
Status call_stream(CallContext& call, int device, void** stream);

}  // namespace tte
