// TensorRTBackend with device-memory engines: device tensors bound directly,
// host tensors staged, the caller's stream honoured, work finished on return,
// CUDA graphs captured, replayed and given up on. Needs a CUDA device; every
// case skips with a message without one.
#include <algorithm>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <dlfcn.h>
#include <executorch/runtime/backend/options.h>

#include "backend/mapped_staging.h"
#include "delegate_harness.h"
#include "gpu_test_support.h"
#include "testing/test_provider_api.h"

namespace tte_test {
namespace {

using et::Error;

TteRuntimeStats stats() {
  TteRuntimeStats s{};
  s.struct_size = sizeof(s);
  tte_get_runtime_stats(&s);
  return s;
}

std::vector<float> to_host(const void* device, size_t count) {
  std::vector<float> host(count);
  EXPECT_EQ(cudaMemcpy(host.data(), device, count * sizeof(float), cudaMemcpyDeviceToHost),
            cudaSuccess);
  return host;
}

void to_device(void* device, const std::vector<float>& host) {
  ASSERT_EQ(cudaMemcpy(device, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice),
            cudaSuccess);
}

std::vector<float> iota(size_t count, float start) {
  std::vector<float> values(count);
  for (size_t i = 0; i < count; ++i) values[i] = start + static_cast<float>(i);
  return values;
}

// y = x on [1..max_rows, 4] float32, as device-memory cudaMemcpyAsync.
std::vector<uint8_t> copy_blob(int64_t max_rows = 8, bool sync_in_enqueue = false) {
  FakeEngineSpec spec;
  spec.tensors = {input("x", {0, 4}, {max_rows, 4}), output_like("y", 0)};
  spec.op = Op::kCopy;
  spec.sync_in_enqueue = sync_in_enqueue;
  return make_blob(blob_metadata({"x"}, {"y"}), fake_plan(spec));
}

TEST(BackendGpu, BindsDeviceTensorsDirectly) {
  REQUIRE_GPU();
  FakeProvider provider("fake-device", TTE_MEMORY_DEVICE);
  Delegate delegate;
  ASSERT_EQ(delegate.init(copy_blob()), Error::Ok);
  DeviceMemory x_memory(8 * 4 * sizeof(float));
  DeviceMemory y_memory(8 * 4 * sizeof(float));
  to_device(x_memory.get(), iota(12, 1));
  OwnedTensor x(ScalarType::Float, {3, 4}, -1, x_memory.get());
  OwnedTensor y(ScalarType::Float, {8, 4}, -1, y_memory.get());
  tte_reset_runtime_stats();
  ASSERT_EQ(delegate.execute({&x, &y}), Error::Ok);
  EXPECT_EQ(y.sizes(), (std::vector<int32_t>{3, 4}));
  EXPECT_EQ(to_host(y_memory.get(), 12), iota(12, 1));
  std::vector<void*> addresses;
  {
    std::lock_guard<std::mutex> lock(provider.state().mutex);
    addresses = provider.state().last_addresses;
  }
  EXPECT_EQ(addresses, (std::vector<void*>{x_memory.get(), y_memory.get()}));
  const TteRuntimeStats s = stats();
  EXPECT_EQ(s.h2d_copies + s.d2h_copies + s.d2d_copies, 0u) << "no copies for device tensors";
  EXPECT_EQ(s.enqueues, 1u);
}

TEST(BackendGpu, StagesHostTensorsInChunks) {
  REQUIRE_GPU();
  FakeProvider provider("fake-device", TTE_MEMORY_DEVICE);
  // 5M rows of 4 floats: 80 MB, many staging chunks each way.
  constexpr int64_t kRows = 5 << 20;
  Delegate delegate;
  ASSERT_EQ(delegate.init(copy_blob(kRows)), Error::Ok);
  OwnedTensor x(ScalarType::Float, {static_cast<int32_t>(kRows) - 3, 4});
  OwnedTensor y(ScalarType::Float, {static_cast<int32_t>(kRows), 4});
  x.fill(0.25f, 1.0f);
  tte_reset_runtime_stats();
  ASSERT_EQ(delegate.execute({&x, &y}), Error::Ok);
  const int64_t count = (kRows - 3) * 4;
  for (int64_t i : {int64_t{0}, int64_t{1} << 20, count - 1}) {
    EXPECT_EQ(y.data<float>()[i], 0.25f + static_cast<float>(i)) << i;
  }
  EXPECT_TRUE(std::equal(x.data<float>(), x.data<float>() + count, y.data<float>()));
  const TteRuntimeStats s = stats();
  EXPECT_EQ(s.h2d_copies, 1u);
  EXPECT_EQ(s.d2h_copies, 1u);
  EXPECT_EQ(s.h2d_bytes, static_cast<uint64_t>(count) * sizeof(float));
}

TEST(BackendGpu, StagesPinnedHostTensors) {
  REQUIRE_GPU();
  FakeProvider provider("fake-device", TTE_MEMORY_DEVICE);
  Delegate delegate;
  ASSERT_EQ(delegate.init(copy_blob()), Error::Ok);
  void* pinned_x = nullptr;
  void* pinned_y = nullptr;
  ASSERT_EQ(cudaHostAlloc(&pinned_x, 32 * sizeof(float), cudaHostAllocDefault), cudaSuccess);
  ASSERT_EQ(cudaHostAlloc(&pinned_y, 32 * sizeof(float), cudaHostAllocDefault), cudaSuccess);
  {
    OwnedTensor x(ScalarType::Float, {8, 4}, -1, pinned_x);
    OwnedTensor y(ScalarType::Float, {8, 4}, -1, pinned_y);
    x.fill(7);
    ASSERT_EQ(delegate.execute({&x, &y}), Error::Ok);
    EXPECT_EQ(y.data<float>()[31], 38.0f);
  }
  cudaFreeHost(pinned_x);
  cudaFreeHost(pinned_y);
}

// TORCH_TENSORRT_EXECUTORCH_MAPPED_STAGING for the delegates loaded while it
// lives (the binder reads it when a delegate loads).
class MappedStagingForced {
 public:
  explicit MappedStagingForced(const char* value) { setenv(tte::kMappedStagingEnv, value, 1); }
  ~MappedStagingForced() { unsetenv(tte::kMappedStagingEnv); }
};

bool is_pinned_host_memory(const void* address) {
  cudaPointerAttributes attributes{};
  const bool known = cudaPointerGetAttributes(&attributes, address) == cudaSuccess;
  cudaGetLastError();
  return known && attributes.type == cudaMemoryTypeHost;
}

// The integrated-GPU (Jetson) path, forced on this GPU: pageable host
// tensors are copied by the CPU into mapped page-locked memory that the
// engine reads and writes where it lies, with no DMA either way.
TEST(BackendGpu, StagesPageableHostTensorsThroughMappedMemoryWhenAsked) {
  REQUIRE_GPU();
  FakeProvider provider("fake-device", TTE_MEMORY_DEVICE);
  Delegate delegate;
  {
    MappedStagingForced forced("1");
    ASSERT_EQ(delegate.init(copy_blob()), Error::Ok);
  }
  OwnedTensor x(ScalarType::Float, {3, 4});
  OwnedTensor y(ScalarType::Float, {8, 4});
  for (int call = 1; call <= 2; ++call) {
    x.fill(0.5f * call, 1.0f);
    tte_reset_runtime_stats();
    ASSERT_EQ(delegate.execute({&x, &y}), Error::Ok);
    EXPECT_EQ(y.sizes(), (std::vector<int32_t>{3, 4}));
    EXPECT_TRUE(std::equal(x.data<float>(), x.data<float>() + 12, y.data<float>())) << call;
    const TteRuntimeStats s = stats();
    EXPECT_EQ(s.h2d_copies + s.d2h_copies + s.d2d_copies, 0u);
    EXPECT_EQ(s.mapped_copies, 2u);
    EXPECT_EQ(s.mapped_bytes, 2u * 12 * sizeof(float));
  }
  std::vector<void*> addresses;
  {
    std::lock_guard<std::mutex> lock(provider.state().mutex);
    addresses = provider.state().last_addresses;
  }
  ASSERT_EQ(addresses.size(), 2u);
  for (void* address : addresses) {
    EXPECT_NE(address, x.data<float>());
    EXPECT_NE(address, y.data<float>());
    EXPECT_TRUE(is_pinned_host_memory(address)) << "the engine got a mapped buffer's address";
  }
}

TEST(BackendGpu, UsesPinnedHostTensorsWhereTheyLieWithMappedStaging) {
  REQUIRE_GPU();
  FakeProvider provider("fake-device", TTE_MEMORY_DEVICE);
  Delegate delegate;
  {
    MappedStagingForced forced("1");
    ASSERT_EQ(delegate.init(copy_blob()), Error::Ok);
  }
  void* pinned_x = nullptr;
  void* pinned_y = nullptr;
  ASSERT_EQ(cudaHostAlloc(&pinned_x, 32 * sizeof(float), cudaHostAllocMapped), cudaSuccess);
  ASSERT_EQ(cudaHostAlloc(&pinned_y, 32 * sizeof(float), cudaHostAllocMapped), cudaSuccess);
  {
    OwnedTensor x(ScalarType::Float, {8, 4}, -1, pinned_x);
    OwnedTensor y(ScalarType::Float, {8, 4}, -1, pinned_y);
    x.fill(7);
    tte_reset_runtime_stats();
    ASSERT_EQ(delegate.execute({&x, &y}), Error::Ok);
    EXPECT_EQ(y.data<float>()[31], 38.0f);
    const TteRuntimeStats s = stats();
    EXPECT_EQ(s.h2d_copies + s.d2h_copies + s.d2d_copies + s.mapped_copies, 0u);
  }
  void* device_x = nullptr;
  ASSERT_EQ(cudaHostGetDevicePointer(&device_x, pinned_x, 0), cudaSuccess);
  {
    std::lock_guard<std::mutex> lock(provider.state().mutex);
    ASSERT_EQ(provider.state().last_addresses.size(), 2u);
    EXPECT_EQ(provider.state().last_addresses[0], device_x);
  }
  cudaFreeHost(pinned_x);
  cudaFreeHost(pinned_y);
}

TEST(BackendGpu, MappedStagingIsOffOnADiscreteGpuByDefault) {
  REQUIRE_GPU();
  int integrated = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&integrated, cudaDevAttrIntegrated, 0), cudaSuccess);
  if (integrated) GTEST_SKIP() << "an integrated GPU stages through mapped memory by default";
  FakeProvider provider("fake-device", TTE_MEMORY_DEVICE);
  Delegate delegate;
  ASSERT_EQ(delegate.init(copy_blob()), Error::Ok);
  OwnedTensor x(ScalarType::Float, {3, 4});
  OwnedTensor y(ScalarType::Float, {8, 4});
  x.fill(1);
  tte_reset_runtime_stats();
  ASSERT_EQ(delegate.execute({&x, &y}), Error::Ok);
  const TteRuntimeStats s = stats();
  EXPECT_EQ(s.mapped_copies, 0u);
  EXPECT_EQ(s.h2d_copies, 1u);
  EXPECT_EQ(s.d2h_copies, 1u);
}

TEST(BackendGpu, EmptyDeviceTensorsGetAnAddress) {
  REQUIRE_GPU();
  FakeProvider provider("fake-device", TTE_MEMORY_DEVICE);
  Delegate delegate;
  ASSERT_EQ(delegate.init(copy_blob()), Error::Ok);
  OwnedTensor x(ScalarType::Float, {0, 4});
  OwnedTensor y(ScalarType::Float, {0, 4});
  ASSERT_EQ(delegate.execute({&x, &y}), Error::Ok);
  std::lock_guard<std::mutex> lock(provider.state().mutex);
  for (void* address : provider.state().last_addresses) EXPECT_NE(address, nullptr);
}

TEST(BackendGpu, HonoursTheCallerStreamAndFinishesTheWork) {
  REQUIRE_GPU();
  FakeProvider provider("fake-device", TTE_MEMORY_DEVICE);
  Delegate delegate;
  ASSERT_EQ(delegate.init(copy_blob()), Error::Ok);
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  OwnedTensor x(ScalarType::Float, {8, 4});
  OwnedTensor y(ScalarType::Float, {8, 4});
  x.fill(3);
  tte_set_thread_stream(stream);
  void* current = nullptr;
  EXPECT_EQ(tte_get_thread_stream(&current), 1);
  EXPECT_EQ(current, stream);
  ASSERT_EQ(delegate.execute({&x, &y}), Error::Ok);
  EXPECT_EQ(provider.state().last_stream.load(), stream);
  EXPECT_EQ(cudaStreamQuery(stream), cudaSuccess) << "execute returns with the work finished";
  EXPECT_EQ(y.data<float>()[31], 34.0f);

  // Another thread has no caller stream: the handle's own stream is used.
  std::thread other([&] {
    void* none = nullptr;
    EXPECT_EQ(tte_get_thread_stream(&none), 0);
    EXPECT_EQ(delegate.execute({&x, &y}), Error::Ok);
  });
  other.join();
  void* own = provider.state().last_stream.load();
  EXPECT_NE(own, nullptr);
  EXPECT_NE(own, stream);

  tte_clear_thread_stream();
  EXPECT_EQ(tte_get_thread_stream(&current), 0);
  ASSERT_EQ(delegate.execute({&x, &y}), Error::Ok);
  EXPECT_EQ(provider.state().last_stream.load(), own) << "one stream per handle, reused";
  cudaStreamDestroy(stream);
}

et::BackendOptions<2> cuda_graphs_on() {
  et::BackendOptions<2> options;
  EXPECT_EQ(options.set_option("cuda_graphs", true), Error::Ok);
  return options;
}

TEST(BackendGpu, CudaGraphsReplayAndRecapture) {
  REQUIRE_GPU();
  FakeProvider provider("fake-device", TTE_MEMORY_DEVICE, TTE_PROVIDER_OTHER, /*capturable=*/1);
  auto options = cuda_graphs_on();
  Delegate delegate;
  ASSERT_EQ(delegate.init(copy_blob(), {}, options.view()), Error::Ok);
  DeviceMemory x_memory(32 * sizeof(float));
  DeviceMemory y_memory(32 * sizeof(float));
  OwnedTensor x(ScalarType::Float, {8, 4}, -1, x_memory.get());
  OwnedTensor y(ScalarType::Float, {8, 4}, -1, y_memory.get());
  tte_reset_runtime_stats();
  for (int call = 0; call < 5; ++call) {
    to_device(x_memory.get(), iota(32, static_cast<float>(100 * call)));
    ASSERT_EQ(delegate.execute({&x, &y}), Error::Ok);
    EXPECT_EQ(to_host(y_memory.get(), 32), iota(32, static_cast<float>(100 * call))) << call;
  }
  // The first call runs plainly; the second runs plainly, synchronizes and
  // captures (trtexec's order; the capture is not launched); the rest replay.
  EXPECT_EQ(provider.state().enqueues.load(), 3);
  TteRuntimeStats s = stats();
  EXPECT_EQ(s.graph_captures, 1u);
  EXPECT_EQ(s.graph_replays, 3u);

  // A new shape is a new graph.
  OwnedTensor x2(ScalarType::Float, {2, 4}, -1, x_memory.get());
  for (int call = 0; call < 3; ++call) {
    ASSERT_EQ(delegate.execute({&x2, &y}), Error::Ok);
    EXPECT_EQ(y.sizes(), (std::vector<int32_t>{2, 4}));
  }
  s = stats();
  EXPECT_EQ(s.graph_captures, 2u);
  EXPECT_EQ(provider.state().enqueues.load(), 6);
}

// Callers passing fresh tensors (a new address each call) replay one graph
// per shape set: each call re-captures the enqueue at its own addresses
// (the provider is entered, nothing runs) and updates the graph in place
// (cudaGraphExecUpdate) before launching it. No copies.
TEST(BackendGpu, CudaGraphsReplayForFreshTensorsEveryCall) {
  REQUIRE_GPU();
  FakeProvider provider("fake-device", TTE_MEMORY_DEVICE, TTE_PROVIDER_OTHER, /*capturable=*/1);
  auto options = cuda_graphs_on();
  Delegate delegate;
  ASSERT_EQ(delegate.init(copy_blob(), {}, options.view()), Error::Ok);
  constexpr int kCalls = 12;
  std::vector<std::unique_ptr<DeviceMemory>> xs, ys;
  tte_reset_runtime_stats();
  for (int call = 0; call < kCalls; ++call) {
    xs.push_back(std::make_unique<DeviceMemory>(32 * sizeof(float)));
    ys.push_back(std::make_unique<DeviceMemory>(32 * sizeof(float)));
    to_device(xs.back()->get(), iota(32, static_cast<float>(100 * call)));
    OwnedTensor x(ScalarType::Float, {8, 4}, -1, xs.back()->get());
    OwnedTensor y(ScalarType::Float, {8, 4}, -1, ys.back()->get());
    ASSERT_EQ(delegate.execute({&x, &y}), Error::Ok) << call;
    EXPECT_EQ(to_host(ys.back()->get(), 32), iota(32, static_cast<float>(100 * call))) << call;
  }
  // The first call runs plainly; the second plainly, then captured; each of
  // the rest is captured again at its addresses and replays.
  EXPECT_EQ(provider.state().enqueues.load(), kCalls + 1);
  const TteRuntimeStats s = stats();
  EXPECT_EQ(s.enqueues, 2u) << "only the warm-up ran plainly";
  EXPECT_EQ(s.graph_captures, 1u);
  EXPECT_EQ(s.graph_updates, static_cast<uint64_t>(kCalls - 2));
  EXPECT_EQ(s.graph_replays, static_cast<uint64_t>(kCalls - 2));
  EXPECT_EQ(s.graph_io_copies + s.d2d_copies + s.h2d_copies + s.d2h_copies, 0u);
}

// trtexec captures right after a plain enqueue and a synchronize
// (NvInferRuntime.h:4272: a change takes effect "on the next call of
// enqueueV3"). Other shapes in between must not become the warm-up.
TEST(BackendGpu, CudaGraphCaptureFollowsAPlainEnqueueOfTheSameShapes) {
  REQUIRE_GPU();
  FakeProvider provider("fake-device", TTE_MEMORY_DEVICE, TTE_PROVIDER_OTHER, /*capturable=*/1);
  FakeEngineSpec spec;
  spec.tensors = {input("x", {0, 4}, {8, 4}), output_like("y", 0)};
  spec.op = Op::kCopy;
  spec.require_warm_capture = true;
  auto options = cuda_graphs_on();
  Delegate delegate;
  ASSERT_EQ(
      delegate.init(make_blob(blob_metadata({"x"}, {"y"}), fake_plan(spec)), {}, options.view()),
      Error::Ok);
  DeviceMemory x_memory(32 * sizeof(float));
  DeviceMemory y_memory(32 * sizeof(float));
  OwnedTensor big(ScalarType::Float, {8, 4}, -1, x_memory.get());
  OwnedTensor small(ScalarType::Float, {2, 4}, -1, x_memory.get());
  OwnedTensor y(ScalarType::Float, {8, 4}, -1, y_memory.get());
  tte_reset_runtime_stats();
  for (OwnedTensor* x : {&big, &small, &big, &small, &big, &small}) {
    ASSERT_EQ(delegate.execute({x, &y}), Error::Ok);
  }
  const TteRuntimeStats s = stats();
  EXPECT_EQ(s.graph_fallbacks, 0u) << "every capture followed its own plain enqueue";
  EXPECT_EQ(s.graph_captures, 2u);
  EXPECT_EQ(s.graph_replays, 2u);
}

TEST(BackendGpu, AnEngineThatSaysItCannotBeCapturedIsNot) {
  REQUIRE_GPU();
  FakeProvider provider("fake-device", TTE_MEMORY_DEVICE, TTE_PROVIDER_OTHER, /*capturable=*/1);
  provider.state().engine_capturable = 0;  // e.g. streaming its weights
  auto options = cuda_graphs_on();
  Delegate delegate;
  ASSERT_EQ(delegate.init(copy_blob(), {}, options.view()), Error::Ok);
  OwnedTensor x(ScalarType::Float, {8, 4});
  OwnedTensor y(ScalarType::Float, {8, 4});
  tte_reset_runtime_stats();
  for (int call = 0; call < 4; ++call) ASSERT_EQ(delegate.execute({&x, &y}), Error::Ok);
  EXPECT_EQ(provider.state().enqueues.load(), 4);
  EXPECT_EQ(stats().graph_captures, 0u);
  EXPECT_EQ(stats().graph_fallbacks, 0u);
}

// enqueueV3 on the legacy default stream costs device-wide synchronizations
// (NvInferRuntime.h:4639): a NULL caller stream runs on the handle's own.
TEST(BackendGpu, ANullCallerStreamRunsOnTheHandlesOwnStream) {
  REQUIRE_GPU();
  FakeProvider provider("fake-device", TTE_MEMORY_DEVICE);
  Delegate delegate;
  ASSERT_EQ(delegate.init(copy_blob()), Error::Ok);
  OwnedTensor x(ScalarType::Float, {8, 4});
  OwnedTensor y(ScalarType::Float, {8, 4});
  x.fill(3);
  for (void* legacy : {static_cast<void*>(nullptr), static_cast<void*>(cudaStreamLegacy)}) {
    tte_set_thread_stream(legacy);
    ASSERT_EQ(delegate.execute({&x, &y}), Error::Ok);
    EXPECT_NE(provider.state().last_stream.load(), nullptr);
    EXPECT_NE(provider.state().last_stream.load(), static_cast<void*>(cudaStreamLegacy));
    EXPECT_EQ(y.data<float>()[31], 34.0f);
  }
  tte_clear_thread_stream();
}

// setTensorAddress: "The pointer must have at least 256-byte alignment"
// (NvInferRuntime.h:4378); ExecuTorch plans device tensors 16-byte aligned.
TEST(BackendGpu, MisalignedDeviceTensorsAreStaged) {
  REQUIRE_GPU();
  FakeProvider provider("fake-device", TTE_MEMORY_DEVICE);
  provider.state().require_alignment = 256;
  Delegate delegate;
  ASSERT_EQ(delegate.init(copy_blob()), Error::Ok);
  DeviceMemory arena(4096);
  auto* x_data = static_cast<char*>(arena.get()) + 16;
  auto* y_data = static_cast<char*>(arena.get()) + 1024 + 48;
  to_device(x_data, iota(32, 5));
  OwnedTensor x(ScalarType::Float, {8, 4}, -1, x_data);
  OwnedTensor y(ScalarType::Float, {8, 4}, -1, y_data);
  tte_reset_runtime_stats();
  ASSERT_EQ(delegate.execute({&x, &y}), Error::Ok);
  EXPECT_EQ(to_host(y_data, 32), iota(32, 5));
  const TteRuntimeStats s = stats();
  EXPECT_EQ(s.d2d_copies, 2u) << "in, and back out";
  EXPECT_EQ(s.h2d_copies + s.d2h_copies, 0u);
}

TEST(BackendGpu, CudaGraphsOffForAnUncapturableProvider) {
  REQUIRE_GPU();
  FakeProvider provider("fake-device", TTE_MEMORY_DEVICE, TTE_PROVIDER_OTHER, /*capturable=*/0);
  auto options = cuda_graphs_on();
  Delegate delegate;
  ASSERT_EQ(delegate.init(copy_blob(), {}, options.view()), Error::Ok);
  OwnedTensor x(ScalarType::Float, {8, 4});
  OwnedTensor y(ScalarType::Float, {8, 4});
  tte_reset_runtime_stats();
  for (int call = 0; call < 4; ++call) ASSERT_EQ(delegate.execute({&x, &y}), Error::Ok);
  EXPECT_EQ(provider.state().enqueues.load(), 4);
  EXPECT_EQ(stats().graph_captures, 0u);
}

TEST(BackendGpu, CudaGraphCaptureFailureFallsBack) {
  REQUIRE_GPU();
  FakeProvider provider("fake-device", TTE_MEMORY_DEVICE, TTE_PROVIDER_OTHER, /*capturable=*/1);
  auto options = cuda_graphs_on();
  Delegate delegate;
  ASSERT_EQ(delegate.init(copy_blob(8, /*sync_in_enqueue=*/true), {}, options.view()), Error::Ok);
  OwnedTensor x(ScalarType::Float, {8, 4});
  OwnedTensor y(ScalarType::Float, {8, 4});
  tte_reset_runtime_stats();
  StderrCapture log;
  for (int call = 0; call < 4; ++call) {
    x.fill(static_cast<float>(call));
    ASSERT_EQ(delegate.execute({&x, &y}), Error::Ok) << call;
    EXPECT_EQ(y.data<float>()[31], call + 31.0f) << call;
  }
  const TteRuntimeStats s = stats();
  EXPECT_EQ(s.graph_fallbacks, 1u);
  EXPECT_EQ(s.graph_captures, 0u);
  EXPECT_NE(log.text().find("CUDA graph capture failed"), std::string::npos) << log.text();
}

// ---- The CUDA test provider library (real kernels) --------------------------

class CudaTestProvider : public testing::Test {
 protected:
  void SetUp() override {
    REQUIRE_GPU();
    if (access(cuda_test_provider().c_str(), F_OK) != 0) {
      GTEST_SKIP() << "CUDA test provider not built at " << cuda_test_provider();
    }
    TteError error{};
    ASSERT_EQ(
        tte_load_engine_provider_library(cuda_test_provider().c_str(), TTE_PROVIDER_OTHER, &error),
        TTE_OK)
        << error.message;
    loaded_ = true;
  }
  void TearDown() override {
    if (loaded_) tte_unregister_engine_provider("test-cuda", nullptr);
  }
  bool loaded_ = false;
};

// cache (in place, aliased by cache_out) += x; y = the updated cache; [4]
// float32, for the CUDA test provider.
std::vector<uint8_t> kv_update_blob() {
  const std::string plan =
      std::string("TTE-TEST-ENGINE\n") +
      R"({"op":"kv_update","tensors":[)"
      R"({"name":"cache","is_input":true,"dtype":"float32","profiles":[{"min":[4],"opt":[4],"max":[4]}]},)"
      R"({"name":"x","is_input":true,"dtype":"float32","profiles":[{"min":[4],"opt":[4],"max":[4]}]},)"
      R"({"name":"cache_out","is_input":false,"dtype":"float32","shape_of":"cache"},)"
      R"({"name":"y","is_input":false,"dtype":"float32","shape_of":"cache"}],)"
      R"("aliases":{"cache_out":"cache"}})";
  Json metadata = blob_metadata({"cache", "x"}, {"cache_out", "y"});
  metadata["aliased_io"] =
      Json::array({Json{{"output", "cache_out"}, {"input", "cache"}, {"kind", "kv_cache_update"}}});
  return make_blob(metadata, plan);
}

TEST_F(CudaTestProvider, KvUpdateInPlaceOnDeviceAndHost) {
  Delegate delegate;
  ASSERT_EQ(delegate.init(kv_update_blob()), Error::Ok);

  // Device-resident cache: updated in place across calls.
  DeviceMemory cache_memory(4 * sizeof(float));
  DeviceMemory x_memory(4 * sizeof(float));
  DeviceMemory y_memory(4 * sizeof(float));
  to_device(cache_memory.get(), {0, 0, 0, 0});
  to_device(x_memory.get(), {1, 2, 3, 4});
  OwnedTensor cache(ScalarType::Float, {4}, -1, cache_memory.get());
  OwnedTensor x(ScalarType::Float, {4}, -1, x_memory.get());
  OwnedTensor cache_out(ScalarType::Float, {4}, -1, cache_memory.get());
  OwnedTensor y(ScalarType::Float, {4}, -1, y_memory.get());
  for (int call = 1; call <= 3; ++call) {
    ASSERT_EQ(delegate.execute({&cache, &x, &cache_out, &y}), Error::Ok);
    EXPECT_EQ(to_host(cache_memory.get(), 4),
              (std::vector<float>{1.f * call, 2.f * call, 3.f * call, 4.f * call}));
    EXPECT_EQ(to_host(y_memory.get(), 4), to_host(cache_memory.get(), 4));
  }

  // Host cache: staged, updated, written back.
  OwnedTensor host_cache(ScalarType::Float, {4});
  OwnedTensor host_x(ScalarType::Float, {4});
  OwnedTensor host_out(ScalarType::Float, {4});
  OwnedTensor host_y(ScalarType::Float, {4});
  host_cache.fill(10, 0);
  host_x.fill(1, 1);  // 1 2 3 4
  for (int call = 1; call <= 2; ++call) {
    ASSERT_EQ(delegate.execute({&host_cache, &host_x, &host_out, &host_y}), Error::Ok);
    EXPECT_EQ(host_cache.data<float>()[3], 10.0f + 4.0f * call);
    EXPECT_EQ(host_out.data<float>()[3], 10.0f + 4.0f * call);
    EXPECT_EQ(host_y.data<float>()[3], 10.0f + 4.0f * call);
  }
}

TEST_F(CudaTestProvider, KvUpdateInPlaceThroughMappedMemory) {
  Delegate delegate;
  {
    MappedStagingForced forced("1");
    ASSERT_EQ(delegate.init(kv_update_blob()), Error::Ok);
  }
  // The engine updates the mapped copy of the host cache; it is written back
  // into the cache and both outputs, with no DMA.
  OwnedTensor cache(ScalarType::Float, {4});
  OwnedTensor x(ScalarType::Float, {4});
  OwnedTensor out(ScalarType::Float, {4});
  OwnedTensor y(ScalarType::Float, {4});
  cache.fill(10, 0);
  x.fill(1, 1);  // 1 2 3 4
  for (int call = 1; call <= 2; ++call) {
    tte_reset_runtime_stats();
    ASSERT_EQ(delegate.execute({&cache, &x, &out, &y}), Error::Ok);
    EXPECT_EQ(cache.data<float>()[3], 10.0f + 4.0f * call);
    EXPECT_EQ(out.data<float>()[3], 10.0f + 4.0f * call);
    EXPECT_EQ(y.data<float>()[3], 10.0f + 4.0f * call);
    const TteRuntimeStats s = stats();
    EXPECT_EQ(s.h2d_copies + s.d2h_copies, 0u);
    EXPECT_GE(s.mapped_copies, 4u);  // cache and x in; cache, out and y back
  }
}

TEST_F(CudaTestProvider, AddOneOnDeviceAndHostTensors) {
  const std::string plan =
      std::string("TTE-TEST-ENGINE\n") +
      R"({"op":"add_one","tensors":[{"name":"x","is_input":true,"dtype":"float32",)"
      R"("profiles":[{"min":[1,4],"opt":[2,4],"max":[8,4]}]},)"
      R"({"name":"y","is_input":false,"dtype":"float32","shape_of":"x"}]})";
  Delegate delegate;
  ASSERT_EQ(delegate.init(make_blob(blob_metadata({"x"}, {"y"}), plan)), Error::Ok);
  OwnedTensor x(ScalarType::Float, {3, 4});
  OwnedTensor y(ScalarType::Float, {8, 4});
  x.fill(0);
  ASSERT_EQ(delegate.execute({&x, &y}), Error::Ok);
  EXPECT_EQ(y.sizes(), (std::vector<int32_t>{3, 4}));
  EXPECT_EQ(y.data<float>()[11], 12.0f);

  DeviceMemory x_memory(32 * sizeof(float));
  DeviceMemory y_memory(32 * sizeof(float));
  to_device(x_memory.get(), iota(32, 0));
  OwnedTensor dx(ScalarType::Float, {8, 4}, -1, x_memory.get());
  OwnedTensor dy(ScalarType::Float, {8, 4}, -1, y_memory.get());
  tte_reset_runtime_stats();
  ASSERT_EQ(delegate.execute({&dx, &dy}), Error::Ok);
  EXPECT_EQ(to_host(y_memory.get(), 32), iota(32, 1));
  const TteRuntimeStats s = stats();
  EXPECT_EQ(s.h2d_copies + s.d2h_copies + s.d2d_copies, 0u);
}

// The CUDA test provider has the batched entry: one call per plain run
// (two when the shapes change), none at all when a CUDA graph replays.
TEST_F(CudaTestProvider, CudaGraphReplayEntersNoProvider) {
  void* library = dlopen(cuda_test_provider().c_str(), RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(library, nullptr);
  auto read_stats =
      reinterpret_cast<void (*)(TteTestProviderStats*)>(dlsym(library, "tte_test_provider_stats"));
  auto reset_stats = reinterpret_cast<void (*)()>(dlsym(library, "tte_test_provider_reset_stats"));
  ASSERT_NE(read_stats, nullptr);
  ASSERT_NE(reset_stats, nullptr);
  const std::string plan =
      std::string("TTE-TEST-ENGINE\n") +
      R"({"op":"add_one","tensors":[{"name":"x","is_input":true,"dtype":"float32",)"
      R"("profiles":[{"min":[1,4],"opt":[2,4],"max":[8,4]}]},)"
      R"({"name":"y","is_input":false,"dtype":"float32","shape_of":"x"}]})";
  auto options = cuda_graphs_on();
  Delegate delegate;
  ASSERT_EQ(delegate.init(make_blob(blob_metadata({"x"}, {"y"}), plan), {}, options.view()),
            Error::Ok);
  DeviceMemory x_memory(32 * sizeof(float));
  DeviceMemory y_memory(32 * sizeof(float));
  OwnedTensor x(ScalarType::Float, {8, 4}, -1, x_memory.get());
  OwnedTensor y(ScalarType::Float, {8, 4}, -1, y_memory.get());
  reset_stats();
  tte_reset_runtime_stats();
  for (int call = 0; call < 5; ++call) {
    to_device(x_memory.get(), iota(32, static_cast<float>(10 * call)));
    ASSERT_EQ(delegate.execute({&x, &y}), Error::Ok);
    EXPECT_EQ(to_host(y_memory.get(), 32), iota(32, static_cast<float>(10 * call + 1))) << call;
  }
  TteTestProviderStats s{};
  s.struct_size = sizeof(s);
  read_stats(&s);
  // Call 1 sets the shapes and enqueues (two calls); call 2 enqueues, then
  // again into the capture (two); calls 3 to 5 replay the graph (none).
  EXPECT_EQ(stats().graph_replays, 3u);
  EXPECT_EQ(s.executes, 4u);
  EXPECT_EQ(s.input_shapes_set, 1u);
  EXPECT_EQ(s.enqueues, 3u);
}

}  // namespace
}  // namespace tte_test
