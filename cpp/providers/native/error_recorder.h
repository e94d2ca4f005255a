// TensorRT's IErrorRecorder for one execution context: the errors TensorRT
// reports while that context runs, kept with the context rather than in a
// thread-local channel, so a failed enqueue says what TensorRT said about
// that very call. IExecutionContext::setErrorRecorder (NvInferRuntime.h
// 11.1 :4192-4206): "The ErrorRecorder will track all errors during
// execution ... If an error recorder is not set, messages will be sent to the
// global log stream". IErrorRecorder (NvInferRuntimeBase.h 11.1 :418-624,
// 10.3 :856-1062, the same interface): reportError "returns false if
// processing can continue" (here always: the call's status carries the
// error), must not keep the desc pointer (copied), and every method must be
// thread-safe. The engine handle owns the recorders and destroys its
// contexts first.
#pragma once

#include <NvInferRuntime.h>

#include <atomic>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace tte::native {

class ContextErrorRecorder : public nvinfer1::IErrorRecorder {
 public:
  // Errors kept between two clear()s; later ones only set hasOverflowed.
  static constexpr int32_t kCapacity = 8;

  int32_t getNbErrors() const noexcept override;
  nvinfer1::ErrorCode getErrorCode(int32_t errorIdx) const noexcept override;
  ErrorDesc getErrorDesc(int32_t errorIdx) const noexcept override;
  bool hasOverflowed() const noexcept override;
  void clear() noexcept override;
  bool reportError(nvinfer1::ErrorCode val, ErrorDesc desc) noexcept override;
  RefCount incRefCount() noexcept override;
  RefCount decRefCount() noexcept override;

  // The errors since the last clear, "; "-joined ("" for none), for a
  // failed call's status.
  std::string text() const;

 private:
  mutable std::mutex mutex_;
  std::vector<std::pair<nvinfer1::ErrorCode, std::string>> errors_;
  bool overflowed_ = false;
  std::atomic<RefCount> references_{0};
};

// The message of a failed enqueueV3: what the context's recorder caught,
// else what TensorRT logged on this thread during the call, else nothing.
std::string enqueue_failure_message(const std::string& recorded, const std::string& logged);

}  // namespace tte::native
