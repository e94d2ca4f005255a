// When a run may repeat the last one (program/repeated_run.h): only on the
// recorded inputs, exactly, on the same stream.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "common/call_context.h"
#include "common/repeatable_call.h"
#include "program/repeated_run.h"

namespace tte {
namespace {

class CountingCall final : public RepeatableCall {
 public:
  Status repeat(uint64_t, bool* repeated) override {
    *repeated = true;
    return Status::Ok();
  }
};

// A CUDA tensor of shape {2, 3} at `data`; strides NULL (row-major).
struct Tensor {
  explicit Tensor(uintptr_t data) {
    tensor.data = reinterpret_cast<void*>(data);
    tensor.device = DLDevice{kDLCUDA, 0};
    tensor.ndim = 2;
    tensor.dtype = DLDataType{kDLFloat, 32, 1};
    tensor.shape = shape;
  }
  TteInput input(uint64_t flags = 0) const {
    TteInput value{};
    value.tag = TTE_VALUE_TENSOR;
    value.tensor = &tensor;
    value.int_value = static_cast<int64_t>(flags);
    return value;
  }
  int64_t shape[2] = {2, 3};
  int64_t strides[2] = {3, 1};
  DLTensor tensor{};
};

class Repeated : public testing::Test {
 protected:
  bool record(const std::vector<TteInput>& inputs, void* stream = nullptr) {
    CallContext call;
    if (stream != nullptr) call.use_stream(stream);
    return run_.record(RepeatOffer{&delegate_, 7}, inputs.data(), inputs.size(), call);
  }
  bool matches(const std::vector<TteInput>& inputs, void* stream = nullptr) {
    CallContext call;
    if (stream != nullptr) call.use_stream(stream);
    return run_.matches(inputs.data(), inputs.size(), call);
  }

  CountingCall delegate_;
  RepeatedRun run_;
  Tensor x_{0x1000};
  Tensor y_{0x2000};
};

TEST_F(Repeated, TheSameInputsOnTheSameStreamMatch) {
  void* stream = reinterpret_cast<void*>(0x55);
  ASSERT_TRUE(record({x_.input(), y_.input()}, stream));
  EXPECT_TRUE(run_.offered());
  EXPECT_EQ(run_.offer().call, &delegate_);
  EXPECT_EQ(run_.offer().ticket, 7u);
  EXPECT_TRUE(matches({x_.input(), y_.input()}, stream));
  // A tensor object of its own describing the same memory the same way.
  Tensor again(0x1000);
  EXPECT_TRUE(matches({again.input(), y_.input()}, stream));
}

TEST_F(Repeated, AnyDifferenceInAnInputDoesNot) {
  ASSERT_TRUE(record({x_.input(), y_.input()}));
  EXPECT_FALSE(matches({y_.input(), x_.input()})) << "swapped";
  EXPECT_FALSE(matches({x_.input()})) << "fewer inputs";
  Tensor moved(0x1100);
  EXPECT_FALSE(matches({moved.input(), y_.input()})) << "another address";
  Tensor offset(0x1000);
  offset.tensor.byte_offset = 256;
  EXPECT_FALSE(matches({offset.input(), y_.input()})) << "another byte offset";
  Tensor reshaped(0x1000);
  reshaped.shape[0] = 3;
  reshaped.shape[1] = 2;
  EXPECT_FALSE(matches({reshaped.input(), y_.input()})) << "another shape";
  Tensor other_type(0x1000);
  other_type.tensor.dtype = DLDataType{kDLInt, 32, 1};
  EXPECT_FALSE(matches({other_type.input(), y_.input()})) << "another dtype";
  Tensor other_device(0x1000);
  other_device.tensor.device.device_id = 1;
  EXPECT_FALSE(matches({other_device.input(), y_.input()})) << "another device";
  Tensor strided(0x1000);
  strided.tensor.strides = strided.strides;
  EXPECT_FALSE(matches({strided.input(), y_.input()})) << "strides given where none were";
  EXPECT_FALSE(matches({x_.input(1), y_.input()})) << "other DLPack flags (read-only)";
  TteInput scalar{};
  scalar.tag = TTE_VALUE_INT;
  EXPECT_FALSE(matches({scalar, y_.input()})) << "not a tensor";
  EXPECT_TRUE(matches({x_.input(), y_.input()})) << "nothing above changed the record";
}

TEST_F(Repeated, StridesAreComparedWhereGiven) {
  Tensor strided(0x1000);
  strided.tensor.strides = strided.strides;
  ASSERT_TRUE(record({strided.input()}));
  EXPECT_TRUE(matches({strided.input()}));
  Tensor other(0x1000);
  other.tensor.strides = other.strides;
  other.strides[0] = 4;
  EXPECT_FALSE(matches({other.input()}));
}

TEST_F(Repeated, AnotherStreamDoesNot) {
  void* stream = reinterpret_cast<void*>(0x55);
  ASSERT_TRUE(record({x_.input()}, stream));
  EXPECT_FALSE(matches({x_.input()}, reinterpret_cast<void*>(0x66)));
  EXPECT_FALSE(matches({x_.input()})) << "no stream named";
  ASSERT_TRUE(record({x_.input()}));
  EXPECT_TRUE(matches({x_.input()}));
  CallContext legacy;
  legacy.use_stream(nullptr);
  EXPECT_FALSE(run_.matches(nullptr, 0, legacy));
  std::vector<TteInput> inputs{x_.input()};
  EXPECT_FALSE(run_.matches(inputs.data(), 1, legacy)) << "the legacy stream, named";
}

TEST_F(Repeated, OnlyCudaTensorsAreRecorded) {
  Tensor host(0x1000);
  host.tensor.device = DLDevice{kDLCPU, 0};
  EXPECT_FALSE(record({x_.input(), host.input()}));
  EXPECT_FALSE(run_.offered());
  EXPECT_FALSE(matches({x_.input(), host.input()}));
  Tensor managed(0x1000);
  managed.tensor.device = DLDevice{kDLCUDAManaged, 0};
  EXPECT_FALSE(record({managed.input()}));
  TteInput none{};
  none.tag = TTE_VALUE_NONE;
  EXPECT_FALSE(record({none}));
  Tensor deep(0x1000);
  int64_t shape[RepeatedRun::kMaxRank + 1] = {};
  for (auto& d : shape) d = 1;
  deep.tensor.shape = shape;
  deep.tensor.ndim = RepeatedRun::kMaxRank + 1;
  EXPECT_FALSE(record({deep.input()})) << "past the rank a record holds";
}

TEST_F(Repeated, ClearForgetsTheOffer) {
  ASSERT_TRUE(record({x_.input()}));
  run_.clear();
  EXPECT_FALSE(run_.offered());
  EXPECT_FALSE(matches({x_.input()}));
}

TEST_F(Repeated, AFailedRecordKeepsNothingOfAnEarlierOne) {
  ASSERT_TRUE(record({x_.input()}));
  Tensor host(0x1000);
  host.tensor.device = DLDevice{kDLCPU, 0};
  EXPECT_FALSE(record({host.input()}));
  EXPECT_FALSE(run_.offered());
  EXPECT_FALSE(matches({x_.input()}));
}

}  // namespace
}  // namespace tte
