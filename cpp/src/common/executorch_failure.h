// The reason behind a failure inside ExecuTorch, kept by the call it
// happened in (CallContext::failure, call_context.h).
// ExecuTorch's interfaces (BackendInterface::init and execute,
// DeviceAllocator) return a bare Error, and Method and Module pass only that
// code on. Two things say why: the Status this library handed ExecuTorch
// (report_to_executorch, call_context.h), and the error lines ExecuTorch
// itself logged (routed here by executorch_log.cpp). Both wait in the call's
// record for the Program API, which opens the record around each call into
// ExecuTorch (ExecuTorchStep) and reads it when the call fails. This is the
// library's only channel for a reason across an ExecuTorch interface.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "common/status.h"

namespace tte {

class ExecuTorchFailure {
 public:
  // Opened around one call into ExecuTorch: the outermost open clears what
  // the record kept. Opens nest; an inner one keeps the outer one's record.
  void open();
  void close();
  bool is_open() const { return depth_ > 0; }

  // The Status this library reported to ExecuTorch; the last one wins.
  void keep(const Status& failure) { reported_ = failure; }
  // An error line ExecuTorch logged (without its prefix), kept while the
  // record is open: the first few lines, each cut short, no repeats.
  // Returns whether the record is open (the line is then the caller's
  // Status's to show, not the log's).
  bool note_line(const char* text, size_t length);

  // Ok when nothing was reported.
  const Status& reported() const { return reported_; }
  // ExecuTorch's error lines, oldest first.
  const std::vector<std::string>& log_lines() const { return lines_; }

 private:
  int depth_ = 0;
  Status reported_;
  std::vector<std::string> lines_;
};

}  // namespace tte
