// One call of the Program API into ExecuTorch, and the Status of its
// failure. ExecuTorch returns a bare Error; the Status says why from, in
// order: the reason this library gave ExecuTorch (a delegate, the CUDA
// allocator), the error lines ExecuTorch logged during the call, and for
// every Error at every step a sentence of what it means there and what to
// do. No failure leaves the Program API as a bare code.
#pragma once

#include <string>

#include <executorch/runtime/core/error.h>

#include "common/call_context.h"
#include "common/status.h"

namespace tte {

enum class ProgramStep {
  kOpen,        // Module::load: the .pte (and .ptd) read and verified
  kMethodMeta,  // Program::method_meta: a method's description read
  kLoadMethod,  // Module::load_method: planned memory, kernels, delegates
  kSetInput,    // Method::set_input, or resizing a planned input
  kSetOutput,   // Method::set_output_data_ptr: memory for an unplanned output
  kExecute,     // Method::execute
};

// Open around the call into ExecuTorch itself: `call` is the call in
// progress on this thread meanwhile (the delegates, the CUDA allocator and
// ExecuTorch's log find it there), and its failure record is open.
class ExecuTorchStep {
 public:
  // Routes ExecuTorch's log here again if something replaced the route,
  // and opens `call`'s failure record.
  ExecuTorchStep(CallContext& call, ProgramStep step);
  ~ExecuTorchStep();
  ExecuTorchStep(const ExecuTorchStep&) = delete;
  ExecuTorchStep& operator=(const ExecuTorchStep&) = delete;

  // `what` (e.g. "cannot load method 'forward'") followed by the reason.
  // `source` names whose reason a reported Status is (e.g. "TensorRTBackend
  // delegate: "); `has_data_files` adds the .ptd to what may be at fault.
  Status failed(executorch::runtime::Error error, const std::string& what,
                const std::string& source = "", bool has_data_files = false) const;

 private:
  ProgramStep step_;
  CallContext& call_;
  CallInProgress in_progress_;
};

// A MethodMeta accessor that failed outside an ExecuTorchStep (ExecuTorch
// logs nothing for these): `what` and the kMethodMeta sentence.
Status damaged_method_meta(executorch::runtime::Error error, const std::string& what);

// What `error` means at `step` and what to do: one sentence, no code.
std::string explain_executorch_error(ProgramStep step, executorch::runtime::Error error,
                                     bool has_data_files);

}  // namespace tte
