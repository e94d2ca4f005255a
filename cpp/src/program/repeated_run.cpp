#include "program/repeated_run.h"

namespace tte {

bool RepeatedRun::record(const RepeatOffer& offer, const TteInput* inputs, size_t num_inputs,
                         const CallContext& call) {
  clear();
  inputs_.resize(num_inputs);
  for (size_t i = 0; i < num_inputs; ++i) {
    const TteInput& input = inputs[i];
    if (input.tag != TTE_VALUE_TENSOR || input.tensor == nullptr) {
      inputs_.clear();
      return false;
    }
    const DLTensor& tensor = *input.tensor;
    if (tensor.device.device_type != kDLCUDA || tensor.ndim < 0 || tensor.ndim > kMaxRank ||
        (tensor.ndim > 0 && tensor.shape == nullptr)) {
      inputs_.clear();
      return false;
    }
    Input& kept = inputs_[i];
    kept.data = static_cast<const char*>(tensor.data) + tensor.byte_offset;
    kept.device = tensor.device;
    kept.dtype = tensor.dtype;
    kept.ndim = tensor.ndim;
    kept.has_strides = tensor.strides != nullptr;
    // For a tensor, int_value carries its DLPack flags (c_api.h).
    kept.flags = static_cast<uint64_t>(input.int_value);
    for (int32_t d = 0; d < tensor.ndim; ++d) {
      kept.shape[d] = tensor.shape[d];
      kept.strides[d] = kept.has_strides ? tensor.strides[d] : 0;
    }
  }
  offer_ = offer;
  has_stream_ = call.has_stream();
  stream_ = call.stream();
  return true;
}

bool RepeatedRun::same(const Input& recorded, const DLTensor& tensor, uint64_t flags) {
  if (static_cast<const char*>(tensor.data) + tensor.byte_offset != recorded.data ||
      tensor.device.device_type != recorded.device.device_type ||
      tensor.device.device_id != recorded.device.device_id ||
      tensor.dtype.code != recorded.dtype.code || tensor.dtype.bits != recorded.dtype.bits ||
      tensor.dtype.lanes != recorded.dtype.lanes || tensor.ndim != recorded.ndim ||
      (tensor.strides != nullptr) != recorded.has_strides || flags != recorded.flags) {
    return false;
  }
  if (recorded.ndim > 0 && tensor.shape == nullptr) {
    return false;
  }
  for (int32_t d = 0; d < recorded.ndim; ++d) {
    if (tensor.shape[d] != recorded.shape[d] ||
        (recorded.has_strides && tensor.strides[d] != recorded.strides[d])) {
      return false;
    }
  }
  return true;
}

bool RepeatedRun::matches(const TteInput* inputs, size_t num_inputs,
                          const CallContext& call) const {
  if (offer_.call == nullptr || num_inputs != inputs_.size() || inputs == nullptr ||
      call.has_stream() != has_stream_ || call.stream() != stream_) {
    return false;
  }
  for (size_t i = 0; i < num_inputs; ++i) {
    const TteInput& input = inputs[i];
    if (input.tag != TTE_VALUE_TENSOR || input.tensor == nullptr ||
        !same(inputs_[i], *input.tensor, static_cast<uint64_t>(input.int_value))) {
      return false;
    }
  }
  return true;
}

void RepeatedRun::clear() {
  offer_ = RepeatOffer{};
  inputs_.clear();
}

}  // namespace tte
