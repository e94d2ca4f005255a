// The engine address of each delegate argument (backend/tensor_binding.h),
// compiled from its sources: host engines take aligned host memory where it
// lies, misaligned tensors are staged in 256-byte aligned memory and written
// back, empty tensors get a placeholder, in-place outputs take their input's
// address (never into memory lent read-only), and the staging a device
// engine would need without a GPU fails with what it was for.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "backend/tensor_binding.h"
#include "backend_unit_support.h"
#include "common/read_only_memory.h"
#include "cuda/cuda_device.h"
#include "text_match.h"

namespace {

using tte::Binding;
using tte::EngineIo;
using tte::EngineMemory;
using tte::EngineTensor;
using tte::TensorBinder;
using tte_test::contains;
using tte_unit::aligned_256;
using tte_unit::HostTensor;
using tte_unit::ScalarType;

EngineTensor engine_tensor(const std::string& name, bool is_input, int32_t index, int32_t rank) {
  EngineTensor t;
  t.name = name;
  t.index = index;
  t.is_input = is_input;
  t.rank = rank;
  return t;
}

// x [2, 4] -> y [2, 4], float32.
EngineIo one_in_one_out() {
  EngineIo io;
  io.inputs.push_back(engine_tensor("x", true, 0, 2));
  io.outputs.push_back(engine_tensor("y", false, 1, 2));
  return io;
}

// cache, x -> cache_out written in place into cache.
EngineIo in_place_io() {
  EngineIo io;
  io.inputs.push_back(engine_tensor("cache", true, 0, 1));
  io.inputs.push_back(engine_tensor("x", true, 1, 1));
  io.outputs.push_back(engine_tensor("cache_out", false, 2, 1));
  io.outputs.back().aliased_input = 0;
  return io;
}

EngineMemory host_engine() { return EngineMemory{true, -1, tte::DeviceTraits{}}; }
EngineMemory device_engine() { return EngineMemory{false, 0, tte::DeviceTraits{}}; }

struct Args {
  explicit Args(std::vector<HostTensor*> tensors) {
    for (HostTensor* t : tensors) values.push_back(t->value());
  }
  tte::DelegateArgs span() { return tte::DelegateArgs(values.data(), values.size()); }
  std::vector<executorch::runtime::EValue*> values;
};

class TensorBinding : public ::testing::Test {
 protected:
  void TearDown() override { unsetenv(tte::kMappedStagingEnv); }
  tte::ReadOnlyLoans no_loans_;
  std::vector<Binding> bindings_;
};

TEST_F(TensorBinding, HostEngineUsesAlignedHostTensorsWhereTheyLie) {
  HostTensor x(ScalarType::Float, {2, 4});
  HostTensor y(ScalarType::Float, {2, 4});
  x.fill(1);
  y.fill(100);
  TensorBinder binder(host_engine());
  Args args({&x, &y});
  const EngineIo io = one_in_one_out();
  ASSERT_TRUE(binder.bind(io, args.span(), nullptr, no_loans_, &bindings_).ok());
  ASSERT_EQ(bindings_.size(), 2u);
  for (size_t a = 0; a < 2; ++a) {
    EXPECT_FALSE(bindings_[a].staged) << a;
    EXPECT_EQ(bindings_[a].nbytes, 32u) << a;
    EXPECT_EQ(bindings_[a].mapped, nullptr) << a;
  }
  EXPECT_EQ(bindings_[0].address, x.data());
  EXPECT_EQ(bindings_[1].address, y.data());
  // Nothing was staged, so nothing is copied back over what the engine wrote.
  y.as<float>()[0] = -5;
  ASSERT_TRUE(binder.write_back(io, bindings_, nullptr).ok());
  EXPECT_EQ(y.as<float>()[0], -5.0f);
}

TEST_F(TensorBinding, MisalignedInputIsCopiedIntoAlignedStagingAtBind) {
  HostTensor x(ScalarType::Float, {2, 4}, /*offset=*/16);
  HostTensor y(ScalarType::Float, {2, 4});
  x.fill(1);
  ASSERT_FALSE(aligned_256(x.data()));
  TensorBinder binder(host_engine());
  Args args({&x, &y});
  ASSERT_TRUE(binder.bind(one_in_one_out(), args.span(), nullptr, no_loans_, &bindings_).ok());
  const Binding& in = bindings_[0];
  EXPECT_TRUE(in.staged);
  EXPECT_NE(in.address, x.data());
  EXPECT_TRUE(aligned_256(in.address));
  EXPECT_EQ(in.data, x.data());
  const auto* staged = static_cast<const float*>(in.address);
  EXPECT_EQ(std::vector<float>(staged, staged + 8), x.values());
  // A copy, taken at bind: later changes to the caller's tensor do not reach it.
  x.as<float>()[0] = 99;
  EXPECT_EQ(staged[0], 1.0f);
  EXPECT_FALSE(bindings_[1].staged) << "the aligned output is used as it is";
}

TEST_F(TensorBinding, MisalignedOutputIsStagedAndWrittenBack) {
  HostTensor x(ScalarType::Float, {2, 4});
  HostTensor y(ScalarType::Float, {2, 4}, /*offset=*/64);
  TensorBinder binder(host_engine());
  Args args({&x, &y});
  const EngineIo io = one_in_one_out();
  ASSERT_TRUE(binder.bind(io, args.span(), nullptr, no_loans_, &bindings_).ok());
  const Binding& out = bindings_[1];
  ASSERT_TRUE(out.staged);
  ASSERT_TRUE(aligned_256(out.address));
  // What the engine writes lands in the caller's tensor only at write_back.
  auto* engine_out = static_cast<float*>(out.address);
  for (int i = 0; i < 8; ++i) engine_out[i] = 10.0f + i;
  EXPECT_EQ(y.as<float>()[7], 0.0f);
  ASSERT_TRUE(binder.write_back(io, bindings_, nullptr).ok());
  EXPECT_EQ(y.values(), (std::vector<float>{10, 11, 12, 13, 14, 15, 16, 17}));
}

TEST_F(TensorBinding, EmptyTensorsGetOneAlignedPlaceholder) {
  HostTensor x(ScalarType::Float, {0, 4}, /*offset=*/16);
  HostTensor y(ScalarType::Float, {0, 4}, /*offset=*/0, 0, tte_unit::TensorShapeDynamism::STATIC,
               /*no_data=*/true);
  TensorBinder binder(host_engine());
  Args args({&x, &y});
  ASSERT_TRUE(binder.bind(one_in_one_out(), args.span(), nullptr, no_loans_, &bindings_).ok());
  for (const Binding& b : bindings_) {
    EXPECT_EQ(b.nbytes, 0u);
    EXPECT_NE(b.address, nullptr) << "engines refuse NULL addresses";
    EXPECT_TRUE(aligned_256(b.address));
    EXPECT_FALSE(b.staged);
  }
  EXPECT_EQ(bindings_[0].address, bindings_[1].address);
}

TEST_F(TensorBinding, ATensorWithoutDataIsRefusedByRole) {
  const EngineIo io = one_in_one_out();
  TensorBinder binder(host_engine());
  {
    HostTensor x(ScalarType::Float, {2, 4}, 0, -1, tte_unit::TensorShapeDynamism::STATIC, true);
    HostTensor y(ScalarType::Float, {2, 4});
    Args args({&x, &y});
    const tte::Status status = binder.bind(io, args.span(), nullptr, no_loans_, &bindings_);
    EXPECT_EQ(status.code(), TTE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(status.message(), "input 'x' has no data");
  }
  HostTensor x(ScalarType::Float, {2, 4});
  HostTensor y(ScalarType::Float, {2, 4}, 0, -1, tte_unit::TensorShapeDynamism::STATIC, true);
  Args args({&x, &y});
  const tte::Status status = binder.bind(io, args.span(), nullptr, no_loans_, &bindings_);
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(status.message(), "output 'y' has no data");
}

TEST_F(TensorBinding, InPlaceOutputTakesItsInputsAddressAndUpdatesTheCallersTensor) {
  // The cache is misaligned, so the engine updates a staged copy of it: the
  // caller's cache and the delegate's own output tensor both get the result.
  HostTensor cache(ScalarType::Float, {4}, /*offset=*/32);
  HostTensor x(ScalarType::Float, {4});
  HostTensor cache_out(ScalarType::Float, {4});
  cache.fill(1);
  const EngineIo io = in_place_io();
  TensorBinder binder(host_engine());
  Args args({&cache, &x, &cache_out});
  ASSERT_TRUE(binder.bind(io, args.span(), nullptr, no_loans_, &bindings_).ok());
  ASSERT_TRUE(bindings_[0].staged);
  EXPECT_EQ(bindings_[2].address, bindings_[0].address);
  EXPECT_FALSE(bindings_[2].staged);
  auto* engine_cache = static_cast<float*>(bindings_[0].address);
  for (int i = 0; i < 4; ++i) engine_cache[i] += 10;
  ASSERT_TRUE(binder.write_back(io, bindings_, nullptr).ok());
  EXPECT_EQ(cache.values(), (std::vector<float>{11, 12, 13, 14}));
  EXPECT_EQ(cache_out.values(), (std::vector<float>{11, 12, 13, 14}));
}

TEST_F(TensorBinding, InPlaceOutputIntoAReadOnlyInputIsRefused) {
  HostTensor cache(ScalarType::Float, {4});
  HostTensor x(ScalarType::Float, {4});
  HostTensor cache_out(ScalarType::Float, {4});
  const EngineIo io = in_place_io();
  TensorBinder binder(host_engine());
  Args args({&cache, &x, &cache_out});
  // A read-only loan of other memory (the second input) is no reason to refuse.
  tte::ReadOnlyLoans loans;
  loans.add(x.data(), x.nbytes(), "input 1 of 'forward' ('x')");
  ASSERT_TRUE(binder.bind(io, args.span(), nullptr, loans, &bindings_).ok());
  // The last byte of the cache is enough.
  loans.add(static_cast<char*>(cache.data()) + cache.nbytes() - 1, 1,
            "input 0 of 'forward' ('cache')");
  const tte::Status status = binder.bind(io, args.span(), nullptr, loans, &bindings_);
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(status.message(),
                       "the engine writes output 'cache_out' in place into its input 'cache', "
                       "which is input 0 of 'forward' ('cache'), passed read-only"))
      << status.message();
}

TEST_F(TensorBinding, DeviceEngineStagingWithoutAGpuFailsNamingTheTensor) {
  if (tte::cuda_device_count() != 0) {
    GTEST_SKIP() << "a CUDA device is present: device staging is checked by test_backend_gpu";
  }
  HostTensor x(ScalarType::Float, {2, 4});
  HostTensor y(ScalarType::Float, {2, 4});
  Args args({&x, &y});
  TensorBinder binder(device_engine());
  const tte::Status status =
      binder.bind(one_in_one_out(), args.span(), nullptr, no_loans_, &bindings_);
  EXPECT_FALSE(status.ok());
  EXPECT_TRUE(contains(status.message(), "allocating 32 bytes of device staging for 'x' failed"))
      << status.message();
}

TEST_F(TensorBinding, MappedStagingIsChosenForDeviceEnginesOnly) {
  // The override asks device engines to stage pageable host tensors through
  // mapped memory; host engines keep their aligned host staging.
  setenv(tte::kMappedStagingEnv, "1", 1);
  HostTensor x(ScalarType::Float, {2, 4}, /*offset=*/16);
  HostTensor y(ScalarType::Float, {2, 4});
  x.fill(3);
  Args args({&x, &y});
  TensorBinder host(host_engine());
  ASSERT_TRUE(host.bind(one_in_one_out(), args.span(), nullptr, no_loans_, &bindings_).ok());
  EXPECT_TRUE(bindings_[0].staged);
  EXPECT_EQ(bindings_[0].mapped, nullptr);
  EXPECT_EQ(static_cast<const float*>(bindings_[0].address)[7], 10.0f);
  if (tte::cuda_device_count() != 0) {
    GTEST_SKIP() << "a CUDA device is present: mapped staging is checked by test_backend_gpu";
  }
  TensorBinder device(device_engine());
  const tte::Status status =
      device.bind(one_in_one_out(), args.span(), nullptr, no_loans_, &bindings_);
  EXPECT_FALSE(status.ok());
  EXPECT_TRUE(contains(status.message(),
                       "allocating 32 bytes of mapped host staging memory for 'x' failed"))
      << status.message();
}

}  // namespace
