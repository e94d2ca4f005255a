// The Program C API with CUDA memory: device tensors in, device outputs out,
// device-planned and device-resident programs, caller streams. Runs the
// fixture programs of test_program_api with the CUDA test provider (real
// kernels: y = x + 1); every case skips without a CUDA device.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "testing/test_provider_api.h"
#include "torch_tensorrt_executorch/c_api.h"

namespace {

std::string fixture_dir() {
  const char* dir = std::getenv("TTE_CPP_FIXTURE_DIR");
  return dir != nullptr ? dir : TTE_CPP_FIXTURE_DIR;
}

std::string fixture(const std::string& name) { return fixture_dir() + "/" + name; }

std::string cuda_provider_path() {
  const char* dir = std::getenv("TTE_TEST_PROVIDER_DIR");
  const std::filesystem::path base =
      dir != nullptr ? std::filesystem::path(dir)
                     : std::filesystem::path(TTE_TEST_HOST_PROVIDER).parent_path();
  return (base / "libtte_test_provider_cuda.so").string();
}

class Program {
 public:
  ~Program() { tte_program_close(handle_); }
  TteProgram* get() const { return handle_; }
  TteProgram** out() { return &handle_; }

 private:
  TteProgram* handle_ = nullptr;
};

// Device memory holding `values` (floats), seen as a kDLCUDA DLTensor.
struct DeviceTensor {
  DeviceTensor(std::vector<int64_t> dims, const std::vector<float>& values)
      : shape(std::move(dims)) {
    bytes = values.size() * sizeof(float);
    EXPECT_EQ(cudaMalloc(&data, bytes == 0 ? 1 : bytes), cudaSuccess);
    if (bytes > 0) {
      EXPECT_EQ(cudaMemcpy(data, values.data(), bytes, cudaMemcpyHostToDevice), cudaSuccess);
    }
    tensor.data = data;
    tensor.device = DLDevice{kDLCUDA, 0};
    tensor.ndim = static_cast<int32_t>(shape.size());
    tensor.dtype = DLDataType{kDLFloat, 32, 1};
    tensor.shape = shape.data();
  }
  ~DeviceTensor() { cudaFree(data); }
  std::vector<int64_t> shape;
  void* data = nullptr;
  size_t bytes = 0;
  DLTensor tensor{};
};

std::vector<float> iota(size_t count, float first) {
  std::vector<float> values(count);
  for (size_t i = 0; i < count; ++i) values[i] = first + static_cast<float>(i);
  return values;
}

// Reads a float output wherever it lives.
std::vector<float> read_floats(const DLTensor& t) {
  size_t count = 1;
  for (int32_t d = 0; d < t.ndim; ++d) count *= static_cast<size_t>(t.shape[d]);
  std::vector<float> values(count);
  if (count > 0) {
    EXPECT_EQ(cudaMemcpy(values.data(), static_cast<const char*>(t.data) + t.byte_offset,
                         count * sizeof(float), cudaMemcpyDefault),
              cudaSuccess);
  }
  return values;
}

struct Output {
  ~Output() {
    if (value.tensor != nullptr) value.tensor->deleter(value.tensor);
  }
  TteOutput value{};
};

class ProgramGpu : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (tte_cuda_device_count() == 0) {
      return;
    }
    if (access(cuda_provider_path().c_str(), F_OK) != 0) {
      return;
    }
    TteError error{};
    provider_loaded_ = tte_load_engine_provider_library(cuda_provider_path().c_str(),
                                                        TTE_PROVIDER_OTHER, &error) == TTE_OK;
    if (!provider_loaded_) {
      provider_error_ = error.message;
    }
  }

  void SetUp() override {
    if (tte_cuda_device_count() == 0) {
      GTEST_SKIP() << "no CUDA device";
    }
    if (access(cuda_provider_path().c_str(), F_OK) != 0) {
      GTEST_SKIP() << "CUDA test provider not built at " << cuda_provider_path();
    }
    ASSERT_TRUE(provider_loaded_) << provider_error_;
  }

  void open(Program& program, const std::string& name) {
    TteError error{};
    ASSERT_EQ(tte_program_open_file(fixture(name).c_str(), nullptr, program.out(), &error), TTE_OK)
        << error.message;
  }

  TteStatus run(Program& program, const DLTensor& x, Output& y, int copy, std::string* message) {
    TteInput in{};
    in.tag = TTE_VALUE_TENSOR;
    in.tensor = &x;
    TteError error{};
    const TteStatus status =
        tte_program_run(program.get(), "forward", &in, 1, copy, &y.value, 1, &error);
    *message = error.message;
    return status;
  }

  static bool provider_loaded_;
  static std::string provider_error_;
};

bool ProgramGpu::provider_loaded_ = false;
std::string ProgramGpu::provider_error_;

TEST_F(ProgramGpu, DeviceInputToAHostPlannedProgram) {
  Program program;
  open(program, "add_one.pte");
  DeviceTensor x({2, 4}, iota(8, 0));
  Output y;
  std::string message;
  ASSERT_EQ(run(program, x.tensor, y, 1, &message), TTE_OK) << message;
  EXPECT_EQ(y.value.tensor->dl_tensor.device.device_type, kDLCPU);
  EXPECT_EQ(read_floats(y.value.tensor->dl_tensor), iota(8, 1));
}

// keep_positive on the CUDA test provider: the shape the kernel produced
// (empty, partial, full), device inputs, owned copies and views; past the
// planned bound the engine writes into its own memory and the result comes
// back whole, or the run fails naming the bound.
TEST_F(ProgramGpu, DataDependentOutputsHaveTheShapeTheKernelProduced) {
  Program program;
  open(program, "keep_positive.pte");
  const std::vector<std::vector<float>> cases = {
      {-1, 0, -2}, {-1, 2, 0, 3, -4, 5}, {1, 2, 3, 4, 5, 6, 7, 8}};
  for (int copy : {1, 0}) {
    for (const std::vector<float>& values : cases) {
      DeviceTensor x({static_cast<int64_t>(values.size())}, values);
      std::vector<float> expected;
      for (float v : values) {
        if (v > 0) expected.push_back(v);
      }
      Output y;
      std::string message;
      ASSERT_EQ(run(program, x.tensor, y, copy, &message), TTE_OK) << message;
      const DLTensor& t = y.value.tensor->dl_tensor;
      ASSERT_EQ(t.ndim, 1);
      EXPECT_EQ(t.shape[0], static_cast<int64_t>(expected.size()));
      EXPECT_EQ(read_floats(t), expected);
    }
  }
  Program bound16;
  open(bound16, "keep_positive_bound16.pte");
  std::vector<float> some(32, -1.0f);
  for (int i = 0; i < 10; ++i) some[3 * i] = static_cast<float>(i + 1);
  DeviceTensor fits({32}, some);
  Output y;
  std::string message;
  ASSERT_EQ(run(bound16, fits.tensor, y, 1, &message), TTE_OK) << message;
  EXPECT_EQ(read_floats(y.value.tensor->dl_tensor), iota(10, 1));
  DeviceTensor too_many({32}, iota(32, 1));
  Output refused;
  EXPECT_EQ(run(bound16, too_many.tensor, refused, 1, &message), TTE_ERROR_RUNTIME);
  EXPECT_NE(message.find("upper bound [16]"), std::string::npos) << message;
}

TEST_F(ProgramGpu, DevicePlannedProgramRuns) {
  Program program;
  open(program, "device_planned.pte");
  std::vector<float> host = iota(8, 10);
  std::vector<int64_t> shape{2, 4};
  DLTensor x{};
  x.data = host.data();
  x.device = DLDevice{kDLCPU, 0};
  x.ndim = 2;
  x.dtype = DLDataType{kDLFloat, 32, 1};
  x.shape = shape.data();
  Output y;
  std::string message;
  ASSERT_EQ(run(program, x, y, 1, &message), TTE_OK) << message;
  EXPECT_EQ(read_floats(y.value.tensor->dl_tensor), iota(8, 11));
  // Device inputs reach the same host-planned method input.
  DeviceTensor dx({2, 4}, iota(8, 20));
  Output y2;
  ASSERT_EQ(run(program, dx.tensor, y2, 1, &message), TTE_OK) << message;
  EXPECT_EQ(read_floats(y2.value.tensor->dl_tensor), iota(8, 21));
}

TEST_F(ProgramGpu, DeviceResidentOutputsStayOnTheDevice) {
  Program program;
  open(program, "device_resident.pte");
  DeviceTensor x({2, 4}, iota(8, 0));
  std::string message;
  Output view;
  ASSERT_EQ(run(program, x.tensor, view, 0, &message), TTE_OK) << message;
  const DLManagedTensorVersioned* v = view.value.tensor;
  EXPECT_EQ(v->dl_tensor.device.device_type, kDLCUDA);
  EXPECT_EQ(v->dl_tensor.device.device_id, 0);
  EXPECT_FALSE(v->flags & DLPACK_FLAG_BITMASK_IS_COPIED);
  cudaPointerAttributes attributes{};
  ASSERT_EQ(cudaPointerGetAttributes(&attributes, v->dl_tensor.data), cudaSuccess);
  EXPECT_EQ(attributes.type, cudaMemoryTypeDevice);
  EXPECT_EQ(read_floats(v->dl_tensor), iota(8, 1));

  Output copy;
  ASSERT_EQ(run(program, x.tensor, copy, 1, &message), TTE_OK) << message;
  const DLManagedTensorVersioned* c = copy.value.tensor;
  EXPECT_EQ(c->dl_tensor.device.device_type, kDLCUDA);
  EXPECT_TRUE(c->flags & DLPACK_FLAG_BITMASK_IS_COPIED);
  EXPECT_NE(c->dl_tensor.data, v->dl_tensor.data);
  EXPECT_EQ(read_floats(c->dl_tensor), iota(8, 1));
}

// The CUDA test provider's enqueue count.
uint64_t cuda_provider_enqueues() {
  void* library = dlopen(cuda_provider_path().c_str(), RTLD_NOW | RTLD_NOLOAD);
  auto stats = library == nullptr ? nullptr
                                  : reinterpret_cast<void (*)(TteTestProviderStats*)>(
                                        dlsym(library, "tte_test_provider_stats"));
  EXPECT_NE(stats, nullptr);
  TteTestProviderStats seen{};
  seen.struct_size = sizeof(seen);
  if (stats != nullptr) stats(&seen);
  return seen.enqueues;
}

// A caller's allocator of device tensors that notes how many enqueues the
// provider had made when it was asked: an output allocated before the engine
// ran is one the engine wrote into.
struct DeviceAllocator {
  struct Made {
    DLManagedTensorVersioned managed{};
    std::vector<int64_t> shape;
    DeviceAllocator* owner;
  };
  std::vector<void*> handed_out;
  std::vector<uint64_t> enqueues_before;
  int deletes = 0;

  static TteStatus allocate(void* context, const DLTensor* prototype,
                            DLManagedTensorVersioned** out, TteError*) {
    auto* self = static_cast<DeviceAllocator*>(context);
    self->enqueues_before.push_back(cuda_provider_enqueues());
    auto* made = new Made();
    made->owner = self;
    made->shape.assign(prototype->shape, prototype->shape + prototype->ndim);
    size_t bytes = prototype->dtype.bits / 8;
    for (int64_t d : made->shape) bytes *= static_cast<size_t>(d);
    void* data = nullptr;
    EXPECT_EQ(cudaMalloc(&data, bytes == 0 ? 1 : bytes), cudaSuccess);
    made->managed.version = DLPackVersion{1, 0};
    made->managed.manager_ctx = made;
    made->managed.deleter = [](DLManagedTensorVersioned* self_tensor) {
      auto* m = static_cast<Made*>(self_tensor->manager_ctx);
      ++m->owner->deletes;
      cudaFree(self_tensor->dl_tensor.data);
      delete m;
    };
    made->managed.dl_tensor.data = data;
    made->managed.dl_tensor.device = prototype->device;
    made->managed.dl_tensor.ndim = prototype->ndim;
    made->managed.dl_tensor.dtype = prototype->dtype;
    made->managed.dl_tensor.shape = made->shape.data();
    self->handed_out.push_back(data);
    *out = &made->managed;
    return TTE_OK;
  }
};

// A non-planned output of static shape is written by the engine straight
// into the tensor the caller's allocator made: no device copy of it after
// the run. Views of the same method still come from the program's memory.
TEST_F(ProgramGpu, DeviceResidentOwnedOutputsAreWrittenInPlace) {
  Program program;
  open(program, "device_resident.pte");
  TteMethod* method = nullptr;
  ASSERT_EQ(tte_program_get_method(program.get(), "forward", &method, nullptr), TTE_OK);
  DeviceTensor x({2, 4}, iota(8, 0));
  TteInput in{};
  in.tag = TTE_VALUE_TENSOR;
  in.tensor = &x.tensor;
  DeviceAllocator allocator;
  TteRunOptions options{};
  options.struct_size = sizeof(options);
  options.copy_outputs = 1;
  options.allocate_output = &DeviceAllocator::allocate;
  options.allocator_context = &allocator;
  for (int run = 0; run < 2; ++run) {
    const uint64_t enqueues = cuda_provider_enqueues();
    Output y;
    TteError error{};
    ASSERT_EQ(tte_method_run(method, &in, 1, &options, &y.value, 1, &error), TTE_OK)
        << error.message;
    ASSERT_EQ(allocator.handed_out.size(), static_cast<size_t>(run + 1));
    EXPECT_EQ(allocator.enqueues_before.back(), enqueues) << "allocated after the engine ran";
    EXPECT_EQ(cuda_provider_enqueues(), enqueues + 1);
    EXPECT_EQ(y.value.tensor->dl_tensor.data, allocator.handed_out.back());
    EXPECT_TRUE(y.value.tensor->flags & DLPACK_FLAG_BITMASK_IS_COPIED);
    EXPECT_EQ(read_floats(y.value.tensor->dl_tensor), iota(8, 1));
  }
  EXPECT_EQ(allocator.deletes, 2);

  TteRunOptions views = options;
  views.copy_outputs = 0;
  Output view;
  ASSERT_EQ(tte_method_run(method, &in, 1, &views, &view.value, 1, nullptr), TTE_OK);
  EXPECT_EQ(allocator.handed_out.size(), 2u);
  EXPECT_FALSE(view.value.tensor->flags & DLPACK_FLAG_BITMASK_IS_COPIED);
  EXPECT_EQ(read_floats(view.value.tensor->dl_tensor), iota(8, 1));
  tte_method_release(method);
}

TEST_F(ProgramGpu, DeviceResidentProgramStagesHostInputs) {
  Program program;
  open(program, "device_resident.pte");
  std::vector<float> host = iota(8, 5);
  std::vector<int64_t> shape{2, 4};
  DLTensor x{};
  x.data = host.data();
  x.device = DLDevice{kDLCPU, 0};
  x.ndim = 2;
  x.dtype = DLDataType{kDLFloat, 32, 1};
  x.shape = shape.data();
  Output y;
  std::string message;
  ASSERT_EQ(run(program, x, y, 1, &message), TTE_OK) << message;
  EXPECT_EQ(read_floats(y.value.tensor->dl_tensor), iota(8, 6));
}

TEST_F(ProgramGpu, CallerStreamIsUsed) {
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  tte_set_thread_stream(stream);
  {
    Program program;
    open(program, "device_resident.pte");
    DeviceTensor x({2, 4}, iota(8, 100));
    Output y;
    std::string message;
    ASSERT_EQ(run(program, x.tensor, y, 1, &message), TTE_OK) << message;
    // Returned with the work finished: nothing left on the stream.
    EXPECT_EQ(cudaStreamQuery(stream), cudaSuccess);
    EXPECT_EQ(read_floats(y.value.tensor->dl_tensor), iota(8, 101));
    Program host_program;
    open(host_program, "add_one.pte");
    Output z;
    ASSERT_EQ(run(host_program, x.tensor, z, 1, &message), TTE_OK) << message;
    EXPECT_EQ(read_floats(z.value.tensor->dl_tensor), iota(8, 101));
  }
  tte_clear_thread_stream();
  cudaStreamDestroy(stream);
}

TEST_F(ProgramGpu, ZeroSizeDeviceTensor) {
  Program program;
  open(program, "add_one_zero.pte");
  DeviceTensor x({0, 4}, {});
  Output y;
  std::string message;
  ASSERT_EQ(run(program, x.tensor, y, 1, &message), TTE_OK) << message;
  EXPECT_EQ(y.value.tensor->dl_tensor.shape[0], 0);
}

}  // namespace
