// A run that repeats the method's last run instead of executing it. With
// CUDA graphs on, a caller that runs a method again on the same device
// tensors (a serving loop that reuses its buffers) would have every layer
// check, set and bind the same arguments only for the delegate to launch
// the same graph: ExecuTorch's set_input and execute, the delegate's
// checks, shapes and bindings, the graph cache's lookup. When the method is
// that one delegate call and the last run ended with the delegate offering
// to repeat its graph launch (common/repeatable_call.h), a run whose inputs
// are exactly the last run's launches the graph again and collects the
// outputs, which are where the last run left them.
//
// What "exactly" means, and why it is enough: every input is a CUDA tensor
// the method takes where it lies (not planned memory it copies into), with
// the same data address, device, dtype, shape, strides and DLPack flags, so
// ExecuTorch's inputs, the delegate's shapes, profile and bindings, and the
// graph's addresses would all come out as they are; the run asks for views
// (owned outputs get new memory each run), names the same stream (the
// delegate would pick the same one), and records no ETDump. Any other run
// takes the full path and makes a new record, if it qualifies.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/call_context.h"
#include "common/repeatable_call.h"
#include "torch_tensorrt_executorch/c_api.h"
#include "torch_tensorrt_executorch/dlpack.h"

namespace tte {

class RepeatedRun {
 public:
  // The most dims an input may have to be recorded.
  static constexpr int32_t kMaxRank = 8;

  bool offered() const { return offer_.call != nullptr; }
  const RepeatOffer& offer() const { return offer_; }

  // Keeps `offer` with this run's inputs and stream; false (nothing kept)
  // when an input is not a CUDA tensor of rank kMaxRank or less.
  bool record(const RepeatOffer& offer, const TteInput* inputs, size_t num_inputs,
              const CallContext& call);
  // Whether a run of `inputs` on `call`'s stream is the recorded one again.
  bool matches(const TteInput* inputs, size_t num_inputs, const CallContext& call) const;
  void clear();

 private:
  struct Input {
    const char* data = nullptr;  // data + byte_offset
    DLDevice device{};
    DLDataType dtype{};
    int32_t ndim = 0;
    bool has_strides = false;
    uint64_t flags = 0;
    int64_t shape[kMaxRank] = {};
    int64_t strides[kMaxRank] = {};
  };
  static bool same(const Input& recorded, const DLTensor& tensor, uint64_t flags);

  RepeatOffer offer_;
  bool has_stream_ = false;
  void* stream_ = nullptr;
  std::vector<Input> inputs_;
};

}  // namespace tte
