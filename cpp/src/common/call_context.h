// One call into this library, from where it begins to where it returns: a
// Program API call (Program::open, load_method, run, ...), or a delegate
// call the stock ExecuTorch runtime makes on its own. Everything the call
// needs besides its arguments is here, and our code passes it explicitly
// (docs/architecture.md, "One call's state"):
//   stream      the CUDA stream the caller asked for, if any
//   read_only   inputs the caller lent read-only (read_only_memory.h)
//   failure     why a call into ExecuTorch failed (executorch_failure.h)
//   delegate_records  where a method load wants its delegates' records
//   streams     CUDA streams the call borrowed, given back when it ends
//   delegate_executions, repeat_offer  what the delegates of a run did
//               (common/repeatable_call.h)
// The run's own options (outputs, allocator) stay the run's parameters.
//
// Where ExecuTorch sits between two of our frames (Method::execute calling
// BackendInterface::execute, Module::load_method calling init, ExecuTorch's
// DeviceAllocator and its log), its interfaces have no room for the
// context: CallInProgress is the one thread-local slot that carries it
// across, set by the Program API around each call into ExecuTorch
// (program/executorch_step.h) and read once on the other side.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <executorch/runtime/core/error.h>

#include "common/delegate_record.h"
#include "common/executorch_failure.h"
#include "common/read_only_memory.h"
#include "common/repeatable_call.h"
#include "common/status.h"

namespace tte {

// Streams a call borrowed (one per device at most), each given back by the
// function that lent it when the call ends. Void pointers: the common layer
// knows no CUDA types.
class BorrowedStreams {
 public:
  using GiveBack = void (*)(int device, void* stream);

  BorrowedStreams() = default;
  ~BorrowedStreams();
  BorrowedStreams(const BorrowedStreams&) = delete;
  BorrowedStreams& operator=(const BorrowedStreams&) = delete;

  // The stream borrowed for `device`, or nullptr.
  void* find(int device) const;
  void keep(int device, void* stream, GiveBack give_back);

 private:
  struct Loan {
    int device;
    void* stream;
    GiveBack give_back;
  };
  std::vector<Loan> loans_;
};

class CallContext {
 public:
  // A call on this thread: its stream is the one the caller set for the
  // thread's calls (tte_set_thread_stream), if any.
  CallContext();
  CallContext(const CallContext&) = delete;
  CallContext& operator=(const CallContext&) = delete;

  // The legacy default stream (NULL) is a legitimate choice: has_stream
  // says whether one was named.
  bool has_stream() const { return has_stream_; }
  void* stream() const { return stream_; }
  // The call names its own stream (a run's RunOptions.stream).
  void use_stream(void* stream) {
    stream_ = stream;
    has_stream_ = true;
  }

  ReadOnlyLoans read_only;
  ExecuTorchFailure failure;
  // Set by a call that loads a method, for the load: init adds one record
  // per TensorRTBackend delegate here. NULL: nothing is recorded.
  std::vector<DelegateRecord>* delegate_records = nullptr;
  BorrowedStreams streams;
  // TensorRTBackend delegate calls made during the call, and what the last
  // of them offers to repeat (nothing unless it ended with a graph launch).
  int delegate_executions = 0;
  RepeatOffer repeat_offer;

 private:
  bool has_stream_ = false;
  void* stream_ = nullptr;
};

// Keeps `failure` in the call's record and returns the ExecuTorch error
// that stands for its code. Logged at error when no call into ExecuTorch is
// open (`call` NULL, or its record closed: the stock runtime shows only the
// code), at info when one is (the caller's Status carries it).
executorch::runtime::Error report_to_executorch(CallContext* call, const Status& failure);

// The call in progress on this thread, carried across ExecuTorch's
// interfaces: set for the guard's lifetime, the previous one restored after.
class CallInProgress {
 public:
  explicit CallInProgress(CallContext& call);
  ~CallInProgress();
  CallInProgress(const CallInProgress&) = delete;
  CallInProgress& operator=(const CallInProgress&) = delete;

  // The call whose ExecuTorch frames are running on this thread, or nullptr
  // (the stock runtime called us on its own).
  static CallContext* current();

 private:
  CallContext* previous_;
};

// The stream the caller set for this thread's calls (tte_set_thread_stream):
// a setting, read when a call begins, not state of any call.
void set_thread_stream_setting(void* stream);
void clear_thread_stream_setting();
// True and *stream set (when not NULL) when a stream is set on this thread.
bool thread_stream_setting(void** stream);

}  // namespace tte
