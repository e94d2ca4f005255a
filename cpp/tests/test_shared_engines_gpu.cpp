// Shared scratch arenas and shared engines with the CUDA test provider,
// measured in device memory (cudaMemGetInfo): a method of four delegates
// needs about the largest one's scratch, not the sum; a second load of a
// plan adds almost nothing; results equal those of engines with scratch of
// their own. Skips without a CUDA device. Prints the ratios it measured
// (docs/benchmarks.md); only the memory goals are asserted, never timing.
#include <dlfcn.h>

#include <cstdio>
#include <string>
#include <vector>

#include <executorch/runtime/backend/options.h>

#include "delegate_harness.h"
#include "gpu_test_support.h"
#include "testing/test_provider_api.h"

namespace tte_test {
namespace {

using et::Error;

constexpr int64_t kMiB = 1 << 20;

int64_t used_device_bytes() {
  cudaDeviceSynchronize();
  size_t free_bytes = 0, total = 0;
  EXPECT_EQ(cudaMemGetInfo(&free_bytes, &total), cudaSuccess);
  return static_cast<int64_t>(total) - static_cast<int64_t>(free_bytes);
}

// add_one on float32 [n] (static), with scratch and weights.
std::vector<uint8_t> add_one_blob(const std::string& name, int64_t n, int64_t scratch,
                                  int64_t weights) {
  const std::string dims = "[" + std::to_string(n) + "]";
  const std::string plan =
      "TTE-TEST-ENGINE\n{\"op\":\"add_one\",\"tensors\":[{\"name\":\"" + name +
      "\",\"is_input\":true,\"dtype\":\"float32\",\"profiles\":[{\"min\":" + dims +
      ",\"opt\":" + dims + ",\"max\":" + dims +
      "}]},{\"name\":\"y\",\"is_input\":false,\"dtype\":\"float32\",\"shape_of\":\"" + name +
      "\"}],\"scratch_bytes\":" + std::to_string(scratch) +
      ",\"weight_bytes\":" + std::to_string(weights) + "}";
  return make_blob(blob_metadata({name}, {"y"}), plan);
}

class SharedEnginesGpu : public testing::Test {
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
    cudaFree(nullptr);  // the context exists before anything is measured
  }
  void TearDown() override {
    if (loaded_) tte_unregister_engine_provider("test-cuda", nullptr);
  }

  // Runs the method: each delegate in turn on device x (n floats), the
  // output of one the input of the next. Returns the last output.
  static std::vector<float> run_chain(std::vector<std::unique_ptr<Delegate>>& delegates,
                                      int64_t n) {
    std::vector<float> host(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) host[i] = static_cast<float>(i % 1000) * 0.5f;
    DeviceMemory a(n * sizeof(float)), b(n * sizeof(float));
    EXPECT_EQ(cudaMemcpy(a.get(), host.data(), n * sizeof(float), cudaMemcpyHostToDevice),
              cudaSuccess);
    void* in = a.get();
    void* out = b.get();
    for (auto& delegate : delegates) {
      OwnedTensor x(ScalarType::Float, {static_cast<int32_t>(n)}, -1, in);
      OwnedTensor y(ScalarType::Float, {static_cast<int32_t>(n)}, -1, out);
      EXPECT_EQ(delegate->execute({&x, &y}), Error::Ok);
      std::swap(in, out);
    }
    EXPECT_EQ(cudaMemcpy(host.data(), in, n * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
    return host;
  }

  bool loaded_ = false;
};

// Goal (docs/benchmarks.md): peak device memory of a four-delegate method
// within 1.1x of the largest delegate's scratch.
TEST_F(SharedEnginesGpu, FourDelegatesNeedTheLargestScratchNotTheSum) {
  const int64_t n = 1 << 16;
  const std::vector<int64_t> scratch = {64 * kMiB, 256 * kMiB, 128 * kMiB, 32 * kMiB};
  int64_t sum = 0, largest = 0;
  for (int64_t s : scratch) {
    sum += s;
    largest = std::max(largest, s);
  }
  auto measure = [&](bool share, std::vector<float>* result) {
    et::BackendOptions<2> options;
    EXPECT_EQ(options.set_option("share_device_memory", share), Error::Ok);
    const int64_t before = used_device_bytes();
    int64_t peak = 0;
    {
      std::vector<std::unique_ptr<Delegate>> delegates;
      for (size_t d = 0; d < scratch.size(); ++d) {
        delegates.push_back(std::make_unique<Delegate>());
        EXPECT_EQ(delegates.back()->init(add_one_blob("x" + std::to_string(d), n, scratch[d], 0),
                                         {}, options.view()),
                  Error::Ok);
      }
      for (int round = 0; round < 3; ++round) {
        *result = run_chain(delegates, n);
        peak = std::max(peak, used_device_bytes() - before);
      }
    }
    return peak;
  };
  std::vector<float> own_result, shared_result;
  const int64_t own = measure(false, &own_result);
  const int64_t shared = measure(true, &shared_result);
  std::printf(
      "[measure] scratch of 4 delegates: largest %lld MiB, sum %lld MiB; own scratch %.1f MiB, "
      "shared %.1f MiB; shared / largest = %.3f (goal <= 1.1), own / largest = %.3f\n",
      static_cast<long long>(largest / kMiB), static_cast<long long>(sum / kMiB),
      own / double(kMiB), shared / double(kMiB), shared / double(largest), own / double(largest));
  EXPECT_EQ(shared_result, own_result) << "sharing scratch changes no result";
  // The chain's buffers (2 x 256 KiB) and allocation granularity are in the
  // measure; they are small against the scratch.
  EXPECT_LE(shared, largest * 11 / 10);
  EXPECT_GE(own, sum * 9 / 10) << "engines with their own scratch hold the sum";
}

// Goal: loading a program a second time adds < 10% of the first load's
// device memory.
TEST_F(SharedEnginesGpu, ASecondLoadAddsAlmostNoDeviceMemory) {
  const int64_t n = 1 << 16;
  const std::vector<uint8_t> blob = add_one_blob("x", n, 64 * kMiB, 512 * kMiB);
  auto load_and_run = [&](std::vector<std::unique_ptr<Delegate>>* delegates) {
    delegates->push_back(std::make_unique<Delegate>());
    EXPECT_EQ(delegates->back()->init(blob), Error::Ok);
    std::vector<std::unique_ptr<Delegate>> one;
    one.push_back(std::move(delegates->back()));
    delegates->pop_back();
    std::vector<float> result = run_chain(one, n);
    delegates->push_back(std::move(one.front()));
    return result;
  };
  std::vector<std::unique_ptr<Delegate>> delegates;
  const int64_t before = used_device_bytes();
  const std::vector<float> first_result = load_and_run(&delegates);
  const int64_t first = used_device_bytes() - before;
  const std::vector<float> second_result = load_and_run(&delegates);
  const int64_t second = used_device_bytes() - before - first;
  std::printf(
      "[measure] first load %.1f MiB, second load %.1f MiB: second / first = %.3f (goal < 0.1)\n",
      first / double(kMiB), second / double(kMiB), second / double(first));
  EXPECT_EQ(first_result, second_result);
  EXPECT_LT(second * 10, first);
}

// Four threads, each with its own delegate on one shared engine (its own
// execution context), overlap on the GPU: calls per second against one
// thread. Printed, never asserted (timing).
TEST_F(SharedEnginesGpu, ThreadsOverlapOnASharedEngine) {
  const int64_t n = 1 << 10;
  const std::string dims = "[" + std::to_string(n) + "]";
  const std::string plan =
      "TTE-TEST-ENGINE\n{\"op\":\"add_one\",\"tensors\":[{\"name\":\"x\",\"is_input\":true,"
      "\"dtype\":\"float32\",\"profiles\":[{\"min\":" +
      dims + ",\"opt\":" + dims + ",\"max\":" + dims +
      "}]},{\"name\":\"y\",\"is_input\":false,\"dtype\":\"float32\","
      "\"shape_of\":\"x\"}],\"spin_us\":200,\"scratch_bytes\":1048576}";
  const std::vector<uint8_t> blob = make_blob(blob_metadata({"x"}, {"y"}), plan);
  constexpr int kThreads = 4;
  constexpr int kCalls = 200;
  std::vector<std::unique_ptr<Delegate>> delegates;
  for (int t = 0; t < kThreads; ++t) {
    delegates.push_back(std::make_unique<Delegate>());
    ASSERT_EQ(delegates.back()->init(blob), Error::Ok);
  }
  auto calls_per_second = [&](int threads) {
    std::atomic<int> failures{0};
    auto work = [&](int t) {
      DeviceMemory x(n * sizeof(float)), y(n * sizeof(float));
      std::vector<float> host(n, static_cast<float>(t));
      cudaMemcpy(x.get(), host.data(), n * sizeof(float), cudaMemcpyHostToDevice);
      OwnedTensor xt(ScalarType::Float, {static_cast<int32_t>(n)}, -1, x.get());
      OwnedTensor yt(ScalarType::Float, {static_cast<int32_t>(n)}, -1, y.get());
      for (int i = 0; i < kCalls; ++i) {
        if (delegates[t]->execute({&xt, &yt}) != Error::Ok) ++failures;
      }
      cudaMemcpy(host.data(), y.get(), n * sizeof(float), cudaMemcpyDeviceToHost);
      for (float v : host) {
        if (v != static_cast<float>(t) + 1.0f) ++failures;
      }
    };
    work(0);  // warm up
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) pool.emplace_back(work, t);
    for (auto& thread : pool) thread.join();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_EQ(failures.load(), 0);
    return threads * kCalls / seconds;
  };
  const double one = calls_per_second(1);
  const double four = calls_per_second(kThreads);
  std::printf(
      "[measure] 200 us spin, own delegate per thread on one shared engine: 1 thread %.0f calls/s, "
      "4 threads %.0f calls/s: ratio %.2f (goal for one program: >= 3)\n",
      one, four, four / one);
}

}  // namespace
}  // namespace tte_test
