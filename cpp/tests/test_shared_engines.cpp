// Shared scratch arenas and shared engines (docs/architecture.md), driven
// through the backend with the host test provider: delegates share one
// arena of the largest need, the arena grows with the profile, results stay
// those of engines with their own scratch, a second load of a plan makes an
// execution context instead of deserializing, handles go in any order, and
// providers without the new entries behave as before.
#include <dlfcn.h>

#include <string>
#include <vector>

#include "delegate_harness.h"
#include "testing/test_provider_api.h"

namespace {

using namespace tte_test;
using executorch::runtime::Error;

void* host_library() { return dlopen(host_test_provider().c_str(), RTLD_NOW | RTLD_NOLOAD); }

TteTestProviderStats provider_stats() {
  TteTestProviderStats s{};
  s.struct_size = sizeof(s);
  reinterpret_cast<void (*)(TteTestProviderStats*)>(
      dlsym(host_library(), "tte_test_provider_stats"))(&s);
  return s;
}

TteRuntimeStats runtime_stats() {
  TteRuntimeStats s{};
  s.struct_size = sizeof(s);
  tte_get_runtime_stats(&s);
  return s;
}

// add_one on float32 [1..8, 4] with the given scratch (one entry per
// profile: profile p takes rows up to 4 * (p + 1)) and weights.
std::vector<uint8_t> add_one_blob(const std::vector<int64_t>& scratch, int64_t weight_bytes = 0,
                                  const std::string& tag = "") {
  std::string profiles;
  std::string scratch_list;
  for (size_t p = 0; p < scratch.size(); ++p) {
    const int64_t lo = p == 0 ? 1 : static_cast<int64_t>(4 * p + 1);
    const int64_t hi = static_cast<int64_t>(4 * (p + 1));
    profiles += std::string(p ? "," : "") + "{\"min\":[" + std::to_string(lo) + ",4],\"opt\":[" +
                std::to_string(hi) + ",4],\"max\":[" + std::to_string(hi) + ",4]}";
    scratch_list += std::string(p ? "," : "") + std::to_string(scratch[p]);
  }
  const std::string plan =
      "TTE-TEST-ENGINE\n{\"op\":\"add_one\",\"tensors\":[{\"name\":\"x" + tag +
      "\",\"is_input\":true,\"dtype\":\"float32\",\"profiles\":[" + profiles +
      "]},{\"name\":\"y\",\"is_input\":false,\"dtype\":\"float32\",\"shape_of\":"
      "\"x" +
      tag + "\"}],\"scratch_bytes\":[" + scratch_list +
      "],\"weight_bytes\":" + std::to_string(weight_bytes) + "}";
  return make_blob(blob_metadata({"x" + tag}, {"y"}), plan);
}

class SharedEngines : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    TteError error{};
    ASSERT_EQ(
        tte_load_engine_provider_library(host_test_provider().c_str(), TTE_PROVIDER_OTHER, &error),
        TTE_OK)
        << error.message;
  }
  void SetUp() override {
    reinterpret_cast<void (*)()>(dlsym(host_library(), "tte_test_provider_reset_stats"))();
    tte_reset_runtime_stats();
  }

  // Runs `delegate` on `rows` x 4 values start, start+1, ... and checks y = x + 1.
  static void run_and_check(Delegate& delegate, int rows, float start) {
    OwnedTensor x(ScalarType::Float, {rows, 4});
    OwnedTensor y(ScalarType::Float, {rows, 4});
    x.fill(start);
    ASSERT_EQ(delegate.execute({&x, &y}), Error::Ok);
    for (int i = 0; i < rows * 4; ++i) ASSERT_EQ(y.data<float>()[i], start + i + 1.0f) << i;
  }
};

TEST_F(SharedEngines, DelegatesShareOneArenaOfTheLargestNeed) {
  {
    Delegate a, b, c, d;
    ASSERT_EQ(a.init(add_one_blob({1000}, 0, "a")), Error::Ok);
    ASSERT_EQ(b.init(add_one_blob({5000}, 0, "b")), Error::Ok);
    ASSERT_EQ(c.init(add_one_blob({3000}, 0, "c")), Error::Ok);
    ASSERT_EQ(d.init(add_one_blob({200}, 0, "d")), Error::Ok);
    EXPECT_EQ(provider_stats().live_own_scratch_bytes, 0) << "user-managed engines allocate none";
    for (int round = 0; round < 3; ++round) {
      run_and_check(a, 2, 10.0f * round);
      run_and_check(b, 3, 1.0f);
      run_and_check(c, 4, -4.0f);
      run_and_check(d, 1, 0.5f);
    }
    const TteRuntimeStats s = runtime_stats();
    EXPECT_EQ(s.scratch_arenas, 1u) << "one arena for the host";
    EXPECT_EQ(s.scratch_arena_bytes, 5120u) << "the largest need, rounded to 256 bytes";
    EXPECT_EQ(s.scratch_arena_peak_bytes, 5120u) << "the old memory is freed before growing";
    // Each engine got the memory when it changed: a (1024), b (grew to
    // 5120), then c, d and a again with 5120; then never again.
    EXPECT_EQ(provider_stats().device_memory_sets, 5u);
  }
  const TteRuntimeStats after = runtime_stats();
  EXPECT_EQ(after.scratch_arenas, 0u) << "arenas are freed with the last delegate";
  EXPECT_EQ(after.scratch_arena_bytes, 0u);
}

TEST_F(SharedEngines, TheArenaGrowsWithTheProfile) {
  Delegate delegate;
  ASSERT_EQ(delegate.init(add_one_blob({256, 4096})), Error::Ok);
  run_and_check(delegate, 2, 0.0f);
  EXPECT_EQ(runtime_stats().scratch_arena_bytes, 256u);
  run_and_check(delegate, 7, 3.0f);
  EXPECT_EQ(runtime_stats().scratch_arena_bytes, 4096u);
  run_and_check(delegate, 2, 1.0f);
  EXPECT_EQ(runtime_stats().scratch_arena_bytes, 4096u) << "grow-only";
  EXPECT_EQ(provider_stats().device_memory_sets, 2u);
}

TEST_F(SharedEngines, WithoutSharingEachEngineHasItsOwnScratch) {
  et::BackendOptions<2> options;
  ASSERT_EQ(options.set_option("share_device_memory", false), Error::Ok);
  Delegate a, b;
  ASSERT_EQ(a.init(add_one_blob({1000}, 0, "a"), {}, options.view()), Error::Ok);
  ASSERT_EQ(b.init(add_one_blob({3000, 5000}, 0, "b"), {}, options.view()), Error::Ok);
  EXPECT_EQ(provider_stats().live_own_scratch_bytes, 6000) << "the sum, as upstream's contexts";
  run_and_check(a, 2, 1.0f);
  run_and_check(b, 4, 1.0f);
  EXPECT_EQ(runtime_stats().scratch_arenas, 0u);
  EXPECT_EQ(provider_stats().device_memory_sets, 0u);
}

TEST_F(SharedEngines, CudaGraphDelegatesKeepTheirOwnScratch) {
  et::BackendOptions<2> options;
  ASSERT_EQ(options.set_option("cuda_graphs", true), Error::Ok);
  Delegate a;
  ASSERT_EQ(a.init(add_one_blob({1000}), {}, options.view()), Error::Ok);
  EXPECT_EQ(provider_stats().live_own_scratch_bytes, 1000);
  run_and_check(a, 2, 1.0f);
  EXPECT_EQ(runtime_stats().scratch_arenas, 0u);
}

TEST_F(SharedEngines, ASecondLoadDoesNotDeserializeAgain) {
  const std::vector<uint8_t> blob = add_one_blob({512}, 1 << 20);
  for (int first_goes_first = 0; first_goes_first < 2; ++first_goes_first) {
    SetUp();
    auto first = std::make_unique<Delegate>();
    auto second = std::make_unique<Delegate>();
    ASSERT_EQ(first->init(blob), Error::Ok);
    ASSERT_EQ(second->init(blob), Error::Ok);
    TteTestProviderStats s = provider_stats();
    EXPECT_EQ(s.deserializes, 1u);
    EXPECT_EQ(s.execution_contexts, 1u);
    EXPECT_EQ(s.live_weight_bytes, 1 << 20) << "the weights once";
    EXPECT_EQ(runtime_stats().shared_engines, 1u);
    EXPECT_EQ(runtime_stats().shared_engine_reuses, 1u);
    run_and_check(*first, 3, 1.0f);
    run_and_check(*second, 1, 2.0f);
    run_and_check(*first, 4, 7.0f);
    // Handles go in either order; the engine goes with the last.
    (first_goes_first ? first : second).reset();
    EXPECT_EQ(provider_stats().live_weight_bytes, 1 << 20);
    run_and_check(first_goes_first ? *second : *first, 2, 3.0f);
    (first_goes_first ? second : first).reset();
    s = provider_stats();
    EXPECT_EQ(s.live_weight_bytes, 0);
    EXPECT_EQ(s.destroys, 2u);
    EXPECT_EQ(runtime_stats().shared_engines, 0u);
  }
  // With the engine gone, the next load deserializes again.
  SetUp();
  Delegate again;
  ASSERT_EQ(again.init(blob), Error::Ok);
  EXPECT_EQ(provider_stats().deserializes, 1u);
}

TEST_F(SharedEngines, ShareEnginesFalseDeserializesEachLoad) {
  const std::vector<uint8_t> blob = add_one_blob({0}, 4096);
  et::BackendOptions<2> options;
  ASSERT_EQ(options.set_option("share_engines", false), Error::Ok);
  Delegate a, b;
  ASSERT_EQ(a.init(blob, {}, options.view()), Error::Ok);
  ASSERT_EQ(b.init(blob, {}, options.view()), Error::Ok);
  EXPECT_EQ(provider_stats().deserializes, 2u);
  EXPECT_EQ(provider_stats().live_weight_bytes, 8192);
}

// Loads that refuse host code (untrusted files) share no engine: the cache's
// key is not a cryptographic digest.
TEST_F(SharedEngines, LoadsThatRefuseHostCodeShareNothing) {
  const std::vector<uint8_t> blob = add_one_blob({0}, 4096);
  et::BackendOptions<2> untrusted;
  ASSERT_EQ(untrusted.set_option("engine_host_code_allowed", false), Error::Ok);
  Delegate trusted, a, b;
  ASSERT_EQ(trusted.init(blob), Error::Ok);
  ASSERT_EQ(a.init(blob, {}, untrusted.view()), Error::Ok);
  ASSERT_EQ(b.init(blob, {}, untrusted.view()), Error::Ok);
  EXPECT_EQ(provider_stats().deserializes, 3u);
  EXPECT_EQ(runtime_stats().shared_engines, 1u);
  run_and_check(a, 2, 0.0f);
  run_and_check(b, 2, 0.0f);
}

TEST_F(SharedEngines, DifferentPlansOrOptionsAreNotShared) {
  Delegate a, b, c;
  ASSERT_EQ(a.init(add_one_blob({0}, 0, "a")), Error::Ok);
  ASSERT_EQ(b.init(add_one_blob({0}, 0, "b")), Error::Ok);
  et::BackendOptions<2> options;
  ASSERT_EQ(options.set_option("weight_streaming_budget", 1000), Error::Ok);
  ASSERT_EQ(c.init(add_one_blob({0}, 0, "a"), {}, options.view()), Error::Ok);
  EXPECT_EQ(provider_stats().deserializes, 3u);
  EXPECT_EQ(runtime_stats().shared_engines, 3u);
}

// A provider built against the older header (its struct ends before the
// new entries): each load deserializes, each engine keeps its own scratch.
TEST_F(SharedEngines, ProvidersWithoutTheEntriesBehaveAsBefore) {
  auto per_tensor = reinterpret_cast<const TteEngineProvider* (*)()>(
      dlsym(host_library(), "tte_test_host_provider_per_tensor"));
  ASSERT_NE(per_tensor, nullptr);
  TteError error{};
  ASSERT_EQ(tte_register_engine_provider(per_tensor(), TTE_PROVIDER_OTHER, &error), TTE_OK)
      << error.message;
  {
    et::BackendOptions<2> options;
    ASSERT_EQ(options.set_option("provider", "test-host-per-tensor"), Error::Ok);
    const std::vector<uint8_t> blob = add_one_blob({700}, 100);
    Delegate a, b;
    ASSERT_EQ(a.init(blob, {}, options.view()), Error::Ok);
    ASSERT_EQ(b.init(blob, {}, options.view()), Error::Ok);
    run_and_check(a, 2, 1.0f);
    run_and_check(b, 3, 1.0f);
    const TteTestProviderStats s = provider_stats();
    EXPECT_EQ(s.deserializes, 2u);
    EXPECT_EQ(s.execution_contexts, 0u);
    EXPECT_EQ(s.live_own_scratch_bytes, 1400);
    EXPECT_EQ(s.device_memory_sets, 0u);
    EXPECT_EQ(runtime_stats().scratch_arenas, 0u);
    EXPECT_EQ(runtime_stats().shared_engines, 0u);
  }
  tte_unregister_engine_provider("test-host-per-tensor", nullptr);
}

TEST_F(SharedEngines, ThreadsRunSharedEnginesConcurrently) {
  const std::vector<uint8_t> blob = add_one_blob({2048}, 1024);
  constexpr int kThreads = 4;
  std::vector<std::unique_ptr<Delegate>> delegates;
  for (int t = 0; t < kThreads; ++t) {
    delegates.push_back(std::make_unique<Delegate>());
    ASSERT_EQ(delegates.back()->init(blob), Error::Ok);
  }
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        OwnedTensor x(ScalarType::Float, {1 + (i + t) % 4, 4});
        OwnedTensor y(ScalarType::Float, {1 + (i + t) % 4, 4});
        x.fill(static_cast<float>(100 * t + i));
        if (delegates[t]->execute({&x, &y}) != Error::Ok) ++failures;
        for (int k = 0; k < x.impl().numel(); ++k) {
          if (y.data<float>()[k] != x.data<float>()[k] + 1.0f) ++failures;
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(provider_stats().deserializes, 1u);
  EXPECT_EQ(provider_stats().execution_contexts, static_cast<uint64_t>(kThreads - 1));
}

}  // namespace
