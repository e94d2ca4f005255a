// A delegate call that a run may repeat as it was, without ExecuTorch: the
// delegate ended it by launching a CUDA graph (load option cuda_graphs), so
// launching that graph again on the same stream does all the call would do
// if made again with the same arguments at the same addresses. The Program
// API takes the offer only for a method whose one instruction is that call,
// when every input is the same device memory as in the run that got the
// offer (program/repeated_run.h). The common layer knows no CUDA types.
#pragma once

#include <cstdint>

#include "common/status.h"

namespace tte {

class RepeatableCall {
 public:
  // Launches the graph of the call `ticket` was offered for and waits for
  // it, when nothing of the delegate changed since that call (its next call
  // takes every offer back); *repeated says whether it did. A launch that
  // fails is an error, as in a call.
  virtual Status repeat(uint64_t ticket, bool* repeated) = 0;

 protected:
  ~RepeatableCall() = default;
};

// What a delegate call offers (call NULL: nothing).
struct RepeatOffer {
  RepeatableCall* call = nullptr;
  uint64_t ticket = 0;
};

}  // namespace tte
