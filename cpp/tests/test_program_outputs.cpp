// A method's outputs for the caller (program/program_outputs.h), compiled
// from its sources and run on the fixture programs over a stand-in
// TensorRTBackend (program_unit_support.h): which outputs need memory from
// the program, the bounded and grow-only host buffer they get, a caller
// allocator's tensors written in place, views that keep the method's memory
// alive, owned copies, the allocator's answers checked, and every output
// released when one fails.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "common/call_context.h"
#include "program/program_inputs.h"
#include "program/program_outputs.h"
#include "program_unit_support.h"
#include "text_match.h"

namespace {

namespace et = executorch::runtime;
using tte::CallContext;
using tte::OutputOptions;
using tte::Status;
using tte_test::contains;
using tte_unit::LoadedMethod;

bool aligned_256(const void* p) { return reinterpret_cast<uintptr_t>(p) % 256 == 0; }

// An output allocator (TteOutputAllocator) whose answers each test chooses,
// counting what it made and what was deleted.
struct Allocator {
  enum class Answer { kTensor, kWrongShape, kError, kNothing };
  Answer answer = Answer::kTensor;
  int fail_after = -1;  // >= 0: the allocations after that many fail
  int made = 0;
  int deleted = 0;

  struct Made {
    DLManagedTensorVersioned managed{};
    std::vector<int64_t> shape;
    Allocator* owner = nullptr;
  };

  static void destroy(DLManagedTensorVersioned* self) {
    auto* made = static_cast<Made*>(self->manager_ctx);
    ++made->owner->deleted;
    std::free(self->dl_tensor.data);
    delete made;
  }

  static TteStatus allocate(void* context, const DLTensor* prototype,
                            DLManagedTensorVersioned** out, TteError* error) {
    auto* self = static_cast<Allocator*>(context);
    if (self->answer == Answer::kError ||
        (self->fail_after >= 0 && self->made >= self->fail_after)) {
      error->code = TTE_ERROR_RUNTIME;
      std::snprintf(error->message, sizeof(error->message), "pool exhausted");
      return TTE_ERROR_RUNTIME;
    }
    if (self->answer == Answer::kNothing) return TTE_OK;
    auto* made = new Made();
    made->owner = self;
    made->shape.assign(prototype->shape, prototype->shape + prototype->ndim);
    if (self->answer == Answer::kWrongShape) made->shape[0] += 1;
    size_t bytes = (prototype->dtype.bits / 8) * prototype->dtype.lanes;
    for (int64_t d : made->shape) bytes *= static_cast<size_t>(d);
    void* data = nullptr;
    if (posix_memalign(&data, 256, bytes + 1) != 0) std::abort();
    DLManagedTensorVersioned& m = made->managed;
    m.version = DLPackVersion{1, 0};
    m.manager_ctx = made;
    m.deleter = &Allocator::destroy;
    m.dl_tensor.data = data;
    m.dl_tensor.device = prototype->device;
    m.dl_tensor.ndim = prototype->ndim;
    m.dl_tensor.dtype = prototype->dtype;
    m.dl_tensor.shape = made->shape.data();
    ++self->made;
    *out = &m;
    return TTE_OK;
  }
};

class ProgramOutputs : public ::testing::Test {
 protected:
  // Loads `name`, plans its inputs and outputs.
  void load(const std::string& name) {
    loaded_ = std::make_unique<LoadedMethod>();
    tte_unit::load_fixture(name, loaded_.get());
    tte::plan_method_inputs(*loaded_->method, loaded_->state);
    tte::plan_output_buffers(*loaded_->method, loaded_->state);
  }
  et::Method& method() { return *loaded_->method; }
  tte::MethodState& state() { return loaded_->state; }

  // add_one's x [2, 4] = 0..7, then execute (the stand-in writes y = x + 1).
  void run_add_one(const OutputOptions& options) {
    ASSERT_TRUE(tte::give_output_buffers(call_, method(), state(), options).ok());
    std::vector<int64_t> shape{2, 4};
    float x[8];
    for (int i = 0; i < 8; ++i) x[i] = static_cast<float>(i);
    DLTensor tensor = tte_unit::dl_tensor(x, shape, tte_unit::kFloat32);
    const TteInput input = tte_unit::tensor_input(&tensor);
    ASSERT_TRUE(tte::set_method_inputs(call_, method(), state(), &input, 1).ok());
    ASSERT_EQ(method().execute(), et::Error::Ok);
  }
  Status collect(const OutputOptions& options) {
    outputs_.assign(method().outputs_size(), TteOutput{});
    return tte::collect_method_outputs(state(), options, outputs_.data(), outputs_.size());
  }
  const void* method_output_data(size_t i = 0) {
    return method().get_output(i).toTensor().const_data_ptr();
  }
  static std::vector<float> values(const TteOutput& output) {
    const auto* data = static_cast<const float*>(output.tensor->dl_tensor.data);
    return std::vector<float>(data, data + 8);
  }
  OutputOptions with(Allocator& allocator) {
    OutputOptions options;
    options.allocate = &Allocator::allocate;
    options.allocator_context = &allocator;
    return options;
  }
  void TearDown() override { tte::release_outputs(outputs_.data(), outputs_.size()); }

  std::unique_ptr<LoadedMethod> loaded_;
  CallContext call_;
  std::vector<TteOutput> outputs_;
  const std::vector<float> x_plus_one_{1, 2, 3, 4, 5, 6, 7, 8};
};

TEST_F(ProgramOutputs, OnlyAnOutputTheMethodLeavesWithoutMemoryNeedsABuffer) {
  load("add_one.pte");
  EXPECT_EQ(state().output_needs_buffer, (std::vector<bool>{false}));
  load("add_one_unplanned_output.pte");
  EXPECT_EQ(state().output_needs_buffer, (std::vector<bool>{true}));
  EXPECT_EQ(method_output_data(), nullptr);
}

TEST_F(ProgramOutputs, AnUnplannedOutputGetsAHostBufferThatIsKept) {
  load("add_one_unplanned_output.pte");
  const OutputOptions options;
  ASSERT_TRUE(tte::give_output_buffers(call_, method(), state(), options).ok());
  const void* buffer = state().output_buffers[0].host.data();
  ASSERT_NE(buffer, nullptr);
  EXPECT_TRUE(aligned_256(buffer));
  EXPECT_EQ(method_output_data(), buffer);
  run_add_one(options);
  EXPECT_EQ(state().output_buffers[0].host.data(), buffer) << "grow-only: the same memory";
  OutputOptions view;
  view.copy = false;
  ASSERT_TRUE(collect(view).ok());
  EXPECT_EQ(outputs_[0].tensor->dl_tensor.data, buffer);
  EXPECT_EQ(values(outputs_[0]), x_plus_one_);
}

TEST_F(ProgramOutputs, TheHostBufferIsBoundedAndItsRefusalKept) {
  load("add_one_unplanned_output.pte");
  OutputOptions options;
  options.max_planned_memory = 16;
  Status status = tte::give_output_buffers(call_, method(), state(), options);
  EXPECT_EQ(status.code(), TTE_ERROR_HOST_OUT_OF_MEMORY);
  EXPECT_TRUE(contains(status.message(),
                       "output 0 of 'forward' needs a buffer of 32 bytes of "
                       "host memory, more than max_planned_memory allows ("))
      << status.message();
  EXPECT_TRUE(contains(status.message(), "max_planned_memory set to at least 32 (bytes)"))
      << status.message();
  EXPECT_EQ(state().output_buffers[0].host.data(), nullptr);
  // Later runs fail at once with the same reason, whatever they ask.
  options.max_planned_memory = 0;
  const Status again = tte::give_output_buffers(call_, method(), state(), options);
  EXPECT_EQ(again.code(), TTE_ERROR_HOST_OUT_OF_MEMORY);
  EXPECT_EQ(again.message(), status.message());
}

TEST_F(ProgramOutputs, ACallersTensorIsWrittenInPlaceAndReturnedAsItIs) {
  load("add_one_unplanned_output.pte");
  Allocator allocator;
  const OutputOptions options = with(allocator);
  run_add_one(options);
  ASSERT_EQ(allocator.made, 1);
  DLManagedTensorVersioned* given = state().caller_outputs[0];
  ASSERT_NE(given, nullptr);
  EXPECT_EQ(method_output_data(), given->dl_tensor.data) << "the method wrote the caller's tensor";
  ASSERT_TRUE(collect(options).ok());
  EXPECT_EQ(outputs_[0].tensor, given);
  EXPECT_NE(outputs_[0].tensor->flags & DLPACK_FLAG_BITMASK_IS_COPIED, 0u);
  EXPECT_EQ(values(outputs_[0]), x_plus_one_);
  EXPECT_EQ(allocator.made, 1) << "no second tensor, no copy";
  EXPECT_EQ(state().caller_outputs[0], nullptr);
}

TEST_F(ProgramOutputs, AViewIsTheMethodsMemoryAndKeepsItsOwnerAlive) {
  load("add_one.pte");
  OutputOptions options;
  options.copy = false;
  auto owner = std::make_shared<int>(0);
  options.keep_alive = owner;
  run_add_one(options);
  const long held = owner.use_count();
  ASSERT_TRUE(collect(options).ok());
  ASSERT_EQ(outputs_[0].tag, TTE_VALUE_TENSOR);
  const DLTensor& y = outputs_[0].tensor->dl_tensor;
  EXPECT_EQ(y.data, method_output_data());
  EXPECT_EQ(outputs_[0].tensor->flags, 0u);
  EXPECT_EQ(y.ndim, 2);
  EXPECT_EQ(y.shape[0], 2);
  EXPECT_EQ(y.shape[1], 4);
  EXPECT_EQ(y.strides[0], 4);
  EXPECT_EQ(y.device.device_type, kDLCPU);
  EXPECT_EQ(owner.use_count(), held + 1);
  tte::release_outputs(outputs_.data(), outputs_.size());
  EXPECT_EQ(owner.use_count(), held);
  EXPECT_EQ(outputs_[0].tag, TTE_VALUE_NONE);
  EXPECT_EQ(outputs_[0].tensor, nullptr);
}

TEST_F(ProgramOutputs, ACopyIsOwnedAlignedAndMarked) {
  load("add_one.pte");
  OutputOptions options;  // copy, no allocator
  auto owner = std::make_shared<int>(0);
  options.keep_alive = owner;
  run_add_one(options);
  const long held = owner.use_count();
  ASSERT_TRUE(collect(options).ok());
  const DLManagedTensorVersioned& y = *outputs_[0].tensor;
  EXPECT_NE(y.dl_tensor.data, method_output_data());
  EXPECT_TRUE(aligned_256(y.dl_tensor.data));
  EXPECT_NE(y.flags & DLPACK_FLAG_BITMASK_IS_COPIED, 0u);
  EXPECT_EQ(owner.use_count(), held) << "a copy holds nothing of the program";
  EXPECT_EQ(values(outputs_[0]), x_plus_one_);
  method().get_output(0).toTensor().mutable_data_ptr<float>()[0] = -1;
  EXPECT_EQ(values(outputs_[0])[0], 1.0f);
}

TEST_F(ProgramOutputs, AViewOfMemoryACallerLentAsAnInputIsCopied) {
  load("add_one.pte");
  OutputOptions options;
  options.copy = false;
  run_add_one(options);
  // As when a planned input points at the caller's page-locked memory and
  // the output is that memory.
  state().input_aliases[0] = tte::MethodState::Alias{method_output_data(), 32};
  ASSERT_TRUE(collect(options).ok());
  EXPECT_NE(outputs_[0].tensor->dl_tensor.data, method_output_data());
  EXPECT_NE(outputs_[0].tensor->flags & DLPACK_FLAG_BITMASK_IS_COPIED, 0u);
  EXPECT_EQ(values(outputs_[0]), x_plus_one_);
}

TEST_F(ProgramOutputs, TheAllocatorsAnswersAreChecked) {
  load("add_one.pte");
  run_add_one(OutputOptions{});
  Allocator wrong;
  wrong.answer = Allocator::Answer::kWrongShape;
  Status status = collect(with(wrong));
  EXPECT_EQ(status.code(), TTE_ERROR_INTERNAL);
  EXPECT_EQ(status.message(),
            "the output allocator gave output 0 a tensor that is not a compact "
            "[2, 4] float32 on cpu");
  EXPECT_EQ(wrong.deleted, 1) << "the refused tensor is handed back";

  Allocator failing;
  failing.answer = Allocator::Answer::kError;
  status = collect(with(failing));
  EXPECT_EQ(status.code(), TTE_ERROR_RUNTIME);
  EXPECT_EQ(status.message(), "allocating output 0 ([2, 4], float32) failed: pool exhausted");

  Allocator silent;
  silent.answer = Allocator::Answer::kNothing;
  status = collect(with(silent));
  EXPECT_EQ(status.code(), TTE_ERROR_HOST_OUT_OF_MEMORY) << "no tensor, no status: out of memory";
  EXPECT_EQ(outputs_[0].tag, TTE_VALUE_NONE);
}

TEST_F(ProgramOutputs, AFailedOutputReleasesTheOnesBeforeIt) {
  load("identity.pte");  // three outputs: float32 [3], int64 [2, 2], uint8 [5]
  std::vector<int64_t> s0{3}, s1{2, 2}, s2{5};
  float f[3] = {1, 2, 3};
  int64_t l[4] = {5, 6, 7, 8};
  uint8_t b[5] = {9, 9, 9, 9, 9};
  DLTensor t0 = tte_unit::dl_tensor(f, s0, tte_unit::kFloat32);
  DLTensor t1 = tte_unit::dl_tensor(l, s1, tte_unit::kInt64);
  DLTensor t2 = tte_unit::dl_tensor(b, s2, DLDataType{kDLUInt, 8, 1});
  const std::vector<TteInput> inputs = {tte_unit::tensor_input(&t0), tte_unit::tensor_input(&t1),
                                        tte_unit::tensor_input(&t2)};
  ASSERT_TRUE(tte::set_method_inputs(call_, method(), state(), inputs.data(), 3).ok());
  ASSERT_EQ(method().execute(), et::Error::Ok);
  Allocator allocator;
  allocator.fail_after = 2;
  const Status status = collect(with(allocator));
  EXPECT_EQ(status.code(), TTE_ERROR_RUNTIME);
  EXPECT_TRUE(contains(status.message(), "allocating output 2 ([5], uint8) failed"))
      << status.message();
  EXPECT_EQ(allocator.made, 2);
  EXPECT_EQ(allocator.deleted, 2) << "outputs 0 and 1 are handed back";
  for (const TteOutput& output : outputs_) {
    EXPECT_EQ(output.tag, TTE_VALUE_NONE);
    EXPECT_EQ(output.tensor, nullptr);
  }
}

}  // namespace
