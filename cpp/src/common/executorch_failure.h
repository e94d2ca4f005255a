// The reason behind a failure inside ExecuTorch, kept on the calling thread.
// ExecuTorch's interfaces (BackendInterface::init and execute,
// DeviceAllocator) return a bare Error, and Method and Module pass only that
// code on. Two things say why: the Status this library handed ExecuTorch
// (report_to_executorch), and the error lines ExecuTorch itself logged
// (routed here by executorch_log.cpp). Both wait here, per thread, for the
// Program API, which opens an ExecuTorchCall around each call into ExecuTorch
// and reads them when the call fails. This is the library's only channel for
// a reason across an ExecuTorch interface.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <executorch/runtime/core/error.h>

#include "common/status.h"

namespace tte {

// Keeps `failure` for this thread and returns the ExecuTorch error that
// stands for its code. Logged at error outside an ExecuTorchCall (the stock
// runtime shows only the code), at info inside one (the caller's Status
// carries it).
executorch::runtime::Error report_to_executorch(const Status& failure);

// An error line ExecuTorch logged on this thread (without its prefix). Kept
// while an ExecuTorchCall is open: the first few lines, each cut short.
// Returns whether it was kept.
bool note_executorch_error_line(const char* text, size_t length);

// Whether an ExecuTorchCall is open on this thread.
bool in_executorch_call();

// Opened by the Program API around one call into ExecuTorch (load, load a
// method, set an input, execute): clears what the thread kept, keeps what
// fails until it closes. Calls on one thread do not nest; an inner one keeps
// the outer one's record intact.
class ExecuTorchCall {
 public:
  ExecuTorchCall();
  ~ExecuTorchCall();
  ExecuTorchCall(const ExecuTorchCall&) = delete;
  ExecuTorchCall& operator=(const ExecuTorchCall&) = delete;

  // The last Status this library reported to ExecuTorch during the call; Ok
  // when none.
  const Status& reported() const;
  // ExecuTorch's error lines during the call, oldest first.
  const std::vector<std::string>& log_lines() const;

 private:
  bool outer_;
};

}  // namespace tte
