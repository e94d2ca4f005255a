// The CUDA test providers ("test-cuda", "test-cuda-nocapture") through the
// provider ABI. Cases that need a GPU skip with a message on a machine
// without one; there, deserialize must answer TTE_ERROR_NO_DEVICE.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "testing/test_provider_api.h"
#include "text_match.h"
#include "torch_tensorrt_executorch/engine_provider.h"

extern "C" const TteEngineProvider* tte_engine_provider_entry(uint32_t abi_version);

namespace {

const TteEngineProvider& capturable() {
  return *tte_engine_provider_entry(TTE_ENGINE_PROVIDER_ABI_VERSION);
}
const TteEngineProvider& uncapturable() { return *tte_test_cuda_provider_uncapturable(); }

bool have_gpu() {
  int count = 0;
  bool ok = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
  cudaGetLastError();
  return ok;
}

#define REQUIRE_GPU() \
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device: this case runs on a GPU machine"

using tte_test::contains;

std::string input(const std::string& name, const std::string& dtype, const std::string& dims) {
  return R"({"name":")" + name + R"(","is_input":true,"dtype":")" + dtype +
         R"(","profiles":[{"min":)" + dims + R"(,"opt":)" + dims + R"(,"max":)" + dims + "}]}";
}

std::string output(const std::string& name, const std::string& dtype, const std::string& shape_of) {
  return R"({"name":")" + name + R"(","is_input":false,"dtype":")" + dtype + R"(","shape_of":")" +
         shape_of + "\"}";
}

std::string add_one_plan(const std::string& dtype, size_t n, const std::string& extra = "") {
  std::string dims = "[" + std::to_string(n) + "]";
  return R"({"op":"add_one","tensors":[)" + input("x", dtype, dims) + "," +
         output("y", dtype, "x") + "]" + extra + "}";
}

std::string kv_plan(size_t n, const std::string& extra = "") {
  std::string dims = "[" + std::to_string(n) + "]";
  return R"({"op":"kv_update","tensors":[)" + input("cache", "float32", dims) + "," +
         input("x", "float32", dims) + "," + output("cache_out", "float32", "cache") + "," +
         output("y", "float32", "cache") + R"(],"aliases":{"cache_out":"cache"})" + extra + "}";
}

struct Result {
  TteStatus status;
  std::string message;
};

class Engine {
 public:
  Engine(const TteEngineProvider& provider, const std::string& json,
         const TteEngineLoadOptions* options = nullptr)
      : provider_(provider) {
    std::string plan = "TTE-TEST-ENGINE\n" + json;
    TteError error{};
    status_ = provider.deserialize(provider.user_data, plan.data(), plan.size(), options, &engine_,
                                   &error);
    message_ = error.message;
  }
  ~Engine() {
    if (engine_ != nullptr) provider_.destroy(engine_);
  }
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  TteEngine* get() const { return engine_; }
  TteStatus status() const { return status_; }
  const std::string& message() const { return message_; }

  Result set_shape(int32_t index, std::vector<int64_t> dims) {
    TteError error{};
    TteStatus s = provider_.set_input_shape(engine_, index, dims.data(),
                                            static_cast<int32_t>(dims.size()), &error);
    return {s, error.message};
  }
  Result set_address(int32_t index, void* address) {
    TteError error{};
    TteStatus s = provider_.set_tensor_address(engine_, index, address, &error);
    return {s, error.message};
  }
  Result enqueue(cudaStream_t stream) {
    TteError error{};
    TteStatus s = provider_.enqueue(engine_, stream, &error);
    return {s, error.message};
  }

 private:
  const TteEngineProvider& provider_;
  TteEngine* engine_ = nullptr;
  TteStatus status_ = TTE_OK;
  std::string message_;
};

#define ASSERT_LOADED(engine) ASSERT_EQ((engine).status(), TTE_OK) << (engine).message()
#define ASSERT_CUDA(call) ASSERT_EQ((call), cudaSuccess) << #call

TteTestProviderStats stats() {
  TteTestProviderStats s{};
  s.struct_size = sizeof(s);
  tte_test_provider_stats(&s);
  return s;
}

// Device memory holding a copy of a host vector.
template <typename T>
class DeviceVector {
 public:
  explicit DeviceVector(const std::vector<T>& host) : size_(host.size()) {
    EXPECT_EQ(cudaMalloc(&data_, bytes()), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(data_, host.data(), bytes(), cudaMemcpyHostToDevice), cudaSuccess);
    // A pageable cudaMemcpy may return before its DMA lands, and the tests'
    // stream does not wait for the legacy stream.
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  }
  explicit DeviceVector(size_t n) : DeviceVector(std::vector<T>(n)) {}
  ~DeviceVector() { cudaFree(data_); }
  DeviceVector(const DeviceVector&) = delete;
  DeviceVector& operator=(const DeviceVector&) = delete;

  T* get() const { return static_cast<T*>(data_); }
  size_t bytes() const { return size_ * sizeof(T); }
  std::vector<T> host() const {
    std::vector<T> out(size_);
    EXPECT_EQ(cudaMemcpy(out.data(), data_, bytes(), cudaMemcpyDeviceToHost), cudaSuccess);
    return out;
  }

 private:
  void* data_ = nullptr;
  size_t size_;
};

class CudaTestProvider : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have_gpu()) GTEST_SKIP() << "no CUDA device: this case runs on a GPU machine";
    ASSERT_CUDA(cudaSetDevice(0));
    ASSERT_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    tte_test_provider_reset_stats();
  }
  void TearDown() override {
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }

  template <typename T>
  std::vector<T> add_one(const std::string& dtype, const std::vector<T>& x) {
    Engine engine(capturable(), add_one_plan(dtype, x.size()));
    EXPECT_EQ(engine.status(), TTE_OK) << engine.message();
    DeviceVector<T> dx(x), dy(x.size());
    engine.set_shape(0, {static_cast<int64_t>(x.size())});
    engine.set_address(0, dx.get());
    engine.set_address(1, dy.get());
    Result r = engine.enqueue(stream_);
    EXPECT_EQ(r.status, TTE_OK) << r.message;
    EXPECT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
    return dy.host();
  }

  cudaStream_t stream_ = nullptr;
};

TEST(CudaTestProviderAbi, TwoProvidersDifferOnlyInCapture) {
  EXPECT_EQ(tte_engine_provider_entry(0), nullptr);
  EXPECT_EQ(tte_engine_provider_entry(TTE_ENGINE_PROVIDER_ABI_VERSION + 1), nullptr);
  const TteEngineProvider& a = capturable();
  const TteEngineProvider& b = uncapturable();
  EXPECT_STREQ(a.name, "test-cuda");
  EXPECT_STREQ(b.name, "test-cuda-nocapture");
  for (const TteEngineProvider* p : {&a, &b}) {
    EXPECT_EQ(p->abi_version, TTE_ENGINE_PROVIDER_ABI_VERSION);
    EXPECT_EQ(p->struct_size, sizeof(TteEngineProvider));
    EXPECT_EQ(p->memory_kind, TTE_MEMORY_DEVICE);
    EXPECT_EQ(p->release, nullptr);
    EXPECT_NE(p->deserialize, nullptr);
    EXPECT_NE(p->enqueue, nullptr);
    EXPECT_NE(p->destroy, nullptr);
  }
  EXPECT_EQ(a.enqueue_capturable, 1);
  EXPECT_EQ(b.enqueue_capturable, 0);
  EXPECT_EQ(a.enqueue, b.enqueue);
}

TEST(CudaTestProviderAbi, OtherPlansAreNotAcceptedWithOrWithoutAGpu) {
  std::string plan("ftrt\0\0\0\0 a TensorRT plan", 25);
  TteEngine* engine = nullptr;
  TteError error{};
  EXPECT_EQ(capturable().deserialize(capturable().user_data, plan.data(), plan.size(), nullptr,
                                     &engine, &error),
            TTE_ERROR_NOT_ACCEPTED);
  EXPECT_TRUE(contains(error.message, "test-cuda accepts only test-engine plans")) << error.message;
  EXPECT_EQ(engine, nullptr);
}

TEST(CudaTestProviderAbi, InvalidPlansAreInvalidProgramsWithOrWithoutAGpu) {
  Engine engine(capturable(),
                R"({"op":"add_one","tensors":[)" + input("x", "float32", "[4]") + "]}");
  EXPECT_EQ(engine.status(), TTE_ERROR_INVALID_PROGRAM);
  EXPECT_TRUE(contains(engine.message(), "op 'add_one' takes 1 input and 1 output"))
      << engine.message();
}

TEST(CudaTestProviderAbi, NoDeviceIsAClearError) {
  if (have_gpu()) GTEST_SKIP() << "this machine has a CUDA device";
  for (const TteEngineProvider* p : {&capturable(), &uncapturable()}) {
    Engine engine(*p, add_one_plan("float32", 4));
    EXPECT_EQ(engine.status(), TTE_ERROR_NO_DEVICE);
    EXPECT_EQ(engine.get(), nullptr);
    EXPECT_TRUE(contains(engine.message(), std::string("no CUDA device: provider ") + p->name +
                                               " needs an NVIDIA GPU"))
        << engine.message();
  }
}

TEST_F(CudaTestProvider, AddOneInEveryArithmeticDtype) {
  std::vector<float> x(100000);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) * 0.5f - 7.0f;
  std::vector<float> y = add_one<float>("float32", x);
  for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(y[i], x[i] + 1.0f) << i;
  EXPECT_EQ(add_one<double>("float64", {0.25, -7.0}), (std::vector<double>{1.25, -6.0}));
  EXPECT_EQ(add_one<int64_t>("int64", {-1, 41, INT64_MAX}),
            (std::vector<int64_t>{0, 42, INT64_MIN}));
  EXPECT_EQ(add_one<int32_t>("int32", {-5, INT32_MAX}), (std::vector<int32_t>{-4, INT32_MIN}));
  EXPECT_EQ(add_one<int16_t>("int16", {7, 32767}), (std::vector<int16_t>{8, -32768}));
  EXPECT_EQ(add_one<int8_t>("int8", {0, 127, -128}), (std::vector<int8_t>{1, -128, -127}));
  EXPECT_EQ(add_one<uint8_t>("uint8", {0, 254, 255}), (std::vector<uint8_t>{1, 255, 0}));
  // The same bits as the host provider computes (test_host_test_provider.cpp).
  EXPECT_EQ(add_one<uint16_t>("float16", {0x3C00, 0x3800, 0xBC00, 0xC000, 0x7BFF, 0x7C00, 0x0001}),
            (std::vector<uint16_t>{0x4000, 0x3E00, 0x0000, 0xBC00, 0x7BFF, 0x7C00, 0x3C00}));
  EXPECT_EQ(add_one<uint16_t>("bfloat16", {0x3F80, 0x4780, 0x3F81, 0xBF80}),
            (std::vector<uint16_t>{0x4000, 0x4780, 0x4000, 0x0000}));
}

TEST_F(CudaTestProvider, AddAndIdentity) {
  std::string dims = "[5]";
  Engine add(capturable(), R"({"op":"add","tensors":[)" + input("a", "float16", dims) + "," +
                               input("b", "float16", dims) + "," + output("y", "float16", "a") +
                               "]}");
  ASSERT_LOADED(add);
  DeviceVector<uint16_t> a({0x0001, 0x0200, 0x6800, 0x6800, 0x7BFF}),
      b({0x0001, 0x0200, 0x3C00, 0x4200, 0x5000}), y(5);
  add.set_shape(0, {5});
  add.set_shape(1, {5});
  add.set_address(0, a.get());
  add.set_address(1, b.get());
  add.set_address(2, y.get());
  ASSERT_EQ(add.enqueue(stream_).status, TTE_OK);
  ASSERT_CUDA(cudaStreamSynchronize(stream_));
  EXPECT_EQ(y.host(), (std::vector<uint16_t>{0x0002, 0x0400, 0x6800, 0x6802, 0x7C00}));

  Engine identity(capturable(), R"({"op":"identity","tensors":[)" + input("p", "int64", "[3]") +
                                    "," + input("q", "bool", "[2]") + "," +
                                    output("p_out", "int64", "p") + "," +
                                    output("q_out", "bool", "q") + "]}");
  ASSERT_LOADED(identity);
  DeviceVector<int64_t> p({1, -2, 3}), p_out(3);
  DeviceVector<uint8_t> q({1, 0}), q_out(2);
  identity.set_shape(0, {3});
  identity.set_shape(1, {2});
  identity.set_address(0, p.get());
  identity.set_address(1, q.get());
  identity.set_address(2, p_out.get());
  identity.set_address(3, q_out.get());
  ASSERT_EQ(identity.enqueue(stream_).status, TTE_OK);
  ASSERT_CUDA(cudaStreamSynchronize(stream_));
  EXPECT_EQ(p_out.host(), (std::vector<int64_t>{1, -2, 3}));
  EXPECT_EQ(q_out.host(), (std::vector<uint8_t>{1, 0}));
}

TEST_F(CudaTestProvider, KvUpdateInPlaceAndStats) {
  Engine engine(capturable(), kv_plan(4));
  ASSERT_LOADED(engine);
  DeviceVector<float> cache({1, 2, 3, 4}), x({10, 20, 30, 40}), y(4);
  engine.set_shape(0, {4});
  engine.set_shape(1, {4});
  engine.set_address(0, cache.get());
  engine.set_address(1, x.get());
  engine.set_address(2, cache.get());
  engine.set_address(3, y.get());
  for (int i = 0; i < 2; ++i) ASSERT_EQ(engine.enqueue(stream_).status, TTE_OK);
  ASSERT_CUDA(cudaStreamSynchronize(stream_));
  EXPECT_EQ(cache.host(), (std::vector<float>{21, 42, 63, 84}));
  EXPECT_EQ(y.host(), (std::vector<float>{21, 42, 63, 84}));
  TteTestProviderStats s = stats();
  EXPECT_EQ(s.deserializes, 1u);
  EXPECT_EQ(s.enqueues, 2u);
  EXPECT_EQ(s.last_device_id, 0);
  EXPECT_EQ(s.last_stream, static_cast<void*>(stream_));
}

TEST_F(CudaTestProvider, NullLaunchesOnTheStream) {
  Engine engine(capturable(), R"({"op":"null","tensors":[)" + input("x", "float32", "[256]") + "," +
                                  output("y", "float32", "x") + "]}");
  ASSERT_LOADED(engine);
  DeviceVector<float> x(256), y(256);
  engine.set_shape(0, {256});
  engine.set_address(0, x.get());
  engine.set_address(1, y.get());
  for (int i = 0; i < 100; ++i) ASSERT_EQ(engine.enqueue(stream_).status, TTE_OK);
  ASSERT_CUDA(cudaStreamSynchronize(stream_));
  EXPECT_EQ(stats().enqueues, 100u);
}

TEST_F(CudaTestProvider, RefusesPageableHostMemoryButTakesPinned) {
  Engine engine(capturable(), add_one_plan("float32", 4));
  ASSERT_LOADED(engine);
  std::vector<float> pageable(4, 1.0f);
  Result r = engine.set_address(0, pageable.data());
  EXPECT_EQ(r.status, TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(
      r.message, "'x' (index 0) is pageable host memory; provider test-cuda needs device memory"))
      << r.message;
  float* pinned = nullptr;
  ASSERT_CUDA(cudaMallocHost(reinterpret_cast<void**>(&pinned), 4 * sizeof(float)));
  for (int i = 0; i < 4; ++i) pinned[i] = static_cast<float>(i);
  DeviceVector<float> y(4);
  engine.set_shape(0, {4});
  EXPECT_EQ(engine.set_address(0, pinned).status, TTE_OK);
  engine.set_address(1, y.get());
  ASSERT_EQ(engine.enqueue(stream_).status, TTE_OK);
  ASSERT_CUDA(cudaStreamSynchronize(stream_));
  EXPECT_EQ(y.host(), (std::vector<float>{1, 2, 3, 4}));
  cudaFreeHost(pinned);
}

TEST_F(CudaTestProvider, DeviceIdMustExistAndBeCurrent) {
  int count = 0;
  ASSERT_CUDA(cudaGetDeviceCount(&count));
  TteEngineLoadOptions options{};
  options.struct_size = sizeof(options);
  options.device_id = count;
  Engine engine(capturable(), add_one_plan("float32", 4), &options);
  EXPECT_EQ(engine.status(), TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(engine.message(), "device_id " + std::to_string(count) + " is out of range"))
      << engine.message();
  if (count > 1) {
    options.device_id = 1;  // device 0 is current
    Engine other(capturable(), add_one_plan("float32", 4), &options);
    EXPECT_EQ(other.status(), TTE_ERROR_INVALID_STATE);
  }
}

TEST_F(CudaTestProvider, FailHooks) {
  Engine broken(capturable(),
                add_one_plan("float32", 4, R"(,"fail":{"deserialize":"no engine for you"})"));
  EXPECT_EQ(broken.status(), TTE_ERROR_RUNTIME);
  EXPECT_EQ(broken.message(), "no engine for you");
  Engine engine(capturable(),
                add_one_plan("float32", 4, R"(,"fail":{"enqueue":"launch refused"})"));
  ASSERT_LOADED(engine);
  DeviceVector<float> x(4), y(4);
  engine.set_shape(0, {4});
  engine.set_address(0, x.get());
  engine.set_address(1, y.get());
  Result r = engine.enqueue(stream_);
  EXPECT_EQ(r.status, TTE_ERROR_RUNTIME);
  EXPECT_EQ(r.message, "launch refused");
}

// enqueue returns while the work still runs: it never synchronizes.
TEST_F(CudaTestProvider, EnqueueDoesNotWaitForTheWork) {
  Engine engine(capturable(), add_one_plan("float32", 1024, R"(,"spin_us":200000)"));
  ASSERT_LOADED(engine);
  DeviceVector<float> x(std::vector<float>(1024, 3.0f)), y(1024);
  engine.set_shape(0, {1024});
  engine.set_address(0, x.get());
  engine.set_address(1, y.get());
  auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(engine.enqueue(stream_).status, TTE_OK);
  auto returned = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(cudaStreamQuery(stream_), cudaErrorNotReady);
  EXPECT_LT(returned, std::chrono::milliseconds(100));
  ASSERT_CUDA(cudaStreamSynchronize(stream_));
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(200));
  EXPECT_EQ(y.host(), std::vector<float>(1024, 4.0f));
}

// Global capture mode refuses any unsafe call (allocation, synchronization)
// inside enqueue; replays then do the real work without calling enqueue.
TEST_F(CudaTestProvider, EnqueueIsCapturedIntoACudaGraph) {
  Engine engine(capturable(), kv_plan(1 << 16, R"(,"spin_us":100)"));
  ASSERT_LOADED(engine);
  std::vector<float> ones(1 << 16, 1.0f);
  DeviceVector<float> cache(std::vector<float>(1 << 16, 0.0f)), x(ones), y(1 << 16);
  engine.set_shape(0, {1 << 16});
  engine.set_shape(1, {1 << 16});
  engine.set_address(0, cache.get());
  engine.set_address(1, x.get());
  engine.set_address(3, y.get());
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  ASSERT_CUDA(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeGlobal));
  Result r = engine.enqueue(stream_);
  ASSERT_CUDA(cudaStreamEndCapture(stream_, &graph));
  ASSERT_EQ(r.status, TTE_OK) << r.message;
  ASSERT_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  size_t nodes = 0;
  ASSERT_CUDA(cudaGraphGetNodes(graph, nullptr, &nodes));
  EXPECT_EQ(nodes, 2u);  // the spin and the kv_update kernel
  EXPECT_EQ(cache.host(), std::vector<float>(1 << 16, 0.0f)) << "capture must not run the work";
  for (int i = 0; i < 3; ++i) ASSERT_CUDA(cudaGraphLaunch(exec, stream_));
  ASSERT_CUDA(cudaStreamSynchronize(stream_));
  EXPECT_EQ(cache.host(), std::vector<float>(1 << 16, 3.0f));
  EXPECT_EQ(y.host(), std::vector<float>(1 << 16, 3.0f));
  EXPECT_EQ(stats().enqueues, 1u);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
}

TEST_F(CudaTestProvider, UncapturableProviderRunsTheSameEngines) {
  Engine engine(uncapturable(), add_one_plan("int32", 3));
  ASSERT_LOADED(engine);
  DeviceVector<int32_t> x({1, 2, 3}), y(3);
  engine.set_shape(0, {3});
  engine.set_address(0, x.get());
  engine.set_address(1, y.get());
  ASSERT_EQ(engine.enqueue(stream_).status, TTE_OK);
  ASSERT_CUDA(cudaStreamSynchronize(stream_));
  EXPECT_EQ(y.host(), (std::vector<int32_t>{2, 3, 4}));
}

}  // namespace
