#include "common/call_context.h"

#include "common/et_status.h"
#include "common/logging.h"

namespace tte {
namespace {

// The library's one thread-local record of calls: the call in progress
// (CallInProgress), and the stream setting a caller made for the thread
// (tte_set_thread_stream), which a call copies when it begins. A set flag
// rather than a non-null stream: the legacy default stream is NULL.
struct ThisThread {
  CallContext* call = nullptr;
  bool has_stream = false;
  void* stream = nullptr;
};

thread_local ThisThread t_this_thread;

}  // namespace

BorrowedStreams::~BorrowedStreams() {
  for (const Loan& loan : loans_) {
    loan.give_back(loan.device, loan.stream);
  }
}

void* BorrowedStreams::find(int device) const {
  for (const Loan& loan : loans_) {
    if (loan.device == device) {
      return loan.stream;
    }
  }
  return nullptr;
}

void BorrowedStreams::keep(int device, void* stream, GiveBack give_back) {
  loans_.push_back(Loan{device, stream, give_back});
}

CallContext::CallContext() : has_stream_(t_this_thread.has_stream), stream_(t_this_thread.stream) {}

executorch::runtime::Error report_to_executorch(CallContext* call, const Status& failure) {
  if (failure.ok()) {
    return executorch::runtime::Error::Ok;
  }
  if (call != nullptr && call->failure.is_open()) {
    TTE_LOG(INFO, "%s", failure.message().c_str());
    call->failure.keep(failure);
  } else {
    TTE_LOG(ERROR, "%s", failure.message().c_str());
  }
  return to_et_error(failure.code());
}

CallInProgress::CallInProgress(CallContext& call) : previous_(t_this_thread.call) {
  t_this_thread.call = &call;
}

CallInProgress::~CallInProgress() { t_this_thread.call = previous_; }

CallContext* CallInProgress::current() { return t_this_thread.call; }

void set_thread_stream_setting(void* stream) {
  t_this_thread.stream = stream;
  t_this_thread.has_stream = true;
}

void clear_thread_stream_setting() {
  t_this_thread.stream = nullptr;
  t_this_thread.has_stream = false;
}

bool thread_stream_setting(void** stream) {
  if (t_this_thread.has_stream && stream != nullptr) {
    *stream = t_this_thread.stream;
  }
  return t_this_thread.has_stream;
}

}  // namespace tte
