// One TensorRTBackend delegate: the handle `init` returns and `execute` runs
// (the counterpart of XNNPACK's XNNExecutor). It owns the provider's engine
// and its I/O table, and on each call checks the arguments, picks the
// profile, sets shapes, binds addresses (staging what the engine cannot
// address), enqueues on the caller's stream or its own, and returns with the
// work finished. Calls on one delegate are serialized by its own lock;
// different delegates run in parallel. A call that ended by launching a CUDA
// graph on memory the engine uses where it lies offers the Program API to
// repeat it (common/repeatable_call.h).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include <executorch/runtime/backend/interface.h>

#include "backend/call_checks.h"
#include "backend/engine_io.h"
#include "backend/engine_loader.h"
#include "backend/scratch_arenas.h"
#include "backend/tensor_binding.h"
#include "common/call_context.h"
#include "common/repeatable_call.h"
#include "common/status.h"
#include "cuda/cuda_graph_cache.h"

namespace tte {

class TensorRTDelegate final : public RepeatableCall {
 public:
  // Parses the blob, loads the engine through a provider, reads its I/O
  // table and frees `processed` (the engine keeps its own copy). `call` is
  // the load in progress (its delegate records), NULL under the stock
  // runtime.
  static Status create(
      CallContext* call, executorch::runtime::BackendInitContext& context,
      executorch::runtime::FreeableBuffer* processed,
      executorch::runtime::ArrayRef<executorch::runtime::CompileSpec> compile_specs,
      std::unique_ptr<TensorRTDelegate>* out);
  ~TensorRTDelegate();
  TensorRTDelegate(const TensorRTDelegate&) = delete;
  TensorRTDelegate& operator=(const TensorRTDelegate&) = delete;

  // One call: on `call`'s stream (else a stream of the call's or the
  // delegate's own), with `call`'s read-only loans.
  Status execute(CallContext& call, DelegateArgs args);

  Status repeat(uint64_t ticket, bool* repeated) override;

 private:
  TensorRTDelegate() = default;
  Status execute_locked(CallContext& call, DelegateArgs args);
  Status set_profile_and_shapes(DelegateArgs args, int32_t profile, void* stream);
  Status resize_outputs(DelegateArgs args);
  // Providers with the batched entry (TteEngineProvider.execute): shapes in
  // one call, and only when they changed; outputs resized from the shapes
  // the provider reported then.
  bool batched() const { return engine_.provider->abi().execute != nullptr; }
  Status set_shapes_batched(DelegateArgs args, int32_t profile, void* stream);
  Status enqueue(const std::vector<Binding>& bindings, void* stream, ScratchArenas::Arena* arena);
  // Output `o` takes the shape the engine reported before the run: known
  // dims are fitted; a data-dependent output gets its planned upper bound.
  Status fit_output(size_t o, const int64_t* dims, int32_t rank, DelegateArgs args);
  // Data-dependent outputs after the run: the engine's shape and elements,
  // copied into the bound memory when the provider had to use its own, and
  // the tensor resized; a result past the planned bound fails the call.
  Status collect_data_dependent(DelegateArgs args, std::vector<Binding>& bindings, void* stream);
  Status own_stream(void** stream);
  // The stream to run on when the caller gave none (or the legacy default
  // stream): with shared scratch the call's (scratch_arenas.h,
  // call_stream), so a call's delegates share one arena; else the
  // delegate's own.
  Status stream_of_our_own(CallContext& call, void** stream);
  // The stream to run on for a caller that gave cudaStreamPerThread: one of
  // stream_of_our_own's, ordered after the caller's work.
  Status instead_of_per_thread_stream(CallContext& call, void** stream);
  // Shared scratch (engine loaded with user-managed memory): each profile's
  // size, read at load; before an enqueue, with the arena locked, the arena
  // grown to the profile's size and given to the engine if it changed.
  Status read_scratch_sizes();
  Status give_scratch(ScratchArenas::Arena* arena);

  std::mutex mutex_;
  LoadedEngine engine_;
  EngineIo io_;
  std::unique_ptr<TensorBinder> binder_;
  int32_t current_profile_ = -1;       // -1: not selected yet
  std::vector<int64_t> input_shapes_;  // this call's, all inputs in a row
  // This call's engine addresses, CUDA-graph shape set (context, profile,
  // input dims) and arguments, kept so that a replay allocates nothing.
  std::vector<void*> addresses_;
  std::vector<int64_t> graph_key_;
  // This call's engine addresses (TensorBinder::bind), kept likewise.
  std::vector<Binding> bindings_;
  void* stream_ = nullptr;            // the delegate's own stream, created on first use
  void* per_thread_ready_ = nullptr;  // cudaEvent_t: the caller's per-thread stream work, recorded
  std::unique_ptr<CudaGraphCache> graphs_;
  // The batched entry's arrays, filled once at the first call, and whether
  // the engine holds this call's shapes (false after any failed call).
  struct BatchArrays {
    std::vector<int32_t> input_indices, input_ranks, output_indices, tensor_indices;
    std::vector<int32_t> output_ranks;
    std::vector<int64_t> output_dims;  // TTE_MAX_RANK per output
    std::vector<int64_t> next_shapes;
  } batch_;
  bool shapes_set_ = false;
  // Per output: the shape ExecuTorch planned (read at the first call, when
  // the tensor still has it: a DYNAMIC_BOUND tensor's upper bound), and
  // whether the engine reports its shape only after this call's run.
  std::vector<std::vector<executorch::aten::SizesType>> output_bounds_;
  std::vector<char> data_dependent_;
  bool any_data_dependent_ = false;
  bool uses_arenas_ = false;
  // Some input's profile range is not a single shape (read at load).
  bool dynamic_shapes_ = false;
  // Calls so far: an offer to repeat a call holds the count at its end, and
  // stands while no later call (or failed repeat) has changed it.
  uint64_t executions_ = 0;
  std::vector<int64_t> scratch_sizes_;  // [profile]
  uint64_t scratch_generation_ = 0;     // of the arena memory the engine has; 0: none
};

}  // namespace tte
