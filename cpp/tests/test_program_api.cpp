// The Program C API end to end: programs packed by the Python packer from
// test-engine plans (tests/fixtures/make_cpp_fixtures.py), run by the
// test-host provider through the built plugin.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "testing/test_provider_api.h"
#include "torch_tensorrt_executorch/c_api.h"

namespace {

std::string fixture(const std::string& name) {
  return std::string(TTE_CPP_FIXTURE_DIR) + "/" + name;
}

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(file)),
                              std::istreambuf_iterator<char>());
}

// Owns a TteProgram.
class Program {
 public:
  Program() = default;
  explicit Program(TteProgram* handle) : handle_(handle) {}
  ~Program() { tte_program_close(handle_); }
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  TteProgram* get() const { return handle_; }
  TteProgram** out() { return &handle_; }

 private:
  TteProgram* handle_ = nullptr;
};

// A host tensor the test owns, seen as a DLTensor.
template <typename T>
struct HostTensor {
  HostTensor(std::vector<int64_t> dims, std::vector<T> values, DLDataType type)
      : shape(std::move(dims)), data(std::move(values)) {
    tensor.data = data.empty() ? nullptr : data.data();
    tensor.device = DLDevice{kDLCPU, 0};
    tensor.ndim = static_cast<int32_t>(shape.size());
    tensor.dtype = type;
    tensor.shape = shape.data();
  }
  TteInput input() const {
    TteInput in{};
    in.tag = TTE_VALUE_TENSOR;
    in.tensor = &tensor;
    return in;
  }
  std::vector<int64_t> shape;
  std::vector<T> data;
  DLTensor tensor{};
};

HostTensor<float> float_tensor(std::vector<int64_t> shape, float first = 0) {
  size_t count = 1;
  for (int64_t d : shape) count *= static_cast<size_t>(d);
  std::vector<float> values(count);
  for (size_t i = 0; i < count; ++i) values[i] = first + static_cast<float>(i);
  return HostTensor<float>(std::move(shape), std::move(values), DLDataType{kDLFloat, 32, 1});
}

// Releases every tensor output.
struct Outputs {
  explicit Outputs(size_t count) : values(count) {}
  ~Outputs() { release(); }
  void release() {
    for (TteOutput& out : values) {
      if (out.tensor != nullptr) out.tensor->deleter(out.tensor);
      out = TteOutput{};
    }
  }
  std::vector<float> floats(size_t i) const {
    const DLTensor& t = values[i].tensor->dl_tensor;
    size_t count = 1;
    for (int32_t d = 0; d < t.ndim; ++d) count *= static_cast<size_t>(t.shape[d]);
    const float* p =
        reinterpret_cast<const float*>(static_cast<const char*>(t.data) + t.byte_offset);
    return std::vector<float>(p, p + count);
  }
  std::vector<int64_t> shape(size_t i) const {
    const DLTensor& t = values[i].tensor->dl_tensor;
    return std::vector<int64_t>(t.shape, t.shape + t.ndim);
  }
  std::vector<TteOutput> values;
};

class ProgramApi : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    TteError error{};
    // Registered once per process; a second load reports the name as taken.
    const TteStatus status =
        tte_load_engine_provider_library(TTE_TEST_HOST_PROVIDER, TTE_PROVIDER_OTHER, &error);
    ASSERT_TRUE(status == TTE_OK || tte_num_engine_providers() > 0) << error.message;
  }

  void open(Program& program, const std::string& name, const TteProgramOptions* options = nullptr) {
    TteError error{};
    ASSERT_EQ(tte_program_open_file(fixture(name).c_str(), options, program.out(), &error), TTE_OK)
        << error.message;
  }

  // Runs a one-input method; returns the status, message in `message`.
  TteStatus run(Program& program, const DLTensor& tensor, Outputs& outputs, int copy = 1,
                std::string* message = nullptr, const char* method = "forward") {
    TteInput in{};
    in.tag = TTE_VALUE_TENSOR;
    in.tensor = &tensor;
    TteError error{};
    const TteStatus status = tte_program_run(program.get(), method, &in, 1, copy,
                                             outputs.values.data(), outputs.values.size(), &error);
    if (message != nullptr) *message = error.message;
    if (status != TTE_OK) {
      EXPECT_EQ(error.code, status);
      EXPECT_STREQ(tte_program_last_error(program.get()), error.message);
    }
    return status;
  }
};

TEST_F(ProgramApi, ListsMethods) {
  Program program;
  open(program, "two_methods.pte");
  size_t count = 0;
  ASSERT_EQ(tte_program_num_methods(program.get(), &count, nullptr), TTE_OK);
  ASSERT_EQ(count, 2u);
  std::vector<std::string> names;
  for (size_t i = 0; i < count; ++i) {
    const char* name = nullptr;
    ASSERT_EQ(tte_program_method_name(program.get(), i, &name, nullptr), TTE_OK);
    names.emplace_back(name);
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"forward", "plus_two"}));
  const char* name = nullptr;
  TteError error{};
  EXPECT_EQ(tte_program_method_name(program.get(), 2, &name, &error), TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(error.message).find("out of range"), std::string::npos);
}

TEST_F(ProgramApi, InputAndOutputMetadata) {
  Program program;
  open(program, "add_one.pte");
  size_t inputs = 0, outputs = 0;
  ASSERT_EQ(tte_program_method_io_count(program.get(), "forward", &inputs, &outputs, nullptr),
            TTE_OK);
  EXPECT_EQ(inputs, 1u);
  EXPECT_EQ(outputs, 1u);
  TteValueInfo info{};
  TteError error{};
  ASSERT_EQ(tte_program_input_info(program.get(), "forward", 0, &info, &error), TTE_OK)
      << error.message;
  EXPECT_EQ(info.tag, TTE_VALUE_TENSOR);
  EXPECT_EQ(info.scalar_type, 6);  // Float
  ASSERT_EQ(info.rank, 2);
  EXPECT_EQ(info.sizes[0], 2);
  EXPECT_EQ(info.sizes[1], 4);
  EXPECT_EQ(info.is_memory_planned, 1);
  EXPECT_EQ(info.nbytes, 32u);
  EXPECT_EQ(info.device_type, TTE_DEVICE_CPU);
  EXPECT_EQ(info.device_index, 0);
  ASSERT_EQ(tte_program_output_info(program.get(), "forward", 0, &info, &error), TTE_OK);
  EXPECT_EQ(info.scalar_type, 6);
  EXPECT_EQ(info.rank, 2);
  EXPECT_EQ(tte_program_input_info(program.get(), "forward", 1, &info, &error),
            TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(error.message).find("has 1 inputs"), std::string::npos) << error.message;
}

TEST_F(ProgramApi, DynamicDimsReportTheirUpperBound) {
  Program program;
  open(program, "add_one_dynamic.pte");
  TteValueInfo info{};
  ASSERT_EQ(tte_program_input_info(program.get(), "forward", 0, &info, nullptr), TTE_OK);
  ASSERT_EQ(info.rank, 2);
  EXPECT_EQ(info.sizes[0], 8);
  EXPECT_EQ(info.sizes[1], 4);
}

TEST_F(ProgramApi, DeviceResidentIoIsTaggedCuda) {
  Program program;
  open(program, "device_resident.pte");
  TteValueInfo info{};
  ASSERT_EQ(tte_program_input_info(program.get(), "forward", 0, &info, nullptr), TTE_OK);
  EXPECT_EQ(info.is_memory_planned, 0);
  EXPECT_EQ(info.device_type, TTE_DEVICE_CUDA);
  EXPECT_EQ(info.device_index, 0);
}

TEST_F(ProgramApi, RunReturnsOwnedCopies) {
  Program program;
  open(program, "add_one.pte");
  auto x = float_tensor({2, 4});
  Outputs outputs(1);
  std::string message;
  ASSERT_EQ(run(program, x.tensor, outputs, 1, &message), TTE_OK) << message;
  ASSERT_EQ(outputs.values[0].tag, TTE_VALUE_TENSOR);
  const DLManagedTensorVersioned* y = outputs.values[0].tensor;
  EXPECT_EQ(y->version.major, 1u);
  EXPECT_EQ(y->version.minor, 0u);
  EXPECT_TRUE(y->flags & DLPACK_FLAG_BITMASK_IS_COPIED);
  EXPECT_EQ(y->dl_tensor.device.device_type, kDLCPU);
  EXPECT_EQ(y->dl_tensor.dtype.code, kDLFloat);
  EXPECT_EQ(y->dl_tensor.dtype.bits, 32);
  EXPECT_EQ(outputs.shape(0), (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(outputs.floats(0), (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}));

  // A copy outlives later runs.
  Outputs second(1);
  auto x2 = float_tensor({2, 4}, 100);
  ASSERT_EQ(run(program, x2.tensor, second, 1), TTE_OK);
  EXPECT_EQ(outputs.floats(0)[0], 1.0f);
  EXPECT_EQ(second.floats(0)[0], 101.0f);
  EXPECT_NE(outputs.values[0].tensor->dl_tensor.data, second.values[0].tensor->dl_tensor.data);
}

TEST_F(ProgramApi, ViewsShowTheProgramsMemory) {
  Program program;
  open(program, "add_one.pte");
  auto x = float_tensor({2, 4});
  Outputs first(1);
  ASSERT_EQ(run(program, x.tensor, first, 0), TTE_OK);
  EXPECT_FALSE(first.values[0].tensor->flags & DLPACK_FLAG_BITMASK_IS_COPIED);
  EXPECT_EQ(first.floats(0)[0], 1.0f);
  auto x2 = float_tensor({2, 4}, 10);
  Outputs second(1);
  ASSERT_EQ(run(program, x2.tensor, second, 0), TTE_OK);
  // Same memory, overwritten by the next run.
  EXPECT_EQ(first.values[0].tensor->dl_tensor.data, second.values[0].tensor->dl_tensor.data);
  EXPECT_EQ(first.floats(0)[0], 11.0f);
}

// keep_positive (docs/test-engine-format.md): an output whose shape the
// engine knows only after it ran. The caller sees that shape, empty, partial
// and full, as an owned copy and as a view.
TEST_F(ProgramApi, DataDependentOutputsHaveTheShapeTheEngineProduced) {
  Program program;
  open(program, "keep_positive.pte");
  const std::vector<std::vector<float>> cases = {
      {-1, 0, -2}, {-1, 2, 0, 3, -4, 5}, {1, 2, 3, 4, 5, 6, 7, 8}};
  for (int copy : {1, 0}) {
    for (const std::vector<float>& values : cases) {
      HostTensor<float> x({static_cast<int64_t>(values.size())}, values,
                          DLDataType{kDLFloat, 32, 1});
      std::vector<float> expected;
      for (float v : values) {
        if (v > 0) expected.push_back(v);
      }
      Outputs outputs(1);
      std::string message;
      ASSERT_EQ(run(program, x.tensor, outputs, copy, &message), TTE_OK) << message;
      EXPECT_EQ(outputs.shape(0), (std::vector<int64_t>{static_cast<int64_t>(expected.size())}));
      EXPECT_EQ(outputs.floats(0), expected);
    }
  }
}

// The engine asks for its input's size; past the planned bound (16 floats)
// it writes into the program's own memory and the result comes back whole
// when it fits, else the run fails naming the bound: never a truncation.
TEST_F(ProgramApi, DataDependentOutputsPastThePlannedBound) {
  Program program;
  open(program, "keep_positive_bound16.pte");
  std::vector<float> values(32, -1.0f);
  for (int i = 0; i < 10; ++i) values[3 * i] = static_cast<float>(i + 1);
  HostTensor<float> x({32}, values, DLDataType{kDLFloat, 32, 1});
  Outputs fits(1);
  std::string message;
  ASSERT_EQ(run(program, x.tensor, fits, 1, &message), TTE_OK) << message;
  EXPECT_EQ(fits.shape(0), (std::vector<int64_t>{10}));
  EXPECT_EQ(fits.floats(0), (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));

  auto too_many = float_tensor({32}, 1);
  Outputs refused(1);
  EXPECT_EQ(run(program, too_many.tensor, refused, 1, &message), TTE_ERROR_RUNTIME);
  EXPECT_NE(message.find("output 'y': the engine produced shape [32]"), std::string::npos)
      << message;
  EXPECT_NE(message.find("upper bound [16]"), std::string::npos) << message;
  EXPECT_EQ(refused.values[0].tensor, nullptr);
}

TEST_F(ProgramApi, OpenFromBufferKeepsItsOwnCopy) {
  std::vector<uint8_t> bytes = read_bytes(fixture("add_one.pte"));
  ASSERT_FALSE(bytes.empty());
  Program program;
  TteError error{};
  ASSERT_EQ(tte_program_open_buffer(bytes.data(), bytes.size(), nullptr, program.out(), &error),
            TTE_OK)
      << error.message;
  std::fill(bytes.begin(), bytes.end(), 0);
  bytes.clear();
  bytes.shrink_to_fit();
  auto x = float_tensor({2, 4});
  Outputs outputs(1);
  ASSERT_EQ(run(program, x.tensor, outputs), TTE_OK);
  EXPECT_EQ(outputs.floats(0)[7], 8.0f);
}

TEST_F(ProgramApi, DynamicShapeWithinBounds) {
  Program program;
  open(program, "add_one_dynamic.pte");
  auto x = float_tensor({3, 4});
  Outputs outputs(1);
  std::string message;
  ASSERT_EQ(run(program, x.tensor, outputs, 1, &message), TTE_OK) << message;
  EXPECT_EQ(outputs.shape(0), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(outputs.floats(0)[11], 12.0f);
  auto too_big = float_tensor({9, 4});
  Outputs none(1);
  ASSERT_EQ(run(program, too_big.tensor, none, 1, &message), TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(message.find("input 0 of 'forward': shape [9, 4] exceeds the upper bounds [8, 4]"),
            std::string::npos)
      << message;
}

TEST_F(ProgramApi, ZeroSizeTensors) {
  Program program;
  open(program, "add_one_zero.pte");
  auto x = float_tensor({0, 4});
  for (int copy : {1, 0}) {
    Outputs outputs(1);
    std::string message;
    ASSERT_EQ(run(program, x.tensor, outputs, copy, &message), TTE_OK) << message;
    EXPECT_EQ(outputs.shape(0), (std::vector<int64_t>{0, 4}));
  }
}

TEST_F(ProgramApi, WrongDtypeNamesBoth) {
  Program program;
  open(program, "add_one.pte");
  HostTensor<int64_t> x({2, 4}, std::vector<int64_t>(8, 1), DLDataType{kDLInt, 64, 1});
  Outputs outputs(1);
  std::string message;
  ASSERT_EQ(run(program, x.tensor, outputs, 1, &message), TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(message.find("input 0 of 'forward': expected float32, got int64"), std::string::npos)
      << message;
  EXPECT_EQ(outputs.values[0].tag, TTE_VALUE_NONE);
}

TEST_F(ProgramApi, WrongRankAndStaticShape) {
  Program program;
  open(program, "add_one.pte");
  std::string message;
  auto flat = float_tensor({8});
  Outputs outputs(1);
  ASSERT_EQ(run(program, flat.tensor, outputs, 1, &message), TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(message.find("expected rank 2 (shape [2, 4]), got rank 1"), std::string::npos)
      << message;
  auto wide = float_tensor({2, 5});
  ASSERT_EQ(run(program, wide.tensor, outputs, 1, &message), TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(message.find("expected shape [2, 4], got [2, 5]"), std::string::npos) << message;
}

TEST_F(ProgramApi, NonContiguousInputIsRefused) {
  Program program;
  open(program, "add_one.pte");
  auto x = float_tensor({2, 4});
  int64_t strides[] = {1, 2};
  x.tensor.strides = strides;
  Outputs outputs(1);
  std::string message;
  ASSERT_EQ(run(program, x.tensor, outputs, 1, &message), TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(message.find("input 0 of 'forward' is not contiguous (strides [1, 2], expected [4, 1]"),
            std::string::npos)
      << message;
  // Explicit row-major strides are fine.
  int64_t row_major[] = {4, 1};
  x.tensor.strides = row_major;
  ASSERT_EQ(run(program, x.tensor, outputs, 1, &message), TTE_OK) << message;
}

TEST_F(ProgramApi, ByteOffsetIsHonoured) {
  Program program;
  open(program, "add_one.pte");
  auto storage = float_tensor({3, 4});  // values 0..11
  DLTensor x = storage.tensor;
  int64_t shape[] = {2, 4};
  x.shape = shape;
  x.byte_offset = 4 * sizeof(float);  // start at the second row
  Outputs outputs(1);
  ASSERT_EQ(run(program, x, outputs), TTE_OK);
  EXPECT_EQ(outputs.floats(0), (std::vector<float>{5, 6, 7, 8, 9, 10, 11, 12}));
}

TEST_F(ProgramApi, UnsupportedDeviceAndNullData) {
  Program program;
  open(program, "add_one.pte");
  auto x = float_tensor({2, 4});
  x.tensor.device = DLDevice{kDLVulkan, 0};
  Outputs outputs(1);
  std::string message;
  ASSERT_EQ(run(program, x.tensor, outputs, 1, &message), TTE_ERROR_NOT_SUPPORTED);
  EXPECT_NE(message.find("input 0 of 'forward' is on device type 7:0"), std::string::npos)
      << message;
  x.tensor.device = DLDevice{kDLCPU, 0};
  x.tensor.data = nullptr;
  ASSERT_EQ(run(program, x.tensor, outputs, 1, &message), TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(message.find("NULL data"), std::string::npos) << message;
}

TEST_F(ProgramApi, InputAndOutputCountsAreChecked) {
  Program program;
  open(program, "add_one.pte");
  Outputs outputs(1);
  TteError error{};
  EXPECT_EQ(
      tte_program_run(program.get(), "forward", nullptr, 0, 1, outputs.values.data(), 1, &error),
      TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(error.message).find("takes 1 inputs, got 0"), std::string::npos)
      << error.message;
  auto x = float_tensor({2, 4});
  TteInput in = x.input();
  Outputs two(2);
  EXPECT_EQ(tte_program_run(program.get(), "forward", &in, 1, 1, two.values.data(), 2, &error),
            TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(error.message).find("returns 1 outputs"), std::string::npos)
      << error.message;
  TteInput scalar{};
  scalar.tag = TTE_VALUE_INT;
  EXPECT_EQ(
      tte_program_run(program.get(), "forward", &scalar, 1, 1, outputs.values.data(), 1, &error),
      TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(error.message).find("expected a tensor, got int"), std::string::npos)
      << error.message;
}

TEST_F(ProgramApi, UnknownMethod) {
  Program program;
  open(program, "add_one.pte");
  auto x = float_tensor({2, 4});
  Outputs outputs(1);
  std::string message;
  ASSERT_EQ(run(program, x.tensor, outputs, 1, &message, "backward"), TTE_ERROR_NOT_FOUND);
  EXPECT_NE(message.find("no method 'backward' (it has 'forward')"), std::string::npos) << message;
  TteError error{};
  EXPECT_EQ(tte_program_load_method(program.get(), "backward", &error), TTE_ERROR_NOT_FOUND);
  size_t in = 0, out = 0;
  EXPECT_EQ(tte_program_method_io_count(program.get(), "backward", &in, &out, &error),
            TTE_ERROR_NOT_FOUND);
}

TEST_F(ProgramApi, SeveralMethodsAndChainedDelegates) {
  Program program;
  open(program, "two_methods.pte");
  auto x = float_tensor({3});
  Outputs outputs(1);
  std::string message;
  ASSERT_EQ(run(program, x.tensor, outputs, 1, &message, "plus_two"), TTE_OK) << message;
  EXPECT_EQ(outputs.floats(0), (std::vector<float>{2, 3, 4}));
  auto y = float_tensor({2, 4});
  Outputs forward(1);
  ASSERT_EQ(run(program, y.tensor, forward, 1, &message), TTE_OK) << message;
  EXPECT_EQ(forward.floats(0)[0], 1.0f);
}

TEST_F(ProgramApi, SeveralInputsAndDtypes) {
  Program program;
  open(program, "identity.pte");
  auto a = float_tensor({3});
  HostTensor<int64_t> b({2, 2}, {1, -2, 3, -4}, DLDataType{kDLInt, 64, 1});
  HostTensor<uint8_t> c({5}, {9, 8, 7, 6, 5}, DLDataType{kDLUInt, 8, 1});
  TteInput inputs[] = {a.input(), b.input(), c.input()};
  Outputs outputs(3);
  TteError error{};
  ASSERT_EQ(
      tte_program_run(program.get(), "forward", inputs, 3, 1, outputs.values.data(), 3, &error),
      TTE_OK)
      << error.message;
  EXPECT_EQ(outputs.floats(0), (std::vector<float>{0, 1, 2}));
  const DLTensor& out_b = outputs.values[1].tensor->dl_tensor;
  EXPECT_EQ(out_b.dtype.code, kDLInt);
  EXPECT_EQ(out_b.dtype.bits, 64);
  EXPECT_EQ(static_cast<const int64_t*>(out_b.data)[3], -4);
  const DLTensor& out_c = outputs.values[2].tensor->dl_tensor;
  EXPECT_EQ(out_c.dtype.code, kDLUInt);
  EXPECT_EQ(static_cast<const uint8_t*>(out_c.data)[0], 9);
}

TEST_F(ProgramApi, ProviderErrorsReachTheCaller) {
  Program program;
  open(program, "enqueue_fails.pte");
  auto x = float_tensor({2, 4});
  Outputs outputs(1);
  std::string message;
  ASSERT_NE(run(program, x.tensor, outputs, 1, &message), TTE_OK);
  EXPECT_NE(message.find("executing method 'forward' failed"), std::string::npos) << message;
  EXPECT_NE(message.find("test engine told to fail"), std::string::npos) << message;
  EXPECT_EQ(outputs.values[0].tag, TTE_VALUE_NONE);
}

TEST_F(ProgramApi, ExternalDataFromPathOrBuffer) {
  auto x = float_tensor({2, 4});
  {
    const std::string ptd = fixture("external.ptd");
    const char* paths[] = {ptd.c_str()};
    TteProgramOptions options{};
    options.struct_size = sizeof(options);
    options.data_paths = paths;
    options.num_data_paths = 1;
    Program program;
    open(program, "external.pte", &options);
    Outputs outputs(1);
    std::string message;
    ASSERT_EQ(run(program, x.tensor, outputs, 1, &message), TTE_OK) << message;
    EXPECT_EQ(outputs.floats(0), (std::vector<float>{2, 4, 6, 8, 10, 12, 14, 16}));
  }
  {
    const std::vector<uint8_t> ptd = read_bytes(fixture("external.ptd"));
    TteBuffer buffer{ptd.data(), ptd.size()};
    TteProgramOptions options{};
    options.struct_size = sizeof(options);
    options.data_buffers = &buffer;
    options.num_data_buffers = 1;
    const std::vector<uint8_t> pte = read_bytes(fixture("external.pte"));
    Program program;
    TteError error{};
    ASSERT_EQ(tte_program_open_buffer(pte.data(), pte.size(), &options, program.out(), &error),
              TTE_OK)
        << error.message;
    Outputs outputs(1);
    std::string message;
    ASSERT_EQ(run(program, x.tensor, outputs, 1, &message), TTE_OK) << message;
    EXPECT_EQ(outputs.floats(0)[7], 16.0f);
  }
}

TEST_F(ProgramApi, MissingExternalData) {
  {
    Program program;
    open(program, "external.pte");
    TteError error{};
    EXPECT_NE(tte_program_load_method(program.get(), "forward", &error), TTE_OK);
    EXPECT_NE(std::string(error.message).find("cannot load method 'forward'"), std::string::npos)
        << error.message;
  }
  const std::string missing = fixture("no_such_file.ptd");
  const char* paths[] = {missing.c_str()};
  TteProgramOptions options{};
  options.struct_size = sizeof(options);
  options.data_paths = paths;
  options.num_data_paths = 1;
  Program program;
  TteError error{};
  EXPECT_EQ(tte_program_open_file(fixture("external.pte").c_str(), &options, program.out(), &error),
            TTE_ERROR_NOT_FOUND);
  EXPECT_NE(std::string(error.message).find("cannot open data file"), std::string::npos)
      << error.message;
  EXPECT_EQ(program.get(), nullptr);
}

TEST_F(ProgramApi, MissingAndNonProgramFiles) {
  Program program;
  TteError error{};
  EXPECT_EQ(tte_program_open_file(fixture("nope.pte").c_str(), nullptr, program.out(), &error),
            TTE_ERROR_NOT_FOUND);
  EXPECT_NE(std::string(error.message).find("cannot open program"), std::string::npos);
  EXPECT_EQ(program.get(), nullptr);
  const char text[] = "this is not an ExecuTorch program, just some text that is long enough";
  EXPECT_EQ(tte_program_open_buffer(text, sizeof(text), nullptr, program.out(), &error),
            TTE_ERROR_INVALID_PROGRAM);
  EXPECT_NE(std::string(error.message).find("not a valid ExecuTorch program"), std::string::npos)
      << error.message;
}

// Opens `bytes`, loads and runs forward with a [2, 4] float input; returns
// whether everything succeeded. Failing is fine; crashing is not.
bool open_load_run(const std::vector<uint8_t>& bytes) {
  TteProgram* handle = nullptr;
  if (tte_program_open_buffer(bytes.data(), bytes.size(), nullptr, &handle, nullptr) != TTE_OK) {
    return false;
  }
  Program program(handle);
  auto x = float_tensor({2, 4});
  TteInput in = x.input();
  Outputs outputs(1);
  return tte_program_load_method(handle, "forward", nullptr) == TTE_OK &&
         tte_program_run(handle, "forward", &in, 1, 1, outputs.values.data(), 1, nullptr) == TTE_OK;
}

TEST_F(ProgramApi, TruncatedProgramsFailWithoutCrashing) {
  const std::vector<uint8_t> bytes = read_bytes(fixture("add_one.pte"));
  ASSERT_TRUE(open_load_run(bytes));
  for (size_t size = 0; size < bytes.size(); ++size) {
    const std::vector<uint8_t> truncated(bytes.begin(), bytes.begin() + size);
    EXPECT_FALSE(open_load_run(truncated))
        << "a program truncated to " << size << " of " << bytes.size() << " bytes ran";
  }
}

TEST_F(ProgramApi, CorruptProgramsDoNotCrash) {
  const std::vector<uint8_t> bytes = read_bytes(fixture("add_one.pte"));
  size_t failed = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::vector<uint8_t> damaged = bytes;
    damaged[i] ^= 0xff;
    failed += open_load_run(damaged) ? 0 : 1;
  }
  // Most bytes matter; flipping the file identifier always does.
  EXPECT_GT(failed, bytes.size() / 2);
  std::vector<uint8_t> bad_magic = bytes;
  bad_magic[4] = 'X';
  EXPECT_FALSE(open_load_run(bad_magic));
}

TEST_F(ProgramApi, DescribeJsonListsMethodsAndDelegates) {
  Program program;
  open(program, "two_methods.pte");
  TteError error{};
  ASSERT_EQ(tte_program_load_method(program.get(), "plus_two", &error), TTE_OK) << error.message;
  char* text = nullptr;
  ASSERT_EQ(tte_program_describe_json(program.get(), &text, &error), TTE_OK) << error.message;
  const nlohmann::json doc = nlohmann::json::parse(text);
  tte_free_string(text);
  ASSERT_EQ(doc["methods"].size(), 2u);
  for (const auto& method : doc["methods"]) {
    EXPECT_EQ(method["backends"], nlohmann::json::array({"TensorRTBackend"}));
    EXPECT_EQ(method["inputs"][0]["dtype"], "float32");
    EXPECT_EQ(method["inputs"][0]["tag"], "tensor");
    if (method["name"] == "plus_two") {
      EXPECT_TRUE(method["loaded"].get<bool>());
      EXPECT_EQ(method["inputs"][0]["device"], "cpu");
      ASSERT_EQ(method["delegates"].size(), 2u) << method.dump();
      const auto& first = method["delegates"][0];
      EXPECT_EQ(first["provider"], "test-host");
      EXPECT_EQ(first["blob"]["io_bindings"][0]["name"], "x") << first.dump();
      EXPECT_EQ(method["delegates"][1]["blob"]["io_bindings"][0]["name"], "y");
    } else {
      EXPECT_FALSE(method["loaded"].get<bool>());
      EXPECT_TRUE(method["inputs"][0]["device"].is_null());
      EXPECT_TRUE(method["delegates"].empty());
    }
  }
}

TEST_F(ProgramApi, BackendOptionsReachTheBackend) {
  TteBackendOption option{};
  option.backend = "TensorRTBackend";
  option.key = "provider";
  option.type = TTE_OPTION_STRING;
  option.string_value = "no-such-provider";
  TteProgramOptions options{};
  options.struct_size = sizeof(options);
  options.backend_options = &option;
  options.num_backend_options = 1;
  Program program;
  open(program, "add_one.pte", &options);
  TteError error{};
  EXPECT_NE(tte_program_load_method(program.get(), "forward", &error), TTE_OK);
  EXPECT_NE(std::string(error.message).find("no-such-provider"), std::string::npos)
      << error.message;

  option.string_value = "test-host";
  Program named;
  open(named, "add_one.pte", &options);
  EXPECT_EQ(tte_program_load_method(named.get(), "forward", &error), TTE_OK) << error.message;
}

// A provider that needs the device; no call of it may be reached on a machine
// without one.
TteStatus never_called(TteError* error) {
  std::snprintf(error->message, sizeof(error->message), "not to be called without a device");
  return TTE_ERROR_INTERNAL;
}
TteEngineProvider device_only_provider() {
  TteEngineProvider provider{};
  provider.abi_version = TTE_ENGINE_PROVIDER_ABI_VERSION;
  provider.struct_size = sizeof(provider);
  provider.name = "device-only";
  provider.memory_kind = TTE_MEMORY_DEVICE;
  provider.deserialize = [](void*, const void*, uint64_t, const TteEngineLoadOptions*, TteEngine**,
                            TteError* e) { return never_called(e); };
  provider.num_io_tensors = [](TteEngine*, int32_t*, TteError* e) { return never_called(e); };
  provider.describe_io_tensor = [](TteEngine*, int32_t, TteIoTensorDesc*, TteError* e) {
    return never_called(e);
  };
  provider.num_profiles = [](TteEngine*, int32_t*, TteError* e) { return never_called(e); };
  provider.profile_shape = [](TteEngine*, int32_t, int32_t, int64_t*, int64_t*, int64_t*,
                              TteError* e) { return never_called(e); };
  provider.select_profile = [](TteEngine*, int32_t, void*, TteError* e) { return never_called(e); };
  provider.set_input_shape = [](TteEngine*, int32_t, const int64_t*, int32_t, TteError* e) {
    return never_called(e);
  };
  provider.get_output_shape = [](TteEngine*, int32_t, int64_t*, int32_t, int32_t*, TteError* e) {
    return never_called(e);
  };
  provider.set_tensor_address = [](TteEngine*, int32_t, void*, TteError* e) {
    return never_called(e);
  };
  provider.enqueue = [](TteEngine*, void*, TteError* e) { return never_called(e); };
  provider.destroy = [](TteEngine*) {};
  return provider;
}

// The delegate's own status, not the ExecuTorch error it had to return,
// reaches the caller, with its reason.
TEST_F(ProgramApi, DelegateFailuresKeepTheirStatus) {
  if (tte_cuda_device_count() > 0) {
    GTEST_SKIP() << "a CUDA device is present";
  }
  const TteEngineProvider provider = device_only_provider();
  TteError error{};
  ASSERT_EQ(tte_register_engine_provider(&provider, TTE_PROVIDER_OTHER, &error), TTE_OK)
      << error.message;
  TteBackendOption option{};
  option.backend = "TensorRTBackend";
  option.key = "provider";
  option.type = TTE_OPTION_STRING;
  option.string_value = "device-only";
  TteProgramOptions options{};
  options.struct_size = sizeof(options);
  options.backend_options = &option;
  options.num_backend_options = 1;
  {
    Program program;
    open(program, "add_one.pte", &options);
    EXPECT_EQ(tte_program_load_method(program.get(), "forward", &error), TTE_ERROR_NO_DEVICE);
    const std::string message = error.message;
    EXPECT_NE(
        message.find(std::string("TensorRTBackend delegate: no CUDA device (") +
                     tte_cuda_unavailable_reason() +
                     "): TensorRT engines need an NVIDIA GPU ('device-only' needs a CUDA device)"),
        std::string::npos)
        << message;
    EXPECT_EQ(std::string(tte_program_last_error(program.get())), message);
  }
  EXPECT_EQ(tte_unregister_engine_provider("device-only", &error), TTE_OK) << error.message;
}

// ExecuTorch's option holds a 32-bit int; the documented 2 << 30 budget
// reaches the backend as its decimal string.
TEST_F(ProgramApi, IntOptionsBeyond32BitsReachTheBackend) {
  TteBackendOption budget{};
  budget.backend = "TensorRTBackend";
  budget.key = "weight_streaming_budget";
  budget.type = TTE_OPTION_INT;
  budget.int_value = int64_t{2} << 30;
  TteProgramOptions options{};
  options.struct_size = sizeof(options);
  options.backend_options = &budget;
  options.num_backend_options = 1;
  Program program;
  open(program, "add_one.pte", &options);
  TteError error{};
  ASSERT_EQ(tte_program_load_method(program.get(), "forward", &error), TTE_OK) << error.message;
  auto stats = reinterpret_cast<void (*)(TteTestProviderStats*)>(
      dlsym(dlopen(TTE_TEST_HOST_PROVIDER, RTLD_NOW | RTLD_NOLOAD), "tte_test_provider_stats"));
  ASSERT_NE(stats, nullptr);
  TteTestProviderStats seen{};
  seen.struct_size = sizeof(seen);
  stats(&seen);
  EXPECT_EQ(seen.last_has_weight_streaming_budget, 1);
  EXPECT_EQ(seen.last_weight_streaming_budget, int64_t{2} << 30);
}

TEST_F(ProgramApi, BadBackendOptionsAreRefusedAtOpen) {
  TteBackendOption option{};
  option.backend = "TensorRTBackend";
  option.key = "provider";
  option.type = 99;
  TteProgramOptions options{};
  options.struct_size = sizeof(options);
  options.backend_options = &option;
  options.num_backend_options = 1;
  Program program;
  TteError error{};
  EXPECT_EQ(tte_program_open_file(fixture("add_one.pte").c_str(), &options, program.out(), &error),
            TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(error.message).find("unknown type 99"), std::string::npos) << error.message;
  options.struct_size = 4;
  EXPECT_EQ(tte_program_open_file(fixture("add_one.pte").c_str(), &options, program.out(), &error),
            TTE_ERROR_INVALID_ARGUMENT);
}

// The planned-memory bound refuses host memory, with the status of its own
// (not the device's TTE_ERROR_OUT_OF_MEMORY), at every attempt; a bound that
// covers the method lets it load.
TEST_F(ProgramApi, PlannedMemoryPastTheBoundIsRefusedAsHostMemory) {
  TteProgramOptions options{};
  options.struct_size = sizeof(options);
  options.max_planned_memory = 32;
  {
    Program program;
    open(program, "add_one.pte", &options);
    for (int attempt = 0; attempt < 2; ++attempt) {
      TteError error{};
      EXPECT_EQ(tte_program_load_method(program.get(), "forward", &error),
                TTE_ERROR_HOST_OUT_OF_MEMORY);
      EXPECT_EQ(error.code, TTE_ERROR_HOST_OUT_OF_MEMORY);
      EXPECT_NE(std::string(error.message).find("more than max_planned_memory allows (32 bytes)"),
                std::string::npos)
          << error.message;
      Outputs outputs(1);
      auto x = float_tensor({2, 4});
      EXPECT_EQ(run(program, x.tensor, outputs), TTE_ERROR_HOST_OUT_OF_MEMORY);
    }
  }
  options.max_planned_memory = uint64_t{1} << 20;
  Program program;
  open(program, "add_one.pte", &options);
  TteError error{};
  EXPECT_EQ(tte_program_load_method(program.get(), "forward", &error), TTE_OK) << error.message;
}

TEST_F(ProgramApi, DevicePlannedProgramNeedsAGpu) {
  if (tte_cuda_device_count() > 0) {
    GTEST_SKIP() << "a CUDA device is present; the GPU tests cover device-planned programs";
  }
  Program program;
  open(program, "device_planned.pte");
  TteError error{};
  EXPECT_EQ(tte_program_load_method(program.get(), "forward", &error), TTE_ERROR_NO_DEVICE);
  EXPECT_NE(std::string(error.message).find("plans"), std::string::npos) << error.message;
  EXPECT_NE(std::string(error.message).find("target_device=cuda:0"), std::string::npos)
      << error.message;
  EXPECT_NE(std::string(error.message).find("no CUDA device"), std::string::npos) << error.message;
  // Metadata still comes from the program; the device stays unknown.
  TteValueInfo info{};
  ASSERT_EQ(tte_program_input_info(program.get(), "forward", 0, &info, &error), TTE_OK)
      << error.message;
  EXPECT_EQ(info.rank, 2);
  EXPECT_EQ(info.device_type, -1);
  EXPECT_EQ(info.device_index, -1);
}

TEST_F(ProgramApi, OutputsCanBeReleasedAfterClose) {
  TteProgram* handle = nullptr;
  ASSERT_EQ(tte_program_open_file(fixture("add_one.pte").c_str(), nullptr, &handle, nullptr),
            TTE_OK);
  auto x = float_tensor({2, 4});
  TteInput in = x.input();
  TteOutput view{};
  TteOutput copy{};
  ASSERT_EQ(tte_program_run(handle, "forward", &in, 1, 0, &view, 1, nullptr), TTE_OK);
  ASSERT_EQ(tte_program_run(handle, "forward", &in, 1, 1, &copy, 1, nullptr), TTE_OK);
  tte_program_close(handle);
  EXPECT_EQ(static_cast<const float*>(copy.tensor->dl_tensor.data)[0], 1.0f);
  view.tensor->deleter(view.tensor);
  copy.tensor->deleter(copy.tensor);
}

TEST_F(ProgramApi, EtdumpNeedsToBeEnabled) {
  Program program;
  open(program, "add_one.pte");
  TteError error{};
  EXPECT_EQ(tte_program_write_etdump(program.get(), "unused.etdp", &error),
            TTE_ERROR_INVALID_STATE);

  TteProgramOptions options{};
  options.struct_size = sizeof(options);
  options.enable_etdump = 1;
  Program traced;
  open(traced, "add_one.pte", &options);
  auto x = float_tensor({2, 4});
  Outputs outputs(1);
  ASSERT_EQ(run(traced, x.tensor, outputs), TTE_OK);
  const std::string path = ::testing::TempDir() + "tte_program_api.etdp";
  ASSERT_EQ(tte_program_write_etdump(traced.get(), path.c_str(), &error), TTE_OK) << error.message;
  EXPECT_GT(read_bytes(path).size(), 16u);
  std::remove(path.c_str());
  // Recording goes on after a write.
  outputs.release();
  ASSERT_EQ(run(traced, x.tensor, outputs), TTE_OK);
  ASSERT_EQ(tte_program_write_etdump(traced.get(), path.c_str(), &error), TTE_OK) << error.message;
  std::remove(path.c_str());
}

TEST_F(ProgramApi, EtdumpWritesSayWhatIsMissing) {
  TteProgramOptions options{};
  options.struct_size = sizeof(options);
  options.enable_etdump = 1;
  Program traced;
  open(traced, "add_one.pte", &options);
  TteError error{};
  // Nothing recorded before the first run.
  const std::string path = ::testing::TempDir() + "tte_program_api_unwritten.etdp";
  EXPECT_EQ(tte_program_write_etdump(traced.get(), path.c_str(), &error), TTE_ERROR_INVALID_STATE);
  EXPECT_NE(std::string(error.message).find("no ETDump events recorded yet: run a method first"),
            std::string::npos)
      << error.message;
  auto x = float_tensor({2, 4});
  Outputs outputs(1);
  ASSERT_EQ(run(traced, x.tensor, outputs), TTE_OK);
  // A folder that does not exist: the path and the reason.
  const std::string nowhere = ::testing::TempDir() + "no-such-folder/x.etdp";
  error = {};
  EXPECT_EQ(tte_program_write_etdump(traced.get(), nowhere.c_str(), &error), TTE_ERROR_NOT_FOUND);
  EXPECT_NE(std::string(error.message).find("cannot write '" + nowhere + "': "), std::string::npos)
      << error.message;
}

TEST_F(ProgramApi, ConcurrentRunsOnOneProgramAreSerialized) {
  Program program;
  open(program, "add_one.pte");
  std::vector<std::thread> threads;
  std::vector<int> failures(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        auto x = float_tensor({2, 4}, static_cast<float>(t * 1000 + i));
        TteInput in = x.input();
        Outputs outputs(1);
        if (tte_program_run(program.get(), "forward", &in, 1, 1, outputs.values.data(), 1,
                            nullptr) != TTE_OK ||
            outputs.floats(0)[0] != static_cast<float>(t * 1000 + i + 1)) {
          ++failures[t];
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures, std::vector<int>(4, 0));
}

TEST_F(ProgramApi, NullArgumentsAreErrors) {
  TteError error{};
  EXPECT_EQ(tte_program_open_file(nullptr, nullptr, nullptr, &error), TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(tte_program_num_methods(nullptr, nullptr, &error), TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(tte_program_last_error(nullptr), "");
  tte_program_close(nullptr);
}

}  // namespace

// ---- Method handles (C API version 2) ---------------------------------------

namespace {

// Owns a TteMethod.
struct Method {
  ~Method() { tte_method_release(handle); }
  TteMethod* handle = nullptr;
};

// An output allocator that records what it was asked for and hands out
// heap tensors it owns the shape of.
struct RecordingAllocator {
  struct Made {
    DLManagedTensorVersioned managed{};
    std::vector<int64_t> shape;
    std::vector<float> data;
    RecordingAllocator* owner;
  };
  int calls = 0;
  int deletes = 0;
  bool fail = false;
  bool wrong_shape = false;
  std::vector<const void*> handed_out;
  std::function<void()> on_allocate;  // called with every request

  static TteStatus allocate(void* context, const DLTensor* prototype,
                            DLManagedTensorVersioned** out, TteError* error) {
    auto* self = static_cast<RecordingAllocator*>(context);
    ++self->calls;
    if (self->on_allocate) self->on_allocate();
    if (self->fail) {
      std::snprintf(error->message, sizeof(error->message), "pool exhausted");
      return TTE_ERROR_OUT_OF_MEMORY;
    }
    auto* made = new Made();
    made->owner = self;
    made->shape.assign(prototype->shape, prototype->shape + prototype->ndim);
    if (self->wrong_shape) made->shape[0] += 1;
    size_t count = 1;
    for (int64_t d : made->shape) count *= static_cast<size_t>(d);
    made->data.assign(count, -1.0f);
    made->managed.version = DLPackVersion{1, 0};
    made->managed.manager_ctx = made;
    made->managed.deleter = [](DLManagedTensorVersioned* self_tensor) {
      auto* m = static_cast<Made*>(self_tensor->manager_ctx);
      ++m->owner->deletes;
      delete m;
    };
    made->managed.dl_tensor.data = made->data.data();
    made->managed.dl_tensor.device = prototype->device;
    made->managed.dl_tensor.ndim = prototype->ndim;
    made->managed.dl_tensor.dtype = prototype->dtype;
    made->managed.dl_tensor.shape = made->shape.data();
    self->handed_out.push_back(made->data.data());
    *out = &made->managed;
    return TTE_OK;
  }
};

TteRunOptions run_options(int copy) {
  TteRunOptions options{};
  options.struct_size = sizeof(TteRunOptions);
  options.copy_outputs = copy;
  return options;
}

}  // namespace

TEST_F(ProgramApi, MethodHandleRunsAndCounts) {
  Program program;
  open(program, "add_one.pte");
  Method method;
  TteError error{};
  ASSERT_EQ(tte_program_get_method(program.get(), "forward", &method.handle, &error), TTE_OK)
      << error.message;
  size_t inputs = 0;
  size_t outputs_count = 0;
  ASSERT_EQ(tte_method_io_count(method.handle, &inputs, &outputs_count, nullptr), TTE_OK);
  EXPECT_EQ(inputs, 1u);
  EXPECT_EQ(outputs_count, 1u);
  auto x = float_tensor({2, 4});
  TteInput in = x.input();
  for (int copy : {1, 0}) {
    Outputs outputs(1);
    const TteRunOptions options = run_options(copy);
    ASSERT_EQ(tte_method_run(method.handle, &in, 1, &options, outputs.values.data(), 1, &error),
              TTE_OK)
        << error.message;
    EXPECT_EQ(outputs.floats(0), (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}));
    EXPECT_EQ((outputs.values[0].tensor->flags & DLPACK_FLAG_BITMASK_IS_COPIED) != 0, copy == 1);
  }
  // NULL options: owned copies.
  Outputs defaults(1);
  ASSERT_EQ(tte_method_run(method.handle, &in, 1, nullptr, defaults.values.data(), 1, nullptr),
            TTE_OK);
  EXPECT_TRUE(defaults.values[0].tensor->flags & DLPACK_FLAG_BITMASK_IS_COPIED);

  TteMethod* unknown = nullptr;
  EXPECT_EQ(tte_program_get_method(program.get(), "backward", &unknown, &error),
            TTE_ERROR_NOT_FOUND);
  EXPECT_EQ(unknown, nullptr);
  EXPECT_NE(std::string(error.message).find("no method 'backward'"), std::string::npos)
      << error.message;
}

TEST_F(ProgramApi, ViewsAndMethodHandlesOutliveClose) {
  TteProgram* handle = nullptr;
  ASSERT_EQ(tte_program_open_file(fixture("add_one.pte").c_str(), nullptr, &handle, nullptr),
            TTE_OK);
  Method method;
  ASSERT_EQ(tte_program_get_method(handle, "forward", &method.handle, nullptr), TTE_OK);
  auto x = float_tensor({2, 4});
  TteInput in = x.input();
  Outputs view(1);
  const TteRunOptions options = run_options(0);
  ASSERT_EQ(tte_method_run(method.handle, &in, 1, &options, view.values.data(), 1, nullptr),
            TTE_OK);
  tte_program_close(handle);
  // The view's memory is still the program's (sanitizer and valgrind runs
  // check that it was not freed), and it is writable.
  EXPECT_EQ(view.floats(0), (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}));
  static_cast<float*>(view.values[0].tensor->dl_tensor.data)[0] = 42.0f;
  EXPECT_EQ(view.floats(0)[0], 42.0f);
  // Runs through the old handle fail, and say why.
  Outputs refused(1);
  TteError error{};
  EXPECT_EQ(tte_method_run(method.handle, &in, 1, &options, refused.values.data(), 1, &error),
            TTE_ERROR_INVALID_STATE);
  EXPECT_NE(std::string(error.message).find("closed"), std::string::npos) << error.message;
  EXPECT_EQ(refused.values[0].tag, TTE_VALUE_NONE);
}

TEST_F(ProgramApi, OwnedOutputsComeFromTheCallersAllocator) {
  Program program;
  open(program, "add_one.pte");
  Method method;
  ASSERT_EQ(tte_program_get_method(program.get(), "forward", &method.handle, nullptr), TTE_OK);
  auto x = float_tensor({2, 4});
  TteInput in = x.input();
  RecordingAllocator allocator;
  TteRunOptions options = run_options(1);
  options.allocate_output = &RecordingAllocator::allocate;
  options.allocator_context = &allocator;
  {
    Outputs outputs(1);
    TteError error{};
    ASSERT_EQ(tte_method_run(method.handle, &in, 1, &options, outputs.values.data(), 1, &error),
              TTE_OK)
        << error.message;
    EXPECT_EQ(allocator.calls, 1);
    ASSERT_EQ(allocator.handed_out.size(), 1u);
    EXPECT_EQ(outputs.values[0].tensor->dl_tensor.data, allocator.handed_out[0]);
    EXPECT_EQ(outputs.floats(0), (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}));
    EXPECT_TRUE(outputs.values[0].tensor->flags & DLPACK_FLAG_BITMASK_IS_COPIED);
  }
  EXPECT_EQ(allocator.deletes, 1);

  // Views never ask the allocator.
  Outputs view(1);
  const TteRunOptions views = [&] {
    TteRunOptions o = options;
    o.copy_outputs = 0;
    return o;
  }();
  ASSERT_EQ(tte_method_run(method.handle, &in, 1, &views, view.values.data(), 1, nullptr), TTE_OK);
  EXPECT_EQ(allocator.calls, 1);

  // A failing allocator fails the run with its reason.
  allocator.fail = true;
  Outputs failed(1);
  TteError error{};
  EXPECT_EQ(tte_method_run(method.handle, &in, 1, &options, failed.values.data(), 1, &error),
            TTE_ERROR_OUT_OF_MEMORY);
  EXPECT_NE(std::string(error.message).find("allocating output 0"), std::string::npos)
      << error.message;
  EXPECT_NE(std::string(error.message).find("pool exhausted"), std::string::npos) << error.message;

  // A tensor of the wrong shape is refused and handed back to its deleter.
  allocator.fail = false;
  allocator.wrong_shape = true;
  const int deletes = allocator.deletes;
  EXPECT_EQ(tte_method_run(method.handle, &in, 1, &options, failed.values.data(), 1, &error),
            TTE_ERROR_INTERNAL);
  EXPECT_NE(std::string(error.message).find("not a compact [2, 4] float32"), std::string::npos)
      << error.message;
  EXPECT_EQ(allocator.deletes, deletes + 1);
  EXPECT_EQ(failed.values[0].tag, TTE_VALUE_NONE);
}

TEST_F(ProgramApi, RunOptionsStreamIsForTheRunOnly) {
  Program program;
  open(program, "add_one.pte");
  Method method;
  ASSERT_EQ(tte_program_get_method(program.get(), "forward", &method.handle, nullptr), TTE_OK);
  auto x = float_tensor({2, 4});
  TteInput in = x.input();
  TteRunOptions options = run_options(1);
  options.has_stream = 1;
  options.stream = reinterpret_cast<void*>(0x7F00);  // a host program makes no CUDA call
  void* previous = nullptr;
  tte_clear_thread_stream();
  Outputs first(1);
  ASSERT_EQ(tte_method_run(method.handle, &in, 1, &options, first.values.data(), 1, nullptr),
            TTE_OK);
  EXPECT_EQ(tte_get_thread_stream(&previous), 0);
  tte_set_thread_stream(reinterpret_cast<void*>(0x1234));
  Outputs second(1);
  ASSERT_EQ(tte_method_run(method.handle, &in, 1, &options, second.values.data(), 1, nullptr),
            TTE_OK);
  ASSERT_EQ(tte_get_thread_stream(&previous), 1);
  EXPECT_EQ(previous, reinterpret_cast<void*>(0x1234));
  tte_clear_thread_stream();

  // Options from a caller that knows only the first field.
  TteRunOptions short_options{};
  short_options.struct_size = offsetof(TteRunOptions, has_stream);
  short_options.copy_outputs = 1;
  Outputs third(1);
  EXPECT_EQ(tte_method_run(method.handle, &in, 1, &short_options, third.values.data(), 1, nullptr),
            TTE_OK);
  short_options.struct_size = 2;
  TteError error{};
  EXPECT_EQ(tte_method_run(method.handle, &in, 1, &short_options, third.values.data(), 1, &error),
            TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(error.message).find("struct_size"), std::string::npos) << error.message;
}

// ---- The batched provider entry, as the backend uses it ----------------------

namespace {

// The host test provider library's own functions (it is loaded once per
// process; dlopen returns the same copy).
template <typename Function>
Function host_library_function(const char* name) {
  void* library = dlopen(TTE_TEST_HOST_PROVIDER, RTLD_NOW | RTLD_NOLOAD);
  return library == nullptr ? nullptr : reinterpret_cast<Function>(dlsym(library, name));
}

TteTestProviderStats host_stats() {
  TteTestProviderStats s{};
  s.struct_size = sizeof(s);
  host_library_function<void (*)(TteTestProviderStats*)>("tte_test_provider_stats")(&s);
  return s;
}

void reset_host_stats() { host_library_function<void (*)()>("tte_test_provider_reset_stats")(); }

// Runs `method` of a program opened with provider `name` `runs` times on
// shapes [rows, 4], one call per entry of `rows`.
void run_with_provider(const std::string& program, const char* name,
                       const std::vector<int64_t>& rows) {
  TteBackendOption option{};
  option.backend = "TensorRTBackend";
  option.key = "provider";
  option.type = TTE_OPTION_STRING;
  option.string_value = name;
  TteProgramOptions options{};
  options.struct_size = sizeof(options);
  options.backend_options = &option;
  options.num_backend_options = 1;
  TteProgram* handle = nullptr;
  TteError error{};
  ASSERT_EQ(tte_program_open_file(fixture(program).c_str(), &options, &handle, &error), TTE_OK)
      << error.message;
  Method method;
  ASSERT_EQ(tte_program_get_method(handle, "forward", &method.handle, &error), TTE_OK)
      << error.message;
  reset_host_stats();
  for (int64_t n : rows) {
    auto x = float_tensor({n, 4});
    TteInput in = x.input();
    Outputs outputs(1);
    ASSERT_EQ(tte_method_run(method.handle, &in, 1, nullptr, outputs.values.data(), 1, &error),
              TTE_OK)
        << error.message;
    EXPECT_EQ(outputs.shape(0), (std::vector<int64_t>{n, 4}));
    EXPECT_EQ(outputs.floats(0).back(), static_cast<float>(n * 4));
  }
  tte_program_close(handle);
}

}  // namespace

TEST_F(ProgramApi, BatchedProviderIsEnteredOncePerRunAndSetsShapesOnlyWhenTheyChange) {
  run_with_provider("add_one_dynamic.pte", "test-host", {2, 2, 2, 3, 3, 2});
  const TteTestProviderStats s = host_stats();
  // Shapes changed at runs 1, 4 and 6: one shapes call each, plus one enqueue call per run.
  EXPECT_EQ(s.executes, 6u + 3u);
  EXPECT_EQ(s.input_shapes_set, 3u);
  EXPECT_EQ(s.enqueues, 6u);
}

TEST_F(ProgramApi, PerTensorProvidersKeepThePerTensorPath) {
  using Entry = const TteEngineProvider* (*)();
  const TteEngineProvider* per_tensor =
      host_library_function<Entry>("tte_test_host_provider_per_tensor")();
  ASSERT_NE(per_tensor, nullptr);
  TteError error{};
  const TteStatus registered = tte_register_engine_provider(per_tensor, TTE_PROVIDER_OTHER, &error);
  ASSERT_TRUE(registered == TTE_OK ||
              std::string(error.message).find("already") != std::string::npos)
      << error.message;
  run_with_provider("add_one_dynamic.pte", "test-host-per-tensor", {2, 2, 3});
  const TteTestProviderStats s = host_stats();
  EXPECT_EQ(s.executes, 0u);
  EXPECT_EQ(s.input_shapes_set, 3u);  // every run sets every shape
  EXPECT_EQ(s.enqueues, 3u);
}

// An output the program must give memory (not planned) and whose shape is
// static is allocated by the caller before the run and written by the
// engine itself: no copy of it afterwards. Dropping back to the program's
// memory for views, and a failed run, hand every caller tensor back.
TEST_F(ProgramApi, UnplannedOwnedOutputsAreWrittenInPlace) {
  Program program;
  open(program, "add_one_unplanned_output.pte");
  TteValueInfo info{};
  ASSERT_EQ(tte_program_output_info(program.get(), "forward", 0, &info, nullptr), TTE_OK);
  ASSERT_EQ(info.is_memory_planned, 0);
  Method method;
  ASSERT_EQ(tte_program_get_method(program.get(), "forward", &method.handle, nullptr), TTE_OK);
  auto x = float_tensor({2, 4});
  TteInput in = x.input();
  RecordingAllocator allocator;
  std::vector<uint64_t> enqueues_at_allocation;
  // How often the engine was entered, through either of the provider's entries.
  const auto engine_calls = [] {
    const TteTestProviderStats s = host_stats();
    return s.enqueues + s.executes;
  };
  allocator.on_allocate = [&] { enqueues_at_allocation.push_back(engine_calls()); };
  TteRunOptions options = run_options(1);
  options.allocate_output = &RecordingAllocator::allocate;
  options.allocator_context = &allocator;
  for (int run = 0; run < 2; ++run) {
    const uint64_t enqueues = engine_calls();
    Outputs outputs(1);
    TteError error{};
    ASSERT_EQ(tte_method_run(method.handle, &in, 1, &options, outputs.values.data(), 1, &error),
              TTE_OK)
        << error.message;
    ASSERT_EQ(allocator.calls, run + 1);
    EXPECT_EQ(enqueues_at_allocation.back(), enqueues) << "allocated after the engine ran: a copy";
    EXPECT_GT(engine_calls(), enqueues);
    EXPECT_EQ(outputs.values[0].tensor->dl_tensor.data, allocator.handed_out.back());
    EXPECT_TRUE(outputs.values[0].tensor->flags & DLPACK_FLAG_BITMASK_IS_COPIED);
    EXPECT_EQ(outputs.floats(0), (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}));
  }
  EXPECT_EQ(allocator.deletes, 2);

  // Views are of the program's memory, not of a caller tensor.
  const TteRunOptions views = [&] {
    TteRunOptions o = options;
    o.copy_outputs = 0;
    return o;
  }();
  {
    Outputs view(1);
    ASSERT_EQ(tte_method_run(method.handle, &in, 1, &views, view.values.data(), 1, nullptr),
              TTE_OK);
    EXPECT_EQ(allocator.calls, 2);
    EXPECT_FALSE(view.values[0].tensor->flags & DLPACK_FLAG_BITMASK_IS_COPIED);
    EXPECT_EQ(view.floats(0), (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}));
  }

  // A tensor of the wrong shape is refused before the run and handed back.
  allocator.wrong_shape = true;
  Outputs failed(1);
  TteError error{};
  EXPECT_EQ(tte_method_run(method.handle, &in, 1, &options, failed.values.data(), 1, &error),
            TTE_ERROR_INTERNAL);
  EXPECT_NE(std::string(error.message).find("not a compact [2, 4] float32"), std::string::npos)
      << error.message;
  EXPECT_EQ(allocator.deletes, 3);
  EXPECT_EQ(failed.values[0].tag, TTE_VALUE_NONE);
  allocator.wrong_shape = false;

  // A run the engine fails hands the caller tensor back too.
  auto wrong = float_tensor({4, 2});
  TteInput bad = wrong.input();
  EXPECT_NE(tte_method_run(method.handle, &bad, 1, &options, failed.values.data(), 1, &error),
            TTE_OK);
  EXPECT_EQ(allocator.deletes, allocator.calls);

  // And the method still runs, in place.
  Outputs again(1);
  ASSERT_EQ(tte_method_run(method.handle, &in, 1, &options, again.values.data(), 1, &error), TTE_OK)
      << error.message;
  EXPECT_EQ(again.values[0].tensor->dl_tensor.data, allocator.handed_out.back());
  EXPECT_EQ(again.floats(0), (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}));
}

// Owned outputs are written in place whatever the load options say, CUDA
// graphs on or off: the graph cache updates a graph to a call's new
// addresses (cuda/cuda_graph_cache.h), so keeping outputs in the program's
// memory for stable addresses would cost a device copy and a second wait
// per call and save nothing.
TEST_F(ProgramApi, OwnedOutputsAreWrittenInPlaceWithOrWithoutCudaGraphs) {
  struct Case {
    std::vector<std::pair<const char*, int64_t>> options;  // (backend, cuda_graphs value)
  };
  const std::vector<Case> cases = {
      {{}},
      {{{"TensorRTBackend", 0}}},
      {{{"TensorRTBackend", 1}}},
      {{{"TensorRTBackend", 1}, {"TensorRTBackend", 0}}},
      {{{"OtherBackend", 1}}},
  };
  for (const Case& c : cases) {
    std::vector<TteBackendOption> given;
    for (const auto& [backend, value] : c.options) {
      TteBackendOption option{};
      option.backend = backend;
      option.key = "cuda_graphs";
      option.type = TTE_OPTION_BOOL;
      option.int_value = value;
      given.push_back(option);
    }
    TteProgramOptions options{};
    options.struct_size = sizeof(options);
    options.backend_options = given.data();
    options.num_backend_options = given.size();
    Program program;
    open(program, "add_one_unplanned_output.pte", &options);
    Method method;
    ASSERT_EQ(tte_program_get_method(program.get(), "forward", &method.handle, nullptr), TTE_OK);
    auto x = float_tensor({2, 4});
    TteInput in = x.input();
    RecordingAllocator allocator;
    uint64_t engine_calls_at_allocation = 0;
    allocator.on_allocate = [&] {
      const TteTestProviderStats s = host_stats();
      engine_calls_at_allocation = s.enqueues + s.executes;
    };
    TteRunOptions run = run_options(1);
    run.allocate_output = &RecordingAllocator::allocate;
    run.allocator_context = &allocator;
    const TteTestProviderStats before = host_stats();
    Outputs outputs(1);
    TteError error{};
    ASSERT_EQ(tte_method_run(method.handle, &in, 1, &run, outputs.values.data(), 1, &error), TTE_OK)
        << error.message;
    EXPECT_EQ(engine_calls_at_allocation, before.enqueues + before.executes)
        << c.options.size() << " options: allocated after the engine ran";
    EXPECT_EQ(outputs.values[0].tensor->dl_tensor.data, allocator.handed_out.back());
    EXPECT_EQ(outputs.floats(0), (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}));
  }
}

// Concurrent runs of one method borrow instances of their own (option
// max_concurrent_runs): results stay right, the engine is deserialized once
// (the extra instances' delegates share it), and no more instances are
// made than allowed. Whether threads overlap is timing: the GPU benchmark
// measures it.
TEST_F(ProgramApi, ConcurrentRunsUseInstancesThatShareTheEngine) {
  for (int64_t allowed : {1, 3}) {
    TteBackendOption option{};
    option.backend = "TensorRTBackend";
    option.key = "max_concurrent_runs";
    option.type = TTE_OPTION_INT;
    option.int_value = allowed;
    TteProgramOptions options{};
    options.struct_size = sizeof(options);
    options.backend_options = &option;
    options.num_backend_options = 1;
    reset_host_stats();
    Program program;
    open(program, "add_one.pte", &options);
    std::vector<std::thread> threads;
    std::vector<int> failures(4, 0);
    std::atomic<int> ready{0};
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        ready.fetch_add(1);
        while (ready.load() < 4) std::this_thread::yield();
        for (int i = 0; i < 1000; ++i) {
          auto x = float_tensor({2, 4}, static_cast<float>(t * 1000 + i));
          TteInput in = x.input();
          Outputs outputs(1);
          if (tte_program_run(program.get(), "forward", &in, 1, 1, outputs.values.data(), 1,
                              nullptr) != TTE_OK ||
              outputs.floats(0)[7] != static_cast<float>(t * 1000 + i + 8)) {
            ++failures[t];
          }
        }
      });
    }
    for (auto& thread : threads) thread.join();
    EXPECT_EQ(failures, std::vector<int>(4, 0));
    const TteTestProviderStats s = host_stats();
    EXPECT_EQ(s.deserializes, 1u);
    EXPECT_LE(s.execution_contexts, static_cast<uint64_t>(allowed - 1))
        << "extra instances, shared engine";
    std::printf("max_concurrent_runs %lld: %llu extra instances made\n",
                static_cast<long long>(allowed),
                static_cast<unsigned long long>(s.execution_contexts));
  }
}

TEST_F(ProgramApi, MaxConcurrentRunsMustBeAPositiveInt) {
  TteBackendOption option{};
  option.backend = "TensorRTBackend";
  option.key = "max_concurrent_runs";
  option.type = TTE_OPTION_INT;
  option.int_value = 0;
  TteProgramOptions options{};
  options.struct_size = sizeof(options);
  options.backend_options = &option;
  options.num_backend_options = 1;
  Program program;
  TteError error{};
  EXPECT_EQ(tte_program_open_file(fixture("add_one.pte").c_str(), &options, program.out(), &error),
            TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(error.message).find("max_concurrent_runs"), std::string::npos)
      << error.message;
}

// max_concurrent_runs is read as TensorRTBackend reads its options: for its
// backend id only, the last value given wins. Another backend's option of
// that name is that backend's (passed through, never checked here).
TEST_F(ProgramApi, MaxConcurrentRunsIsTensorRTBackendsOptionTheLastValueWinning) {
  struct Given {
    const char* backend;
    TteOptionType type;
    int64_t int_value;
    const char* string_value;
  };
  struct Case {
    std::vector<Given> options;
    TteStatus expected;
  };
  const std::vector<Case> cases = {
      {{{"TensorRTBackend", TTE_OPTION_INT, 2, ""}}, TTE_OK},
      {{{"TensorRTBackend", TTE_OPTION_STRING, 0, "x"}}, TTE_ERROR_INVALID_ARGUMENT},
      {{{"OtherBackend", TTE_OPTION_STRING, 0, "x"}}, TTE_OK},
      {{{"OtherBackend", TTE_OPTION_INT, 0, ""}}, TTE_OK},
      {{{"TensorRTBackend", TTE_OPTION_INT, 0, ""}, {"TensorRTBackend", TTE_OPTION_INT, 2, ""}},
       TTE_OK},
      {{{"TensorRTBackend", TTE_OPTION_INT, 2, ""}, {"TensorRTBackend", TTE_OPTION_INT, 0, ""}},
       TTE_ERROR_INVALID_ARGUMENT},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    std::vector<TteBackendOption> given;
    for (const Given& g : cases[i].options) {
      TteBackendOption option{};
      option.backend = g.backend;
      option.key = "max_concurrent_runs";
      option.type = g.type;
      option.int_value = g.int_value;
      option.string_value = g.string_value;
      given.push_back(option);
    }
    TteProgramOptions options{};
    options.struct_size = sizeof(options);
    options.backend_options = given.data();
    options.num_backend_options = given.size();
    Program program;
    TteError error{};
    EXPECT_EQ(
        tte_program_open_file(fixture("add_one.pte").c_str(), &options, program.out(), &error),
        cases[i].expected)
        << "case " << i << ": " << error.message;
    if (cases[i].expected != TTE_OK) {
      EXPECT_NE(std::string(error.message).find("max_concurrent_runs"), std::string::npos)
          << "case " << i << ": " << error.message;
    }
  }
}
