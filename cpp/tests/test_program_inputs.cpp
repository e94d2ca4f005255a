// A method's inputs from the caller's values (program/program_inputs.h),
// compiled from its sources and run on the fixture programs over a
// stand-in TensorRTBackend (program_unit_support.h): what is read from the
// method's declaration, each check and the message naming the input, the
// copy into planned memory and the resize of a dynamic input, read-only
// inputs lent to the call, and which caller memory a planned input points at.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/call_context.h"
#include "cuda/cuda_device.h"
#include "program/program_inputs.h"
#include "program_unit_support.h"
#include "text_match.h"

namespace {

namespace et = executorch::runtime;
using tte::CallContext;
using tte::Status;
using tte_test::contains;
using tte_unit::dl_tensor;
using tte_unit::kFloat32;
using tte_unit::kInt64;
using tte_unit::LoadedMethod;
using tte_unit::tensor_input;

class ProgramInputs : public ::testing::Test {
 protected:
  void load(const std::string& name) {
    owned_ = std::make_unique<LoadedMethod>();
    tte_unit::load_fixture(name, owned_.get());
    tte::plan_method_inputs(*owned_->method, owned_->state);
  }
  Status set(const std::vector<TteInput>& inputs) {
    return tte::set_method_inputs(call_, *owned_->method, owned_->state, inputs.data(),
                                  inputs.size());
  }
  // One float32 input of `shape` over `data`.
  Status set_one(void* data, std::vector<int64_t> shape, DLDataType dtype = kFloat32,
                 int64_t* strides = nullptr, DLDevice device = DLDevice{kDLCPU, 0}) {
    shape_ = std::move(shape);
    tensor_ = dl_tensor(data, shape_, dtype, device);
    tensor_.strides = strides;
    return set({tensor_input(&tensor_)});
  }
  executorch::aten::Tensor method_input() {
    return tte::method_input(*owned_->method, 0).toTensor();
  }

  std::unique_ptr<LoadedMethod> owned_;
  CallContext call_;
  std::vector<int64_t> shape_;
  DLTensor tensor_{};
  float data_[64] = {};
};

TEST_F(ProgramInputs, ReadsEachTensorInputsDeclarationWhenTheMethodLoads) {
  load("add_one.pte");
  ASSERT_EQ(owned_->state.input_specs.size(), 1u);
  EXPECT_EQ(owned_->state.input_tags[0], et::Tag::Tensor);
  const tte::InputSpec& spec = owned_->state.input_specs[0];
  EXPECT_EQ(spec.name, "") << "the fixtures' programs do not name their inputs";
  EXPECT_EQ(spec.dtype, executorch::aten::ScalarType::Float);
  EXPECT_EQ(spec.bounds, (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(spec.dim_order, (std::vector<uint8_t>{0, 1}));
  EXPECT_TRUE(spec.is_static);
  EXPECT_TRUE(spec.memory_planned);
  EXPECT_FALSE(spec.on_device);
  EXPECT_EQ(spec.home, method_input().const_data_ptr());
  EXPECT_EQ(spec.home_bytes, 32u);

  LoadedMethod dynamic;
  tte_unit::load_fixture("add_one_dynamic.pte", &dynamic);
  tte::plan_method_inputs(*dynamic.method, dynamic.state);
  EXPECT_FALSE(dynamic.state.input_specs[0].is_static);
  EXPECT_EQ(dynamic.state.input_specs[0].bounds, (std::vector<int64_t>{8, 4}));
}

TEST_F(ProgramInputs, AHostTensorIsCopiedIntoThePlannedInput) {
  load("add_one.pte");
  for (int i = 0; i < 8; ++i) data_[i] = static_cast<float>(i);
  ASSERT_TRUE(set_one(data_, {2, 4}).ok());
  const executorch::aten::Tensor x = method_input();
  EXPECT_EQ(x.const_data_ptr(), owned_->state.input_specs[0].home) << "the program's own memory";
  EXPECT_EQ(x.const_data_ptr<float>()[7], 7.0f);
  data_[7] = 70;
  EXPECT_EQ(x.const_data_ptr<float>()[7], 7.0f) << "a copy, not the caller's memory";
  EXPECT_FALSE(tte::in_input_alias(owned_->state, data_, sizeof(float) * 8));
  EXPECT_TRUE(call_.read_only.empty());
}

TEST_F(ProgramInputs, TheValueKindAndDtypeMustBeTheDeclaredOnes) {
  load("add_one.pte");
  TteInput number{};
  number.tag = TTE_VALUE_INT;
  Status status = set({number});
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(status.message(), "input 0 of 'forward': expected a tensor, got int");

  int64_t longs[8] = {};
  status = set_one(longs, {2, 4}, kInt64);
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(status.message(), "input 0 of 'forward': expected float32, got int64");

  TteInput null_tensor = tensor_input(nullptr);
  status = set({null_tensor});
  EXPECT_EQ(status.message(), "input 0 of 'forward' is a tensor but got NULL");
}

TEST_F(ProgramInputs, TheShapeIsCheckedAgainstAStaticShapeOrTheUpperBounds) {
  load("add_one.pte");
  Status status = set_one(data_, {2, 4, 1});
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(status.message(), "input 0 of 'forward': expected rank 2 (shape [2, 4]), got rank 3");
  status = set_one(data_, {2, 3});
  EXPECT_EQ(status.message(),
            "input 0 of 'forward': expected shape [2, 4], got [2, 3] "
            "(the program's shape is static)");

  load("add_one_dynamic.pte");
  status = set_one(data_, {9, 4});
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(status.message(),
            "input 0 of 'forward': shape [9, 4] exceeds the upper "
            "bounds [8, 4] in dim 0");
  // At the bound and below it: the planned input is resized to the caller's
  // shape.
  for (int64_t rows : {8, 3}) {
    ASSERT_TRUE(set_one(data_, {rows, 4}).ok()) << rows;
    EXPECT_EQ(method_input().size(0), rows);
    EXPECT_EQ(method_input().size(1), 4);
  }
}

// After ExecuTorch's Method::set_input has taken an input once, later runs
// set it the way set_input does (program_inputs.cpp, set_taken_input): the
// same shapes, data and pointers as set_input would leave.
TEST_F(ProgramInputs, AnInputTakenOnceIsSetAsSetInputWouldSetIt) {
  load("add_one_dynamic.pte");  // planned on the host, [<=8, 4]
  ASSERT_EQ(owned_->state.inputs_taken, (std::vector<char>{0}));
  void* home = owned_->state.input_specs[0].home;
  int64_t round = 0;
  for (int64_t rows : {8, 3, 3, 5, 8}) {
    for (int i = 0; i < 32; ++i) data_[i] = static_cast<float>(100 * round + i);
    ASSERT_TRUE(set_one(data_, {rows, 4}).ok()) << rows;
    EXPECT_EQ(owned_->state.inputs_taken[0], 1);
    const executorch::aten::Tensor x = method_input();
    EXPECT_EQ(x.size(0), rows);
    EXPECT_EQ(x.const_data_ptr(), home) << "a planned input is copied into its memory";
    for (int64_t i = 0; i < rows * 4; ++i) {
      ASSERT_EQ(x.const_data_ptr<float>()[i], data_[i]) << "rows " << rows << " element " << i;
    }
    ++round;
  }
  // The checks before it still refuse what set_input would.
  Status status = set_one(data_, {9, 4});
  EXPECT_EQ(status.message(),
            "input 0 of 'forward': shape [9, 4] exceeds the upper bounds [8, 4] in dim 0");

  // Unplanned, on the device: the input points at the caller's memory, new
  // memory at each new address (host memory described as cuda:0 here: no
  // CUDA call is made to point at it).
  load("device_resident.pte");
  ASSERT_FALSE(owned_->state.input_specs[0].memory_planned);
  float other[8] = {};
  for (float* memory : {data_, other, other, data_}) {
    ASSERT_TRUE(set_one(memory, {2, 4}, kFloat32, nullptr, DLDevice{kDLCUDA, 0}).ok());
    EXPECT_EQ(owned_->state.inputs_taken[0], 1);
    EXPECT_EQ(method_input().const_data_ptr(), memory);
    EXPECT_EQ(method_input().size(0), 2);
  }
  status = set_one(other, {2, 4}, kFloat32, nullptr, DLDevice{kDLCUDA, 1});
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(method_input().const_data_ptr(), data_) << "a refused input changes nothing";
}

TEST_F(ProgramInputs, RefusesNonContiguousAndDatalessTensors) {
  load("add_one.pte");
  int64_t column_major[2] = {1, 2};
  Status status = set_one(data_, {2, 4}, kFloat32, column_major);
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(status.message(),
            "input 0 of 'forward' is not contiguous (strides [1, 2], "
            "expected [4, 1] for shape [2, 4]); pass a contiguous copy");
  int64_t row_major[2] = {4, 1};
  EXPECT_TRUE(set_one(data_, {2, 4}, kFloat32, row_major).ok());
  status = set_one(nullptr, {2, 4});
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(status.message(), "input 0 of 'forward' has NULL data but shape [2, 4]");
}

TEST_F(ProgramInputs, RefusesMemoryItCannotReach) {
  load("add_one.pte");
  Status status = set_one(data_, {2, 4}, kFloat32, nullptr, DLDevice{kDLVulkan, 0});
  EXPECT_EQ(status.code(), TTE_ERROR_NOT_SUPPORTED);
  EXPECT_TRUE(contains(status.message(), "expected cpu, cuda, cuda_host or cuda_managed memory"))
      << status.message();
  if (tte::cuda_device_count() != 0) {
    GTEST_SKIP() << "a CUDA device is present: device inputs are checked by test_program_gpu";
  }
  // A CUDA tensor for a host-planned input needs a CUDA copy.
  status = set_one(data_, {2, 4}, kFloat32, nullptr, DLDevice{kDLCUDA, 0});
  EXPECT_EQ(status.code(), TTE_ERROR_NO_DEVICE);
  EXPECT_TRUE(contains(status.message(),
                       "input 0 of 'forward' needs a CUDA copy, but this "
                       "process sees no CUDA device"))
      << status.message();
}

TEST_F(ProgramInputs, ReadOnlyInputsAreLentToTheCall) {
  load("add_one.pte");
  shape_ = {2, 4};
  tensor_ = dl_tensor(data_, shape_, kFloat32);
  tensor_.byte_offset = 4;  // the loan is of the bytes the tensor covers
  ASSERT_TRUE(set({tensor_input(&tensor_, DLPACK_FLAG_BITMASK_READ_ONLY)}).ok());
  const std::string* label = call_.read_only.label_of(&data_[1], 32);
  ASSERT_NE(label, nullptr);
  EXPECT_EQ(*label, "input 0 of 'forward'");
  EXPECT_EQ(call_.read_only.label_of(&data_[0], 4), nullptr);
  EXPECT_EQ(call_.read_only.label_of(&data_[9], 4), nullptr);
  // Other flags lend nothing.
  CallContext other;
  ASSERT_TRUE(
      tte::set_method_inputs(
          other, *owned_->method, owned_->state,
          std::vector<TteInput>{tensor_input(&tensor_, DLPACK_FLAG_BITMASK_IS_COPIED)}.data(), 1)
          .ok());
  EXPECT_TRUE(other.read_only.empty());
}

TEST_F(ProgramInputs, AFailureNamesTheInputOfManyThatFailed) {
  load("identity.pte");  // in_0 float32 [3], in_1 int64 [2, 2], in_2 uint8 [5]
  ASSERT_EQ(owned_->state.input_specs.size(), 3u);
  std::vector<int64_t> s0{3}, s1{2, 2}, s2{5};
  float f[3] = {1, 2, 3};
  float wrong[4] = {};
  uint8_t bytes[5] = {};
  DLTensor t0 = dl_tensor(f, s0, kFloat32);
  DLTensor t1 = dl_tensor(wrong, s1, kFloat32);
  DLTensor t2 = dl_tensor(bytes, s2, DLDataType{kDLUInt, 8, 1});
  const Status status = set({tensor_input(&t0), tensor_input(&t1), tensor_input(&t2)});
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(status.message(), "input 1 of 'forward': expected int64, got float32");
}

TEST_F(ProgramInputs, InInputAliasTellsWhetherMemoryOverlapsAnAliasedInput) {
  tte::MethodState state;
  char memory[64];
  state.input_aliases.resize(2);
  state.input_aliases[1] = tte::MethodState::Alias{memory + 16, 16};
  EXPECT_TRUE(tte::in_input_alias(state, memory + 16, 1));
  EXPECT_TRUE(tte::in_input_alias(state, memory + 31, 8));
  EXPECT_TRUE(tte::in_input_alias(state, memory, 17));
  EXPECT_FALSE(tte::in_input_alias(state, memory, 16)) << "ends where the alias begins";
  EXPECT_FALSE(tte::in_input_alias(state, memory + 32, 8)) << "begins where it ends";
  // An empty range is a point: inside the alias or not.
  EXPECT_TRUE(tte::in_input_alias(state, memory + 20, 0));
  EXPECT_FALSE(tte::in_input_alias(state, memory + 40, 0));
}

}  // namespace
