// The native provider's weight-streaming budget (native/weight_streaming.h)
// over a stand-in engine with ICudaEngine's weight-streaming calls, so it is
// held to the same four cases as the Python provider's tests
// (tests/python/test_tensorrt_python.py, test_weight_streaming_*): a budget
// clamped to the streamable size, TensorRT's own default (no streaming) when
// none is asked, a refused budget failing the load, and an engine without
// streamable weights left alone.
#include "native/weight_streaming.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace {

using tte::native::apply_budget;
using tte::native::ProviderEnvironment;
using tte::native::WeightStreamingRequest;

std::vector<std::string> g_warnings;

bool log_everything(TteLogLevel) { return true; }

void capture_log(TteLogLevel level, const char*, int, const char* message) {
  if (level == TTE_LOG_WARNING) {
    g_warnings.push_back(message);
  }
}

int32_t one_device() { return 1; }

const ProviderEnvironment kEnvironment{&one_device, &log_everything, &capture_log};

// The calls apply_budget makes on an ICudaEngine (NvInferRuntime.h:3627-3745).
struct FakeEngine {
  int64_t streamable = 0;
  int64_t automatic = 0;
  bool accepts_nonzero = true;  // false: TensorRT refuses every budget but 0
  int64_t budget = -1;          // -1: never set, TensorRT's default (streaming disabled)
  std::vector<int64_t> set_calls;

  int64_t getStreamableWeightsSize() const { return streamable; }
  int64_t getWeightStreamingAutomaticBudget() const { return automatic; }
  bool setWeightStreamingBudgetV2(int64_t value) {
    set_calls.push_back(value);
    if (!accepts_nonzero && value != 0) {
      return false;
    }
    budget = value;
    return true;
  }
  // "Returns getStreamableWeightsSize() if weight streaming is disabled".
  int64_t getWeightStreamingBudgetV2() const { return budget < 0 ? streamable : budget; }
  int64_t getWeightStreamingScratchMemorySize() const { return 0; }
};

WeightStreamingRequest requested(int64_t budget) { return {true, budget}; }

class NativeWeightStreaming : public ::testing::Test {
 protected:
  void SetUp() override { g_warnings.clear(); }
};

TEST_F(NativeWeightStreaming, ABudgetIsClampedToTheStreamableSize) {
  FakeEngine engine{1 << 20, 1 << 19};
  bool streaming = true;
  ASSERT_TRUE(apply_budget(engine, requested(int64_t{1} << 40), kEnvironment, &streaming).ok());
  EXPECT_EQ(engine.set_calls, std::vector<int64_t>{1 << 20});
  EXPECT_FALSE(streaming) << "a budget of everything streams nothing";

  FakeEngine smaller{1 << 20, 1 << 19};
  ASSERT_TRUE(apply_budget(smaller, requested(4096), kEnvironment, &streaming).ok());
  EXPECT_EQ(smaller.budget, 4096);
  EXPECT_TRUE(streaming);

  EXPECT_EQ(apply_budget(smaller, requested(-1), kEnvironment, &streaming).code(),
            TTE_ERROR_INVALID_ARGUMENT);
}

TEST_F(NativeWeightStreaming, WithoutABudgetTensorRtsDefaultStays) {
  // TensorRT's default disables streaming; the automatic budget is not
  // applied behind the user's back.
  FakeEngine engine{1 << 20, 1 << 19};
  bool streaming = true;
  ASSERT_TRUE(apply_budget(engine, WeightStreamingRequest{}, kEnvironment, &streaming).ok());
  EXPECT_TRUE(engine.set_calls.empty());
  EXPECT_FALSE(streaming);
  EXPECT_TRUE(g_warnings.empty());
}

TEST_F(NativeWeightStreaming, ARefusedBudgetFailsTheLoad) {
  bool streaming = false;
  // A budget the caller asked for is not replaced: the load fails.
  FakeEngine asked{1 << 20, 1 << 19, false};
  const tte::Status refused = apply_budget(asked, requested(4096), kEnvironment, &streaming);
  EXPECT_EQ(refused.code(), TTE_ERROR_RUNTIME);
  EXPECT_NE(refused.message().find("refused a weight streaming budget of 4096"), std::string::npos)
      << refused.message();
  EXPECT_EQ(asked.set_calls, std::vector<int64_t>{4096});
}

TEST_F(NativeWeightStreaming, AnEngineWithoutStreamableWeightsIsLeftAlone) {
  FakeEngine engine{0, 0};
  bool streaming = true;
  ASSERT_TRUE(apply_budget(engine, requested(4096), kEnvironment, &streaming).ok());
  EXPECT_TRUE(engine.set_calls.empty());
  EXPECT_FALSE(streaming);
  ASSERT_EQ(g_warnings.size(), 1u);
  EXPECT_NE(g_warnings[0].find("ignored: the engine has no streamable weights"), std::string::npos)
      << g_warnings[0];
}

}  // namespace
