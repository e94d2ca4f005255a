// What the delegate checks on every call (backend/call_checks.h), compiled
// from its source, over an engine I/O table built by hand and ExecuTorch
// tensors over host memory: the argument count, kinds, dtypes, ranks (an
// ExecuTorch scalar is a TensorRT [1]), dim orders and input data; which
// optimization profile the inputs fit (bounds inclusive) and the refusal
// naming each profile; and how an output takes the engine's shape (unknown
// dims, undeclared aliases, rank, its bound).
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "backend/call_checks.h"
#include "backend/engine_io.h"
#include "backend_unit_support.h"
#include "text_match.h"

namespace {

namespace et = executorch::runtime;
using tte::DelegateArgs;
using tte::EngineIo;
using tte::EngineTensor;
using tte::Status;
using tte_test::contains;
using tte_unit::HostTensor;
using tte_unit::ScalarType;
using tte_unit::TensorShapeDynamism;

EngineTensor tensor(const std::string& name, bool is_input, int32_t rank,
                    ScalarType dtype = ScalarType::Float) {
  EngineTensor t;
  t.name = name;
  t.is_input = is_input;
  t.rank = rank;
  t.dtype = dtype;
  return t;
}

// x: float32 [rows, 4], rows 1..4 in profile 0 and 5..8 in profile 1
// (`profiles` of them); y: float32, rank 2.
EngineIo x_to_y(int32_t profiles = 2) {
  EngineIo io;
  io.num_profiles = profiles;
  EngineTensor x = tensor("x", true, 2);
  x.min_dims = {{1, 4}, {5, 4}};
  x.max_dims = {{4, 4}, {8, 4}};
  x.min_dims.resize(profiles);
  x.max_dims.resize(profiles);
  io.inputs.push_back(x);
  io.outputs.push_back(tensor("y", false, 2));
  return io;
}

class CallChecks : public ::testing::Test {
 protected:
  DelegateArgs args(std::vector<et::EValue*> values) {
    values_ = std::move(values);
    return DelegateArgs(values_.data(), values_.size());
  }
  std::vector<et::EValue*> values_;
};

TEST_F(CallChecks, AcceptsMatchingArgumentsAndCountsThemFirst) {
  const EngineIo io = x_to_y();
  HostTensor x(ScalarType::Float, {2, 4});
  HostTensor y(ScalarType::Float, {2, 4});
  EXPECT_TRUE(tte::check_arguments(io, args({x.value(), y.value()})).ok());
  const Status status = tte::check_arguments(io, args({x.value()}));
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(status.message(),
            "TensorRTBackend delegate expected 2 arguments (1 inputs + 1 outputs), got 1");
}

TEST_F(CallChecks, RefusesAnArgumentThatIsNotATensorNamingItsRole) {
  const EngineIo io = x_to_y();
  HostTensor x(ScalarType::Float, {2, 4});
  et::EValue number(int64_t{3});
  Status status = tte::check_arguments(io, args({x.value(), &number}));
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(status.message(), "delegate argument 1 (output 'y') is not a tensor");
  status = tte::check_arguments(io, args({nullptr, &number}));
  EXPECT_EQ(status.message(), "delegate argument 0 (input 'x') is not a tensor");
}

TEST_F(CallChecks, RefusesAnotherDtypeOrRank) {
  const EngineIo io = x_to_y();
  HostTensor y(ScalarType::Float, {2, 4});
  HostTensor longs(ScalarType::Long, {2, 4});
  Status status = tte::check_arguments(io, args({longs.value(), y.value()}));
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(status.message(), "input 'x': expected float32, got int64");
  HostTensor x(ScalarType::Float, {2, 4});
  HostTensor rank3(ScalarType::Float, {1, 2, 4});
  status = tte::check_arguments(io, args({x.value(), rank3.value()}));
  EXPECT_EQ(status.message(), "output 'y': expected rank 2, got rank 3 (shape [1, 2, 4])");
}

TEST_F(CallChecks, AScalarIsARankOneEngineTensorAndNothingElse) {
  EngineIo io;
  io.inputs.push_back(tensor("s", true, 1));
  io.inputs.back().min_dims = {{1}};
  io.inputs.back().max_dims = {{1}};
  io.outputs.push_back(tensor("t", false, 1));
  HostTensor scalar(ScalarType::Float, {});
  HostTensor out(ScalarType::Float, {1});
  EXPECT_TRUE(tte::check_arguments(io, args({scalar.value(), out.value()})).ok());
  int64_t dims[1] = {0};
  tte::engine_dims(scalar.tensor(), 1, dims);
  EXPECT_EQ(dims[0], 1);
  int32_t profile = -1;
  EXPECT_TRUE(tte::choose_profile(io, args({scalar.value(), out.value()}), &profile).ok());
  EXPECT_EQ(profile, 0);
  // A 0-d tensor where the engine has rank 2 is refused.
  io.inputs[0].rank = 2;
  const Status status = tte::check_arguments(io, args({scalar.value(), out.value()}));
  EXPECT_EQ(status.message(), "input 's': expected rank 2, got rank 0 (shape [])");
}

TEST_F(CallChecks, RefusesAPermutedDimOrder) {
  const EngineIo io = x_to_y();
  HostTensor x(ScalarType::Float, {2, 4});
  // [2, 4] stored column-major: dim order [1, 0].
  float data[8] = {};
  executorch::aten::SizesType sizes[2] = {2, 4};
  executorch::aten::DimOrderType order[2] = {1, 0};
  executorch::aten::StridesType strides[2] = {1, 2};
  executorch::aten::TensorImpl impl(ScalarType::Float, 2, sizes, data, order, strides);
  et::EValue permuted{executorch::aten::Tensor(&impl)};
  const Status status = tte::check_arguments(io, args({x.value(), &permuted}));
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(status.message(),
            "output 'y': expected a contiguous tensor (default dim order), got dim order [1, 0]");
}

TEST_F(CallChecks, AnInputNeedsDataUnlessEmptyAndAnOutputNeverDoes) {
  const EngineIo io = x_to_y();
  HostTensor x(ScalarType::Float, {2, 4});
  HostTensor y(ScalarType::Float, {2, 4});
  HostTensor x_no_data(ScalarType::Float, {2, 4}, 0, -1, TensorShapeDynamism::DYNAMIC_BOUND,
                       /*no_data=*/true);
  HostTensor y_no_data(ScalarType::Float, {2, 4}, 0, -1, TensorShapeDynamism::DYNAMIC_BOUND,
                       /*no_data=*/true);
  HostTensor x_empty(ScalarType::Float, {0, 4}, 0, -1, TensorShapeDynamism::DYNAMIC_BOUND,
                     /*no_data=*/true);
  const Status status = tte::check_arguments(io, args({x_no_data.value(), y.value()}));
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(status.message(), "input 'x' has no data");
  EXPECT_TRUE(tte::check_arguments(io, args({x.value(), y_no_data.value()})).ok());
  EXPECT_TRUE(tte::check_arguments(io, args({x_empty.value(), y.value()})).ok());
}

TEST_F(CallChecks, ChoosesTheFirstProfileHoldingTheShapeBoundsIncluded) {
  const EngineIo io = x_to_y();
  HostTensor y(ScalarType::Float, {8, 4});
  const std::vector<std::pair<int32_t, int32_t>> rows_to_profile = {{1, 0}, {4, 0}, {5, 1}, {8, 1}};
  for (const auto& [rows, expected] : rows_to_profile) {
    HostTensor x(ScalarType::Float, {rows, 4});
    int32_t profile = -1;
    const Status status = tte::choose_profile(io, args({x.value(), y.value()}), &profile);
    ASSERT_TRUE(status.ok()) << rows << ": " << status.message();
    EXPECT_EQ(profile, expected) << rows << " rows";
  }
}

TEST_F(CallChecks, AShapeNoProfileHoldsIsRefusedPerProfile) {
  HostTensor y(ScalarType::Float, {8, 4});
  HostTensor x(ScalarType::Float, {9, 4});
  int32_t profile = -1;
  Status status = tte::choose_profile(x_to_y(), args({x.value(), y.value()}), &profile);
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(status.message(),
            "the inputs fit no optimization profile of the engine: profile 0: input 'x' has "
            "shape [9, 4], allowed [1..4, 4]; profile 1: input 'x' has shape [9, 4], allowed "
            "[5..8, 4]");
  EXPECT_EQ(profile, -1);
  // One profile: not named.
  HostTensor wide(ScalarType::Float, {2, 5});
  status = tte::choose_profile(x_to_y(1), args({wide.value(), y.value()}), &profile);
  EXPECT_EQ(status.message(),
            "the inputs fit no optimization profile of the engine: input 'x' has shape [2, 5], "
            "allowed [1..4, 4]");
  HostTensor zero(ScalarType::Float, {0, 4}, 0, -1, TensorShapeDynamism::DYNAMIC_BOUND, true);
  EXPECT_FALSE(tte::choose_profile(x_to_y(1), args({zero.value(), y.value()}), &profile).ok());
}

TEST_F(CallChecks, AnOutputTakesTheEngineShapeWithinItsBound) {
  const EngineIo io = x_to_y();
  HostTensor x(ScalarType::Float, {2, 4});
  HostTensor y(ScalarType::Float, {8, 4});  // DYNAMIC_BOUND: up to 32 elements
  const int64_t smaller[2] = {3, 4};
  ASSERT_TRUE(tte::fit_output_shape(io, 0, smaller, 2, args({x.value(), y.value()})).ok());
  EXPECT_EQ(y.sizes(), (std::vector<int32_t>{3, 4}));
  const int64_t past[2] = {9, 4};
  const Status status = tte::fit_output_shape(io, 0, past, 2, args({x.value(), y.value()}));
  EXPECT_NE(status.code(), TTE_OK);
  EXPECT_EQ(status.message(),
            "output 'y': cannot resize from [3, 4] to the engine's [9, 4] (export the output "
            "with a dynamic shape whose upper bound holds it)");
  EXPECT_EQ(y.sizes(), (std::vector<int32_t>{3, 4}));
}

TEST_F(CallChecks, RefusesUnknownDimsAndAnotherRank) {
  const EngineIo io = x_to_y();
  HostTensor x(ScalarType::Float, {2, 4});
  HostTensor y(ScalarType::Float, {2, 4});
  const int64_t unknown[2] = {-1, 4};
  Status status = tte::fit_output_shape(io, 0, unknown, 2, args({x.value(), y.value()}));
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_STATE);
  EXPECT_EQ(status.message(), "the engine could not infer the shape of output 'y' (got [-1, 4])");
  const int64_t huge[2] = {int64_t{std::numeric_limits<int32_t>::max()} + 1, 4};
  status = tte::fit_output_shape(io, 0, huge, 2, args({x.value(), y.value()}));
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_STATE);
  const int64_t flat[1] = {8};
  status = tte::fit_output_shape(io, 0, flat, 1, args({x.value(), y.value()}));
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(status.message(),
            "output 'y': the engine gives shape [8] but the delegate's output has rank 2");
}

TEST_F(CallChecks, AScalarOutputTakesTheEnginesOneElement) {
  EngineIo io = x_to_y();
  io.outputs[0].rank = 1;
  HostTensor x(ScalarType::Float, {2, 4});
  HostTensor scalar(ScalarType::Float, {});
  const int64_t one[1] = {1};
  EXPECT_TRUE(tte::fit_output_shape(io, 0, one, 1, args({x.value(), scalar.value()})).ok());
  const int64_t two[1] = {2};
  const Status status = tte::fit_output_shape(io, 0, two, 1, args({x.value(), scalar.value()}));
  EXPECT_EQ(status.message(),
            "output 'y': the engine gives shape [2] but the delegate's output has rank 0");
}

TEST_F(CallChecks, AnUndeclaredAliasMustKeepItsInputsShape) {
  EngineIo io = x_to_y();
  io.outputs[0].aliased_input = 0;
  io.outputs[0].check_alias_shape = true;
  HostTensor x(ScalarType::Float, {2, 4});
  HostTensor y(ScalarType::Float, {2, 4});
  const int64_t same[2] = {2, 4};
  EXPECT_TRUE(tte::fit_output_shape(io, 0, same, 2, args({x.value(), y.value()})).ok());
  const int64_t other[2] = {1, 4};
  Status status = tte::fit_output_shape(io, 0, other, 2, args({x.value(), y.value()}));
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(status.message(),
            "aliased output 'y' has shape [1, 4] but the input 'x' it is written into has [2, 4]");
  // A declared alias (kv_cache_update) is the engine's business.
  io.outputs[0].check_alias_shape = false;
  EXPECT_TRUE(tte::fit_output_shape(io, 0, other, 2, args({x.value(), y.value()})).ok());
}

TEST_F(CallChecks, DataDependentOutputsTakeTheirPlannedBound) {
  const int64_t known[2] = {3, 4};
  const int64_t dependent[2] = {3, TTE_DATA_DEPENDENT_DIM};
  EXPECT_FALSE(tte::has_data_dependent_dim(known, 2));
  EXPECT_TRUE(tte::has_data_dependent_dim(dependent, 2));
  EXPECT_FALSE(tte::has_data_dependent_dim(dependent, 1));

  const EngineIo io = x_to_y();
  HostTensor x(ScalarType::Float, {2, 4});
  HostTensor y(ScalarType::Float, {8, 4});
  ASSERT_TRUE(tte::fit_output_shape(io, 0, known, 2, args({x.value(), y.value()})).ok());
  ASSERT_TRUE(tte::fit_bound_shape(io, 0, 2, {8, 4}, args({x.value(), y.value()})).ok());
  EXPECT_EQ(y.sizes(), (std::vector<int32_t>{8, 4}));
  const Status status = tte::fit_bound_shape(io, 0, 1, {8, 4}, args({x.value(), y.value()}));
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(status.message(),
            "output 'y': the engine gives a data-dependent shape of rank 1 but the delegate's "
            "output has rank 2");
}

}  // namespace
