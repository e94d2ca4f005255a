// One TensorRTBackend delegate (backend/tensorrt_delegate.h), compiled from
// its sources and driven directly with the host test provider's engines
// (libtte_test_provider_host.so, whose counters show what the delegate asked
// of it): what init refuses and records, the blob freed once the engine
// holds the plan, no stream for host engines, shapes sent only when they
// change, profiles selected once, provider failures named, data-dependent
// outputs resized to what the engine produced (or refused past their
// bound), and user-managed scratch given only when an engine needs it.
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <executorch/runtime/backend/options.h>
#include <executorch/runtime/core/memory_allocator.h>

#include "backend/provider_registry.h"
#include "backend/tensorrt_delegate.h"
#include "backend_unit_support.h"
#include "common/call_context.h"
#include "text_match.h"

namespace {

namespace et = executorch::runtime;
using tte::CallContext;
using tte::Status;
using tte::TensorRTDelegate;
using tte_test::contains;
using tte_unit::add_one_plan;
using tte_unit::blob_metadata;
using tte_unit::HostTensor;
using tte_unit::make_blob;
using tte_unit::ScalarType;
using tte_unit::test_plan;

// y = the elements of x (1 to 64 of them) that are > 0: a data-dependent
// output.
std::string keep_positive_plan() {
  return test_plan(
      "{\"op\":\"keep_positive\",\"tensors\":[{\"name\":\"x\",\"is_input\":true,\"dtype\":"
      "\"float32\",\"profiles\":[{\"min\":[1],\"opt\":[8],\"max\":[64]}]},{\"name\":\"y\","
      "\"is_input\":false,\"dtype\":\"float32\",\"shape\":[-1]}]}");
}

std::vector<uint8_t> x_to_y(const std::string& plan) {
  return make_blob(blob_metadata({"x"}, {"y"}), plan);
}

et::BackendOption bool_option(const char* key, bool value) {
  et::BackendOption option;
  std::strncpy(option.key, key, sizeof(option.key) - 1);
  option.value = value;
  return option;
}

et::BackendOption string_option(const char* key, const char* value) {
  et::BackendOption option;
  std::strncpy(option.key, key, sizeof(option.key) - 1);
  std::array<char, et::kMaxOptionValueLength> text{};
  std::strncpy(text.data(), value, text.size() - 1);
  option.value = text;
  return option;
}

class TensorRTDelegateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tte_unit::HostTestProvider& library = tte_unit::HostTestProvider::instance();
    ASSERT_TRUE(library.loaded()) << library.error();
    tte::ProviderRegistry& registry = tte::ProviderRegistry::instance();
    if (registry.find("test-host") == nullptr) {
      ASSERT_TRUE(registry.add(library.batched(), TTE_PROVIDER_OTHER).ok());
      ASSERT_TRUE(registry.add(library.per_tensor(), TTE_PROVIDER_OTHER).ok());
    }
    library.reset_stats();
  }

  TteTestProviderStats stats() const { return tte_unit::HostTestProvider::instance().stats(); }

  // TensorRTDelegate::create over a copy of `blob`, as ExecuTorch's Method
  // calls init; `freed` says whether the delegate freed the blob during it.
  Status create(const std::vector<uint8_t>& blob, std::unique_ptr<TensorRTDelegate>* out,
                std::vector<et::BackendOption> options = {}, CallContext* call = nullptr,
                bool* freed = nullptr) {
    std::vector<uint8_t> bytes = blob;
    bool was_freed = false;
    et::FreeableBuffer processed(
        bytes.data(), bytes.size(),
        [](void* context, void*, size_t) { *static_cast<bool*>(context) = true; }, &was_freed);
    alignas(16) uint8_t arena[4096];
    et::MemoryAllocator allocator(sizeof(arena), arena);
    et::BackendInitContext context(
        &allocator, nullptr, "forward", nullptr,
        et::Span<const et::BackendOption>(options.data(), options.size()));
    const Status status = TensorRTDelegate::create(call, context, &processed, {}, out);
    if (freed != nullptr) *freed = was_freed;
    return status;
  }

  static Status run(TensorRTDelegate& delegate, CallContext& call,
                    const std::vector<HostTensor*>& tensors) {
    std::vector<et::EValue*> args;
    for (HostTensor* t : tensors) args.push_back(t->value());
    return delegate.execute(call, tte::DelegateArgs(args.data(), args.size()));
  }
  static Status run(TensorRTDelegate& delegate, const std::vector<HostTensor*>& tensors) {
    CallContext call;
    return run(delegate, call, tensors);
  }
};

TEST_F(TensorRTDelegateTest, RefusesAMissingEmptyOrDamagedBlobAndRecordsWhy) {
  std::unique_ptr<TensorRTDelegate> delegate;
  alignas(16) uint8_t arena[1024];
  et::MemoryAllocator allocator(sizeof(arena), arena);
  et::BackendInitContext context(&allocator, nullptr, "forward");
  Status status = TensorRTDelegate::create(nullptr, context, nullptr, {}, &delegate);
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(status.message(), "TensorRTBackend init got no delegate blob");
  et::FreeableBuffer empty(nullptr, 0, nullptr);
  status = TensorRTDelegate::create(nullptr, context, &empty, {}, &delegate);
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_PROGRAM);
  EXPECT_EQ(status.message(), "TensorRTBackend init got an empty delegate blob");

  CallContext call;
  std::vector<tte::DelegateRecord> records;
  call.delegate_records = &records;
  const std::string garbage = "not a delegate blob at all, but long enough to have a header";
  status = create(std::vector<uint8_t>(garbage.begin(), garbage.end()), &delegate, {}, &call);
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_PROGRAM);
  EXPECT_EQ(status.message().rfind("invalid TensorRTBackend delegate blob: ", 0), 0u)
      << status.message();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].method, "forward");
  EXPECT_EQ(records[0].error, status.message());
  EXPECT_EQ(records[0].provider, "");
  EXPECT_EQ(delegate, nullptr);
}

TEST_F(TensorRTDelegateTest, LoadsTheEngineRecordsItsProviderAndFreesTheBlob) {
  CallContext call;
  std::vector<tte::DelegateRecord> records;
  call.delegate_records = &records;
  std::unique_ptr<TensorRTDelegate> delegate;
  bool freed = false;
  ASSERT_TRUE(create(x_to_y(add_one_plan(1, 8)), &delegate, {}, &call, &freed).ok());
  ASSERT_NE(delegate, nullptr);
  EXPECT_TRUE(freed) << "the engine keeps its own copy of the plan";
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].provider, "test-host");
  EXPECT_EQ(records[0].error, "");
  EXPECT_TRUE(contains(records[0].blob_json, "\"io_bindings\"")) << records[0].blob_json;
}

TEST_F(TensorRTDelegateTest, FreesTheBlobOnceLoadedAlsoWhenTheEngineTableIsRefused) {
  CallContext call;
  std::vector<tte::DelegateRecord> records;
  call.delegate_records = &records;
  std::unique_ptr<TensorRTDelegate> delegate;
  bool freed = false;
  const Status status = create(make_blob(blob_metadata({"q"}, {"y"}), add_one_plan(1, 8)),
                               &delegate, {}, &call, &freed);
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_PROGRAM);
  EXPECT_TRUE(contains(status.message(), "do not match the engine's tensors")) << status.message();
  EXPECT_TRUE(freed);
  EXPECT_EQ(delegate, nullptr);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].provider, "test-host");
  EXPECT_EQ(records[0].error, status.message());
}

TEST_F(TensorRTDelegateTest, AHostEngineRunsWithoutTheCallersStream) {
  std::unique_ptr<TensorRTDelegate> delegate;
  ASSERT_TRUE(create(x_to_y(add_one_plan(1, 8)), &delegate).ok());
  HostTensor x(ScalarType::Float, {2, 4});
  HostTensor y(ScalarType::Float, {2, 4});
  x.fill(0);
  CallContext call;
  call.use_stream(reinterpret_cast<void*>(0x1000));
  const Status status = run(*delegate, call, {&x, &y});
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(y.values(), (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(stats().enqueues, 1u);
  EXPECT_EQ(stats().last_stream, nullptr) << "host providers get a NULL stream";
}

TEST_F(TensorRTDelegateTest, ABatchedProviderIsGivenShapesOnlyWhenTheyChange) {
  std::unique_ptr<TensorRTDelegate> delegate;
  ASSERT_TRUE(create(x_to_y(add_one_plan(1, 8)), &delegate).ok());
  HostTensor y(ScalarType::Float, {8, 4});  // planned at the upper bound
  uint64_t executes = 0;
  // Rows per run, and how many batched calls it takes: shapes + enqueue when
  // the rows change, the enqueue alone when they do not.
  const std::vector<std::pair<int, uint64_t>> runs = {{2, 2}, {2, 1}, {2, 1}, {5, 2}, {2, 2}};
  for (const auto& [rows, calls] : runs) {
    HostTensor x(ScalarType::Float, {rows, 4});
    x.fill(10);
    const Status status = run(*delegate, {&x, &y});
    ASSERT_TRUE(status.ok()) << status.message();
    EXPECT_EQ(stats().executes - executes, calls) << rows;
    executes = stats().executes;
    // Outputs take the shape the provider reported with the shapes it kept.
    EXPECT_EQ(y.sizes(), (std::vector<int32_t>{rows, 4}));
    EXPECT_EQ(y.as<float>()[rows * 4 - 1], 10.0f + rows * 4);
  }
  EXPECT_EQ(stats().input_shapes_set, 3u);
  EXPECT_EQ(stats().enqueues, runs.size());
}

TEST_F(TensorRTDelegateTest, APerTensorProviderSetsShapesOnEveryCallAndSelectsAProfileOnChange) {
  // Profile 0 holds 1..4 rows, profile 1 holds 5..8.
  const std::string plan = test_plan(
      "{\"op\":\"add_one\",\"tensors\":[{\"name\":\"x\",\"is_input\":true,\"dtype\":\"float32\","
      "\"profiles\":[{\"min\":[1,4],\"opt\":[4,4],\"max\":[4,4]},{\"min\":[5,4],\"opt\":[8,4],"
      "\"max\":[8,4]}]},{\"name\":\"y\",\"is_input\":false,\"dtype\":\"float32\",\"shape_of\":"
      "\"x\"}]}");
  std::unique_ptr<TensorRTDelegate> delegate;
  ASSERT_TRUE(
      create(x_to_y(plan), &delegate, {string_option("provider", "test-host-per-tensor")}).ok());
  HostTensor y(ScalarType::Float, {8, 4});
  // Rows, then the profile selected and how many selections so far.
  const struct {
    int rows;
    int32_t profile;
    uint64_t selects;
  } runs[] = {{2, 0, 1}, {3, 0, 1}, {6, 1, 2}, {7, 1, 2}, {1, 0, 3}};
  uint64_t shapes = 0;
  for (const auto& r : runs) {
    HostTensor x(ScalarType::Float, {r.rows, 4});
    ASSERT_TRUE(run(*delegate, {&x, &y}).ok()) << r.rows;
    EXPECT_EQ(stats().last_profile, r.profile) << r.rows;
    EXPECT_EQ(stats().select_profiles, r.selects) << r.rows;
    EXPECT_EQ(stats().input_shapes_set, ++shapes) << "the per-tensor path sets every call's";
  }
  EXPECT_EQ(stats().executes, 0u) << "no batched entry";
}

TEST_F(TensorRTDelegateTest, AFailedEnqueueNamesTheProvider) {
  std::unique_ptr<TensorRTDelegate> delegate;
  ASSERT_TRUE(
      create(x_to_y(add_one_plan(1, 8, "\"fail\":{\"enqueue\":\"told to fail\"}")), &delegate)
          .ok());
  HostTensor x(ScalarType::Float, {2, 4});
  HostTensor y(ScalarType::Float, {2, 4});
  const Status status = run(*delegate, {&x, &y});
  EXPECT_EQ(status.code(), TTE_ERROR_RUNTIME);
  EXPECT_EQ(status.message(), "engine provider 'test-host': enqueue failed: told to fail");
}

TEST_F(TensorRTDelegateTest, ADataDependentOutputTakesTheShapeTheEngineProduced) {
  std::unique_ptr<TensorRTDelegate> delegate;
  ASSERT_TRUE(create(x_to_y(keep_positive_plan()), &delegate).ok());
  // ExecuTorch plans the output at its upper bound, 8 elements.
  HostTensor y(ScalarType::Float, {8});
  HostTensor some(ScalarType::Float, {8});
  some.set({-1, 2, 0, 3, -4, 5, 6, -7});
  ASSERT_TRUE(run(*delegate, {&some, &y}).ok());
  EXPECT_EQ(y.sizes(), (std::vector<int32_t>{4}));
  EXPECT_EQ(y.values(), (std::vector<float>{2, 3, 5, 6}));

  // The engine asks for x's 64 bytes, more than the bound's 32: it writes
  // memory of its own, and a result that fits is moved into the output.
  HostTensor wide(ScalarType::Float, {16});
  wide.set({-1, -1, 9, -1, -1, -1, 8, -1, -1, -1, 7, -1, -1, -1, 6, -1});
  Status status = run(*delegate, {&wide, &y});
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(y.values(), (std::vector<float>{9, 8, 7, 6}));

  // A result past the bound ExecuTorch planned is refused, not truncated.
  HostTensor all(ScalarType::Float, {16});
  all.fill(1);
  status = run(*delegate, {&all, &y});
  EXPECT_EQ(status.code(), TTE_ERROR_RUNTIME);
  EXPECT_TRUE(contains(status.message(),
                       "output 'y': the engine produced shape [16] (64 bytes), more than the 32 "
                       "bytes ExecuTorch planned for it (upper bound [8])"))
      << status.message();
}

TEST_F(TensorRTDelegateTest, ADataDependentOutputNeedsAProviderOfAbiVersion2) {
  std::unique_ptr<TensorRTDelegate> delegate;
  ASSERT_TRUE(create(x_to_y(keep_positive_plan()), &delegate,
                     {string_option("provider", "test-host-per-tensor")})
                  .ok());
  HostTensor x(ScalarType::Float, {8});
  HostTensor y(ScalarType::Float, {8});
  const Status status = run(*delegate, {&x, &y});
  EXPECT_EQ(status.code(), TTE_ERROR_NOT_SUPPORTED);
  EXPECT_TRUE(contains(status.message(),
                       "engine provider 'test-host-per-tensor' reports a data-dependent shape "
                       "[-1] for output 'y' but has no set_output_capacity/get_output_result"))
      << status.message();
  EXPECT_EQ(stats().enqueues, 0u);
}

TEST_F(TensorRTDelegateTest, SharedScratchIsGivenOnlyWhenTheEngineNeedsIt) {
  HostTensor x(ScalarType::Float, {2, 4});
  HostTensor y(ScalarType::Float, {2, 4});
  {
    // No scratch in any profile: NULL and 0 bytes once, at load (TensorRT's
    // rule for user-managed contexts), and nothing per call.
    std::unique_ptr<TensorRTDelegate> delegate;
    ASSERT_TRUE(create(x_to_y(add_one_plan(1, 8)), &delegate).ok());
    EXPECT_EQ(stats().device_memory_sets, 1u);
    ASSERT_TRUE(run(*delegate, {&x, &y}).ok());
    ASSERT_TRUE(run(*delegate, {&x, &y}).ok());
    EXPECT_EQ(stats().device_memory_sets, 1u);
  }
  tte_unit::HostTestProvider::instance().reset_stats();
  {
    // Scratch: the arena's memory at the first call, and again only when it
    // changed.
    std::unique_ptr<TensorRTDelegate> delegate;
    ASSERT_TRUE(create(x_to_y(add_one_plan(1, 8, "\"scratch_bytes\":1000")), &delegate).ok());
    EXPECT_EQ(stats().device_memory_sets, 0u);
    ASSERT_TRUE(run(*delegate, {&x, &y}).ok());
    EXPECT_EQ(stats().device_memory_sets, 1u);
    ASSERT_TRUE(run(*delegate, {&x, &y}).ok());
    EXPECT_EQ(stats().device_memory_sets, 1u);
    EXPECT_EQ(stats().live_own_scratch_bytes, 0);
  }
  tte_unit::HostTestProvider::instance().reset_stats();
  {
    // share_device_memory=false: the engine keeps scratch of its own.
    std::unique_ptr<TensorRTDelegate> delegate;
    ASSERT_TRUE(create(x_to_y(add_one_plan(1, 8, "\"scratch_bytes\":1000")), &delegate,
                       {bool_option("share_device_memory", false)})
                    .ok());
    ASSERT_TRUE(run(*delegate, {&x, &y}).ok());
    EXPECT_EQ(stats().device_memory_sets, 0u);
    EXPECT_EQ(stats().live_own_scratch_bytes, 1000);
  }
}

}  // namespace
