// The weight-streaming budget an engine is given at load (NvInferRuntime.h:
// 3627-3745), set before any execution context exists: a requested budget
// (load option, else compile spec) clamped to the streamable size; without
// one, TensorRT's own default is left in place (">= getStreamableWeightsSize
// (default): Disables weight streaming", 11.1 :3648, 10.3 :3301): a user who
// wants weights streamed asks for a budget. A budget for an engine without
// streamable weights is logged and ignored. A template over the engine type, so that it compiles
// against headers that lack the V2 calls and is tested with a stand-in
// engine (cpp/tests/test_native_weight_streaming.cpp); the Python provider
// follows the same rules (tensorrt_python.py, _apply_weight_streaming).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include "common/status.h"
#include "native/native_tensorrt_provider.h"
#include "native/tensorrt_logger.h"

namespace tte::native {

struct WeightStreamingRequest {
  bool has_budget = false;
  int64_t budget = 0;
};

// Older TensorRT 10 releases lack the V2 weight-streaming calls; detected
// rather than tied to version numbers.
template <typename Engine, typename = void>
struct HasWeightStreamingV2 : std::false_type {};
template <typename Engine>
struct HasWeightStreamingV2<
    Engine, std::void_t<decltype(std::declval<Engine&>().setWeightStreamingBudgetV2(int64_t{}))>>
    : std::true_type {};

// Sets `*streaming` when weights stay in host memory and stream in.
template <typename Engine>
Status apply_budget(Engine& engine, const WeightStreamingRequest& request,
                    const ProviderEnvironment& environment, bool* streaming) {
  *streaming = false;
  if (request.has_budget && request.budget < 0) {
    return Status(
        TTE_ERROR_INVALID_ARGUMENT,
        "weight_streaming_budget must be a byte count >= 0, got " + std::to_string(request.budget));
  }
  if constexpr (!HasWeightStreamingV2<Engine>::value) {
    if (request.has_budget) {
      TTE_NATIVE_LOG(environment, WARNING,
                     "weight_streaming_budget ignored: the TensorRT %s headers this provider was "
                     "built with have no setWeightStreamingBudgetV2",
                     tensorrt_header_version());
    }
    return Status::Ok();
  } else {
    const int64_t streamable = engine.getStreamableWeightsSize();
    if (streamable <= 0) {
      if (request.has_budget) {
        TTE_NATIVE_LOG(environment, WARNING,
                       "weight_streaming_budget of %lld bytes ignored: the engine has no "
                       "streamable weights (build it with weight streaming enabled); all its "
                       "weights stay on the device",
                       static_cast<long long>(request.budget));
      }
      return Status::Ok();
    }
    if (request.has_budget) {
      // TensorRT caps a budget above the streamable size itself; clamping
      // here keeps the logged figure true.
      const int64_t budget = std::min(request.budget, streamable);
      const TensorRtErrorCapture capture;
      if (!engine.setWeightStreamingBudgetV2(budget)) {
        return Status(TTE_ERROR_RUNTIME,
                      "TensorRT refused a weight streaming budget of " + std::to_string(budget) +
                          " bytes (streamable weights: " + std::to_string(streamable) + " bytes)" +
                          tensorrt_reason());
      }
    }
    // "Returns getStreamableWeightsSize() if weight streaming is disabled"
    // (getWeightStreamingBudgetV2, 11.1 :3687).
    const int64_t applied = engine.getWeightStreamingBudgetV2();
    *streaming = applied < streamable;
    TTE_NATIVE_LOG(environment, INFO,
                   "weight streaming: budget %lld of %lld streamable bytes (%s), scratch %lld "
                   "bytes",
                   static_cast<long long>(applied), static_cast<long long>(streamable),
                   request.has_budget ? "requested" : "TensorRT's default",
                   static_cast<long long>(engine.getWeightStreamingScratchMemorySize()));
    return Status::Ok();
  }
}

}  // namespace tte::native
