#include "native/error_recorder.h"

namespace tte::native {

int32_t ContextErrorRecorder::getNbErrors() const noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int32_t>(errors_.size());
}

nvinfer1::ErrorCode ContextErrorRecorder::getErrorCode(int32_t errorIdx) const noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  if (errorIdx < 0 || errorIdx >= static_cast<int32_t>(errors_.size())) {
    return nvinfer1::ErrorCode::kINVALID_ARGUMENT;
  }
  return errors_[static_cast<size_t>(errorIdx)].first;
}

nvinfer1::IErrorRecorder::ErrorDesc ContextErrorRecorder::getErrorDesc(
    int32_t errorIdx) const noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  if (errorIdx < 0 || errorIdx >= static_cast<int32_t>(errors_.size())) {
    return "error index out of range";
  }
  return errors_[static_cast<size_t>(errorIdx)].second.c_str();
}

bool ContextErrorRecorder::hasOverflowed() const noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  return overflowed_;
}

void ContextErrorRecorder::clear() noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  errors_.clear();
  overflowed_ = false;
}

bool ContextErrorRecorder::reportError(nvinfer1::ErrorCode val, ErrorDesc desc) noexcept {
  try {
    std::lock_guard<std::mutex> lock(mutex_);
    if (static_cast<int32_t>(errors_.size()) >= kCapacity) {
      overflowed_ = true;
    } else {
      errors_.emplace_back(val, desc != nullptr ? desc : "");
    }
  } catch (...) {
    // Out of memory while recording: the call still fails, with less text.
  }
  // Not fatal: the failing call returns its status, which carries the text.
  return false;
}

nvinfer1::IErrorRecorder::RefCount ContextErrorRecorder::incRefCount() noexcept {
  return ++references_;
}

nvinfer1::IErrorRecorder::RefCount ContextErrorRecorder::decRefCount() noexcept {
  return --references_;
}

std::string ContextErrorRecorder::text() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string joined;
  for (const auto& error : errors_) {
    joined += (joined.empty() ? "" : "; ") + error.second;
  }
  if (overflowed_) {
    joined += "; (more errors not kept)";
  }
  return joined;
}

std::string enqueue_failure_message(const std::string& recorded, const std::string& logged) {
  if (!recorded.empty()) {
    return " (TensorRT: " + recorded + ")";
  }
  return logged.empty() ? std::string() : " (TensorRT: " + logged + ")";
}

}  // namespace tte::native
