// TensorRTBackend driven as ExecuTorch drives it, with host-memory engines of
// a fake provider: what every call checks and the message a user gets when a
// check fails, output resizing, profiles, aliasing, load options, and
// concurrency.
#include <string>
#include <thread>
#include <vector>

#include <executorch/runtime/backend/options.h>

#include "delegate_harness.h"
#include "text_match.h"
#include "torch_tensorrt_executorch/c_api.h"

namespace tte_test {
namespace {

using et::Error;

// y = x + 1 on [1..8, 4] float32 inputs.
std::vector<uint8_t> add_one_blob(int device_id = 0) {
  FakeEngineSpec spec;
  spec.tensors = {input("x", {1, 4}, {8, 4}), output_like("y", 0)};
  spec.op = Op::kAddOne;
  return make_blob(blob_metadata({"x"}, {"y"}, device_id), fake_plan(spec));
}

class Backend : public testing::Test {
 protected:
  FakeProvider provider_{"fake-host"};
};

TEST_F(Backend, IsRegisteredAndAvailable) {
  ASSERT_NE(backend(), nullptr);
  EXPECT_TRUE(backend()->is_available());
}

TEST_F(Backend, RunsAnEngine) {
  Delegate delegate;
  ASSERT_EQ(delegate.init(add_one_blob()), Error::Ok);
  EXPECT_TRUE(delegate.freed_during_init()) << "the blob is freed once the engine is loaded";
  OwnedTensor x(ScalarType::Float, {2, 4});
  OwnedTensor y(ScalarType::Float, {2, 4});
  x.fill(0);
  ASSERT_EQ(delegate.execute({&x, &y}), Error::Ok);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(y.data<float>()[i], i + 1.0f);
  EXPECT_EQ(provider_.state().enqueues.load(), 1);
  EXPECT_EQ(provider_.state().last_stream.load(), nullptr) << "host providers get no stream";
}

TEST_F(Backend, ChecksTheArgumentCount) {
  Delegate delegate;
  ASSERT_EQ(delegate.init(add_one_blob()), Error::Ok);
  OwnedTensor x(ScalarType::Float, {2, 4});
  StderrCapture log;
  EXPECT_EQ(delegate.execute({&x}), Error::InvalidArgument);
  EXPECT_TRUE(contains(log.text(), "expected 2 arguments (1 inputs + 1 outputs), got 1"))
      << log.text();
}

TEST_F(Backend, RefusesANonTensorArgument) {
  Delegate delegate;
  ASSERT_EQ(delegate.init(add_one_blob()), Error::Ok);
  OwnedTensor y(ScalarType::Float, {2, 4});
  et::EValue number(int64_t{3});
  StderrCapture log;
  EXPECT_EQ(delegate.execute_values({&number, y.value()}), Error::InvalidArgument);
  EXPECT_TRUE(contains(log.text(), "argument 0 (input 'x') is not a tensor")) << log.text();
}

TEST_F(Backend, ChecksDtypes) {
  Delegate delegate;
  ASSERT_EQ(delegate.init(add_one_blob()), Error::Ok);
  OwnedTensor x(ScalarType::Long, {2, 4});
  OwnedTensor y(ScalarType::Float, {2, 4});
  {
    StderrCapture log;
    EXPECT_EQ(delegate.execute({&x, &y}), Error::InvalidArgument);
    EXPECT_TRUE(contains(log.text(), "input 'x': expected float32, got int64")) << log.text();
  }
  OwnedTensor good_x(ScalarType::Float, {2, 4});
  OwnedTensor half_y(ScalarType::Half, {2, 4});
  StderrCapture log;
  EXPECT_EQ(delegate.execute({&good_x, &half_y}), Error::InvalidArgument);
  EXPECT_TRUE(contains(log.text(), "output 'y': expected float32, got float16")) << log.text();
  EXPECT_EQ(provider_.state().enqueues.load(), 0);
}

TEST_F(Backend, ChecksRank) {
  Delegate delegate;
  ASSERT_EQ(delegate.init(add_one_blob()), Error::Ok);
  OwnedTensor x(ScalarType::Float, {2, 4, 1});
  OwnedTensor y(ScalarType::Float, {2, 4});
  StderrCapture log;
  EXPECT_EQ(delegate.execute({&x, &y}), Error::InvalidArgument);
  EXPECT_TRUE(contains(log.text(), "input 'x': expected rank 2, got rank 3 (shape [2, 4, 1])"))
      << log.text();
}

TEST_F(Backend, RefusesANonDefaultDimOrder) {
  Delegate delegate;
  ASSERT_EQ(delegate.init(add_one_blob()), Error::Ok);
  OwnedTensor x(ScalarType::Float, {4, 4});
  OwnedTensor y(ScalarType::Float, {4, 4});
  x.dim_order() = {1, 0};
  StderrCapture log;
  EXPECT_EQ(delegate.execute({&x, &y}), Error::InvalidArgument);
  EXPECT_TRUE(contains(log.text(), "input 'x': expected a contiguous tensor")) << log.text();
}

TEST_F(Backend, ChecksDimsAgainstTheProfile) {
  Delegate delegate;
  ASSERT_EQ(delegate.init(add_one_blob()), Error::Ok);
  OwnedTensor x(ScalarType::Float, {9, 4});
  OwnedTensor y(ScalarType::Float, {9, 4});
  StderrCapture log;
  EXPECT_EQ(delegate.execute({&x, &y}), Error::InvalidArgument);
  EXPECT_TRUE(contains(log.text(), "input 'x' has shape [9, 4], allowed [1..8, 4]")) << log.text();
}

TEST_F(Backend, PicksTheProfileThatFits) {
  FakeEngineSpec spec;
  FakeTensor x = input("x", {1, 4}, {4, 4});
  x.min.push_back({5, 4});
  x.max.push_back({16, 4});
  spec.tensors = {x, output_like("y", 0)};
  Delegate delegate;
  ASSERT_EQ(delegate.init(make_blob(blob_metadata({"x"}, {"y"}), fake_plan(spec))), Error::Ok);
  auto run = [&](int rows) {
    OwnedTensor in(ScalarType::Float, {rows, 4});
    OwnedTensor out(ScalarType::Float, {rows, 4});
    in.fill(0);
    EXPECT_EQ(delegate.execute({&in, &out}), Error::Ok) << rows;
    EXPECT_EQ(out.data<float>()[rows * 4 - 1], rows * 4.0f);
  };
  run(3);
  EXPECT_EQ(provider_.state().last_profile.load(), 0);
  run(12);
  EXPECT_EQ(provider_.state().last_profile.load(), 1);
  const int selects = provider_.state().select_profiles.load();
  run(10);
  EXPECT_EQ(provider_.state().select_profiles.load(), selects) << "same profile: no reselect";
  run(2);
  EXPECT_EQ(provider_.state().last_profile.load(), 0);

  OwnedTensor in(ScalarType::Float, {17, 4});
  OwnedTensor out(ScalarType::Float, {17, 4});
  StderrCapture log;
  EXPECT_EQ(delegate.execute({&in, &out}), Error::InvalidArgument);
  EXPECT_TRUE(contains(log.text(), "profile 0: input 'x' has shape [17, 4], allowed [1..4, 4]"))
      << log.text();
  EXPECT_TRUE(contains(log.text(), "profile 1: input 'x' has shape [17, 4], allowed [5..16, 4]"))
      << log.text();
}

TEST_F(Backend, ResizesOutputsToTheEngineShape) {
  Delegate delegate;
  ASSERT_EQ(delegate.init(add_one_blob()), Error::Ok);
  // ExecuTorch allocates dynamic outputs at their upper bound.
  OwnedTensor y(ScalarType::Float, {8, 4});
  for (int rows : {3, 8, 1}) {
    OwnedTensor x(ScalarType::Float, {rows, 4});
    x.fill(10);
    ASSERT_EQ(delegate.execute({&x, &y}), Error::Ok);
    EXPECT_EQ(y.sizes(), (std::vector<int32_t>{rows, 4}));
    EXPECT_EQ(y.data<float>()[rows * 4 - 1], 10.0f + rows * 4);
  }
}

TEST_F(Backend, SaysWhenAnOutputCannotHoldTheResult) {
  Delegate delegate;
  ASSERT_EQ(delegate.init(add_one_blob()), Error::Ok);
  OwnedTensor x(ScalarType::Float, {6, 4});
  OwnedTensor y(ScalarType::Float, {2, 4});
  StderrCapture log;
  EXPECT_NE(delegate.execute({&x, &y}), Error::Ok);
  EXPECT_TRUE(contains(log.text(), "output 'y': cannot resize from [2, 4] to the engine's [6, 4]"))
      << log.text();
}

TEST_F(Backend, ScalarOutputsMatchTensorRTsOneElementShape) {
  FakeEngineSpec spec;
  spec.tensors = {static_input("x", {1}), fixed_output("y", {1})};
  Delegate delegate;
  ASSERT_EQ(delegate.init(make_blob(blob_metadata({"x"}, {"y"}), fake_plan(spec))), Error::Ok);
  OwnedTensor x(ScalarType::Float, {});
  OwnedTensor y(ScalarType::Float, {});
  x.data<float>()[0] = 41;
  ASSERT_EQ(delegate.execute({&x, &y}), Error::Ok);
  EXPECT_EQ(y.data<float>()[0], 42.0f);
  EXPECT_EQ(y.impl().dim(), 0);
}

TEST_F(Backend, EmptyTensorsGetAValidAddress) {
  FakeEngineSpec spec;
  spec.tensors = {input("x", {0, 4}, {8, 4}), output_like("y", 0)};
  Delegate delegate;
  ASSERT_EQ(delegate.init(make_blob(blob_metadata({"x"}, {"y"}), fake_plan(spec))), Error::Ok);
  OwnedTensor x(ScalarType::Float, {0, 4});
  OwnedTensor y(ScalarType::Float, {0, 4}, 0, nullptr);
  ASSERT_EQ(delegate.execute({&x, &y}), Error::Ok);
  for (void* address : provider_.state().last_addresses) EXPECT_NE(address, nullptr);
}

TEST_F(Backend, BindsByNameNotPosition) {
  // Engine order interleaves and differs from the delegate's argument order.
  FakeEngineSpec spec;
  spec.tensors = {static_input("b", {3}), fixed_output("y", {3}), static_input("a", {3})};
  spec.op = Op::kSubtract;  // y = first engine input - second: b - a
  Delegate delegate;
  ASSERT_EQ(delegate.init(make_blob(blob_metadata({"a", "b"}, {"y"}), fake_plan(spec))), Error::Ok);
  OwnedTensor a(ScalarType::Float, {3});
  OwnedTensor b(ScalarType::Float, {3});
  OwnedTensor y(ScalarType::Float, {3});
  a.fill(1, 0);   // 1 1 1
  b.fill(10, 0);  // 10 10 10
  ASSERT_EQ(delegate.execute({&a, &b, &y}), Error::Ok);
  EXPECT_EQ(y.data<float>()[0], 9.0f) << "argument 'b' must reach engine tensor 'b'";
}

// Upstream's reader takes io_bindings with inputs and outputs interleaved:
// the delegate's arguments are the inputs in order, then the outputs.
TEST_F(Backend, InterleavedBindingsGiveInputsThenOutputs) {
  FakeEngineSpec spec;
  spec.tensors = {static_input("a", {3}), static_input("b", {3}), fixed_output("y", {3})};
  spec.op = Op::kSubtract;  // y = a - b
  Json metadata = blob_metadata({}, {});
  metadata["io_bindings"] =
      Json::array({binding("a", true), binding("y", false), binding("b", true)});
  Delegate delegate;
  ASSERT_EQ(delegate.init(make_blob(metadata, fake_plan(spec))), Error::Ok);
  OwnedTensor a(ScalarType::Float, {3});
  OwnedTensor b(ScalarType::Float, {3});
  OwnedTensor y(ScalarType::Float, {3});
  a.fill(10, 0);
  b.fill(1, 0);
  ASSERT_EQ(delegate.execute({&a, &b, &y}), Error::Ok);
  EXPECT_EQ(y.data<float>()[0], 9.0f);
}

// Upstream's writer records device -1 for an engine exported without a
// device index; it loads on the current device (0 here).
TEST_F(Backend, DeviceIdMinusOneIsTheCurrentDevice) {
  Delegate delegate;
  ASSERT_EQ(delegate.init(add_one_blob(/*device_id=*/-1)), Error::Ok);
  std::lock_guard<std::mutex> lock(provider_.state().mutex);
  EXPECT_EQ(provider_.state().last_options.device_id, 0);
}

// TensorRT's setTensorAddress: "The pointer must have at least 256-byte
// alignment" (NvInferRuntime.h:4378). ExecuTorch plans tensors 16-byte
// aligned and callers pass offset views: those are staged.
TEST_F(Backend, MisalignedTensorsAreStagedToTheEnginesAlignment) {
  provider_.state().require_alignment = 256;
  Delegate delegate;
  ASSERT_EQ(delegate.init(add_one_blob()), Error::Ok);
  alignas(256) static float arena[4 * 64 + 64];
  float* x_data = arena + 4;       // 16 bytes past a 256-byte boundary
  float* y_data = arena + 64 + 8;  // 32 bytes past one
  OwnedTensor x(ScalarType::Float, {2, 4}, -1, x_data);
  OwnedTensor y(ScalarType::Float, {2, 4}, -1, y_data);
  x.fill(0);
  ASSERT_EQ(delegate.execute({&x, &y}), Error::Ok);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(y_data[i], i + 1.0f) << "the staged output is copied back";
  for (void* address : provider_.state().last_addresses) {
    EXPECT_EQ(reinterpret_cast<uintptr_t>(address) % 256, 0u);
  }
  // Aligned memory is bound as it is.
  alignas(256) static float aligned_x[8], aligned_y[8];
  OwnedTensor ax(ScalarType::Float, {2, 4}, -1, aligned_x);
  OwnedTensor ay(ScalarType::Float, {2, 4}, -1, aligned_y);
  ASSERT_EQ(delegate.execute({&ax, &ay}), Error::Ok);
  EXPECT_EQ(provider_.state().last_addresses[0], static_cast<void*>(aligned_x));
}

TEST_F(Backend, UnicodeNamesBind) {
  FakeEngineSpec spec;
  spec.tensors = {static_input("入力.x", {2}), output_like("выход", 0)};
  Delegate delegate;
  ASSERT_EQ(delegate.init(make_blob(blob_metadata({"入力.x"}, {"выход"}), fake_plan(spec))),
            Error::Ok);
}

TEST_F(Backend, ListsMissingAndExtraNames) {
  FakeEngineSpec spec;
  spec.tensors = {static_input("x", {2}), static_input("extra", {2}), output_like("y", 0)};
  Delegate delegate;
  StderrCapture log;
  EXPECT_EQ(delegate.init(make_blob(blob_metadata({"x", "gone"}, {"y"}), fake_plan(spec))),
            Error::InvalidProgram);
  EXPECT_TRUE(contains(log.text(), "not in the engine: 'gone'")) << log.text();
  EXPECT_TRUE(contains(log.text(), "not in the blob: 'extra'")) << log.text();
  EXPECT_EQ(provider_.state().destroys.load(), 1) << "the engine of a failed init is destroyed";
}

TEST_F(Backend, SaysWhenADirectionDiffers) {
  FakeEngineSpec spec;
  spec.tensors = {static_input("x", {2}), output_like("y", 0)};
  Delegate delegate;
  StderrCapture log;
  EXPECT_EQ(delegate.init(make_blob(blob_metadata({"x", "y"}, {}), fake_plan(spec))),
            Error::InvalidProgram);
  EXPECT_TRUE(contains(log.text(), "'y' is an input in the blob but an output of the engine"))
      << log.text();
}

TEST_F(Backend, EmptyBindingsUseTheEngineNameSuffixes) {
  FakeEngineSpec spec;
  spec.tensors = {static_input("input_1", {2}), fixed_output("output_0", {2}),
                  static_input("input_0", {2})};
  spec.op = Op::kSubtract;  // output = input_1 - input_0 (engine order)
  Json metadata = blob_metadata({}, {});
  Delegate delegate;
  ASSERT_EQ(delegate.init(make_blob(metadata, fake_plan(spec))), Error::Ok);
  OwnedTensor first(ScalarType::Float, {2});   // input_0
  OwnedTensor second(ScalarType::Float, {2});  // input_1
  OwnedTensor out(ScalarType::Float, {2});
  first.fill(1, 0);
  second.fill(5, 0);
  ASSERT_EQ(delegate.execute({&first, &second, &out}), Error::Ok);
  EXPECT_EQ(out.data<float>()[0], 4.0f);
}

TEST_F(Backend, RefusesShapeTensors) {
  FakeEngineSpec spec;
  FakeTensor shape = static_input("shape", {2}, ScalarType::Int);
  shape.shape_tensor = true;
  spec.tensors = {static_input("x", {2}), shape, output_like("y", 0)};
  Delegate delegate;
  StderrCapture log;
  EXPECT_EQ(delegate.init(make_blob(blob_metadata({"x", "shape"}, {"y"}), fake_plan(spec))),
            Error::NotSupported);
  EXPECT_TRUE(contains(log.text(), "engine tensor 'shape' is a shape tensor")) << log.text();
}

TEST_F(Backend, RefusesAnEngineWhoseTensorsAreMalformed) {
  struct Case {
    const char* what;
    void (*breakit)(FakeEngineSpec*);
    const char* expected;
  } cases[] = {
      {"no name", [](FakeEngineSpec* s) { s->tensors[0].name = ""; },
       "engine I/O tensor 0 has no name"},
      {"rank", [](FakeEngineSpec* s) { s->tensors[0].rank = TTE_MAX_RANK + 1; },
       "engine tensor 'x' has rank"},
      {"dtype", [](FakeEngineSpec* s) { s->tensors[0].dtype = static_cast<ScalarType>(120); },
       "engine tensor 'x' has unknown scalar type 120"},
      {"two names", [](FakeEngineSpec* s) { s->tensors[1].name = "x"; },
       "the engine has two I/O tensors named 'x'"},
  };
  for (const Case& c : cases) {
    FakeEngineSpec spec;
    spec.tensors = {static_input("x", {2}), output_like("y", 0)};
    c.breakit(&spec);
    Delegate delegate;
    StderrCapture log;
    EXPECT_EQ(delegate.init(make_blob(blob_metadata({"x"}, {"y"}), fake_plan(spec))),
              Error::InvalidProgram)
        << c.what;
    EXPECT_TRUE(contains(log.text(), c.expected)) << c.what << ": " << log.text();
  }
}

TEST_F(Backend, ExecuteWithoutAHandleIsRefused) {
  et::BackendExecutionContext context(nullptr, nullptr, "forward");
  StderrCapture log;
  EXPECT_EQ(backend()->execute(context, nullptr, {}), Error::DelegateInvalidHandle);
  EXPECT_TRUE(contains(log.text(), "TensorRTBackend execute got no delegate handle")) << log.text();
}

TEST_F(Backend, RefusesACorruptBlob) {
  std::vector<uint8_t> blob = add_one_blob();
  blob[0] = 'X';
  Delegate delegate;
  StderrCapture log;
  EXPECT_EQ(delegate.init(blob), Error::InvalidProgram);
  EXPECT_TRUE(contains(log.text(), "invalid TensorRTBackend delegate blob")) << log.text();
  EXPECT_EQ(provider_.state().deserializes.load(), 0);
}

// ---- Aliased I/O (TR02) ----------------------------------------------------

FakeEngineSpec kv_engine(bool engine_aliases = true) {
  FakeEngineSpec spec;
  FakeTensor cache_out = output_like("cache_out", 0);
  if (engine_aliases) cache_out.aliased_input = 0;
  spec.tensors = {static_input("cache", {4}), static_input("x", {4}), cache_out,
                  output_like("y", 0)};
  spec.op = Op::kKvUpdate;
  return spec;
}

Json kv_metadata(const std::string& kind = "kv_cache_update") {
  Json metadata = blob_metadata({"cache", "x"}, {"cache_out", "y"});
  metadata["aliased_io"] =
      Json::array({Json{{"output", "cache_out"}, {"input", "cache"}, {"kind", kind}}});
  return metadata;
}

TEST_F(Backend, AliasedOutputsUpdateTheInputInPlace) {
  Delegate delegate;
  ASSERT_EQ(delegate.init(make_blob(kv_metadata(), fake_plan(kv_engine()))), Error::Ok);
  OwnedTensor cache(ScalarType::Float, {4});
  OwnedTensor x(ScalarType::Float, {4});
  OwnedTensor cache_out(ScalarType::Float, {4});
  OwnedTensor y(ScalarType::Float, {4});
  cache.fill(0, 0);
  x.fill(1, 0);
  for (int call = 1; call <= 3; ++call) {
    ASSERT_EQ(delegate.execute({&cache, &x, &cache_out, &y}), Error::Ok);
    EXPECT_EQ(cache.data<float>()[0], call) << "the caller's cache is updated in place";
    EXPECT_EQ(cache_out.data<float>()[0], call) << "the delegate's own output gets the result";
    EXPECT_EQ(y.data<float>()[0], call);
  }
  // When ExecuTorch passes the input's own buffer as the aliased output.
  OwnedTensor shared(ScalarType::Float, {4}, -1, cache.data<float>());
  ASSERT_EQ(delegate.execute({&cache, &x, &shared, &y}), Error::Ok);
  EXPECT_EQ(cache.data<float>()[0], 4.0f);
}

// Upstream's reader honours aliased_io whatever the magic says.
TEST_F(Backend, AliasesUnderTR01AreHonoured) {
  Delegate delegate;
  ASSERT_EQ(delegate.init(make_blob(kv_metadata(), fake_plan(kv_engine()), "TR01")), Error::Ok);
  OwnedTensor cache(ScalarType::Float, {4});
  OwnedTensor x(ScalarType::Float, {4});
  OwnedTensor cache_out(ScalarType::Float, {4});
  OwnedTensor y(ScalarType::Float, {4});
  cache.fill(0, 0);
  x.fill(1, 0);
  ASSERT_EQ(delegate.execute({&cache, &x, &cache_out, &y}), Error::Ok);
  EXPECT_EQ(cache.data<float>()[0], 1.0f);
}

TEST_F(Backend, KvCacheAliasMustBeTheEngines) {
  Delegate delegate;
  StderrCapture log;
  EXPECT_EQ(delegate.init(make_blob(kv_metadata(), fake_plan(kv_engine(false)))),
            Error::InvalidProgram);
  EXPECT_TRUE(contains(log.text(), "output 'cache_out' updates input 'cache' in place"))
      << log.text();
  EXPECT_TRUE(contains(log.text(), "does not alias that output")) << log.text();
}

TEST_F(Backend, UserAliasesAreCheckedByShape) {
  FakeEngineSpec spec = kv_engine(false);
  spec.tensors[2] = fixed_output("cache_out", {3});
  spec.op = Op::kNothing;
  Delegate delegate;
  ASSERT_EQ(delegate.init(make_blob(kv_metadata("user"), fake_plan(spec))), Error::Ok);
  OwnedTensor cache(ScalarType::Float, {4});
  OwnedTensor x(ScalarType::Float, {4});
  OwnedTensor cache_out(ScalarType::Float, {4});
  OwnedTensor y(ScalarType::Float, {4});
  StderrCapture log;
  EXPECT_EQ(delegate.execute({&cache, &x, &cache_out, &y}), Error::InvalidArgument);
  EXPECT_TRUE(contains(log.text(),
                       "aliased output 'cache_out' has shape [3] but the input "
                       "'cache' it is written into has [4]"))
      << log.text();
}

// ---- Providers and load options ------------------------------------------

TEST(BackendProviders, NoProviderSaysHowToGetOne) {
  Delegate delegate;
  StderrCapture log;
  EXPECT_EQ(delegate.init(add_one_blob()), Error::NotFound);
  EXPECT_TRUE(contains(log.text(), "no engine provider is registered")) << log.text();
  EXPECT_TRUE(contains(log.text(), "tte_load_engine_provider_library")) << log.text();
}

TEST(BackendProviders, TriesTheNextProviderAndCollectsRefusals) {
  FakeProvider picky("picky", TTE_MEMORY_HOST, TTE_PROVIDER_NATIVE);
  picky.state().reject = "plan is not a TensorRT 11 engine";
  FakeProvider fallback("fallback");
  Delegate delegate;
  ASSERT_EQ(delegate.init(add_one_blob()), Error::Ok);
  EXPECT_EQ(fallback.state().deserializes.load(), 1);

  fallback.state().reject = "not mine either";
  Delegate refused;
  StderrCapture log;
  EXPECT_EQ(refused.init(add_one_blob()), Error::DelegateInvalidCompatibility);
  EXPECT_TRUE(contains(log.text(), "'picky': plan is not a TensorRT 11 engine")) << log.text();
  EXPECT_TRUE(contains(log.text(), "'fallback': not mine either")) << log.text();
}

TEST(BackendProviders, ReportsAProviderFailure) {
  FakeProvider failing("failing");
  failing.state().fail_deserialize = "engine was built by TensorRT 10.3, this is 11.4";
  FakeProvider never("never");
  Delegate delegate;
  StderrCapture log;
  EXPECT_NE(delegate.init(add_one_blob()), Error::Ok);
  EXPECT_TRUE(contains(log.text(), "engine provider 'failing' could not load the engine"))
      << log.text();
  EXPECT_TRUE(contains(log.text(), "built by TensorRT 10.3, this is 11.4")) << log.text();
  EXPECT_EQ(never.state().deserializes.load(), 0) << "a provider that fails is not skipped";
}

TEST(BackendProviders, ReportsAnEnqueueFailure) {
  FakeProvider provider("enqueue-fails");
  FakeEngineSpec spec;
  spec.tensors = {static_input("x", {2}), output_like("y", 0)};
  spec.fail_enqueue = "illegal memory access in layer 3";
  Delegate delegate;
  ASSERT_EQ(delegate.init(make_blob(blob_metadata({"x"}, {"y"}), fake_plan(spec))), Error::Ok);
  OwnedTensor x(ScalarType::Float, {2});
  OwnedTensor y(ScalarType::Float, {2});
  StderrCapture log;
  EXPECT_EQ(delegate.execute({&x, &y}), Error::Internal);
  EXPECT_TRUE(contains(log.text(),
                       "engine provider 'enqueue-fails': enqueue failed: illegal "
                       "memory access in layer 3"))
      << log.text();
}

TEST(BackendProviders, TheProviderOptionPicksOne) {
  FakeProvider first("first", TTE_MEMORY_HOST, TTE_PROVIDER_NATIVE);
  FakeProvider second("second");
  et::BackendOptions<2> options;
  ASSERT_EQ(options.set_option("provider", "second"), Error::Ok);
  Delegate delegate;
  ASSERT_EQ(delegate.init(add_one_blob(), {}, options.view()), Error::Ok);
  EXPECT_EQ(first.state().deserializes.load(), 0);
  EXPECT_EQ(second.state().deserializes.load(), 1);

  et::BackendOptions<2> unknown;
  ASSERT_EQ(unknown.set_option("provider", "tensorrt-native-11"), Error::Ok);
  Delegate missing;
  StderrCapture log;
  EXPECT_EQ(missing.init(add_one_blob(), {}, unknown.view()), Error::NotFound);
  EXPECT_TRUE(contains(log.text(),
                       "engine provider 'tensorrt-native-11' (load option 'provider') "
                       "is not registered; registered: 'first', 'second'"))
      << log.text();
}

// A TensorRT plan runs only under the major that built it: the plan's header
// picks the native provider of that major, with or without the load option
// provider="tensorrt-native"; other providers are still asked.
std::vector<uint8_t> tensorrt_blob(int major, int minor, int patch) {
  return make_blob(blob_metadata({"x"}, {"y"}),
                   tensorrt_fake_plan(major, minor, patch,
                                      engine({static_input("x", {2, 4}), output_like("y", 0)})));
}

TEST(BackendProviders, ThePlanHeaderPicksTheNativeProviderOfItsMajor) {
  FakeProvider eleven("tensorrt-native-11", TTE_MEMORY_HOST, TTE_PROVIDER_NATIVE);
  FakeProvider ten("tensorrt-native-10", TTE_MEMORY_HOST, TTE_PROVIDER_NATIVE);
  ASSERT_EQ(eleven.status(), TTE_OK) << eleven.message();
  ASSERT_EQ(ten.status(), TTE_OK) << ten.message();
  {
    Delegate delegate;
    ASSERT_EQ(delegate.init(tensorrt_blob(10, 16, 1), {}, {}), Error::Ok);
    EXPECT_EQ(ten.state().deserializes.load(), 1);
    EXPECT_EQ(eleven.state().deserializes.load(), 0);
  }
  {
    Delegate delegate;
    ASSERT_EQ(delegate.init(tensorrt_blob(11, 1, 0), {}, {}), Error::Ok);
    EXPECT_EQ(eleven.state().deserializes.load(), 1);
    EXPECT_EQ(ten.state().deserializes.load(), 1);
  }
  et::BackendOptions<2> follow;
  ASSERT_EQ(follow.set_option("provider", "tensorrt-native"), Error::Ok);
  {
    Delegate delegate;
    ASSERT_EQ(delegate.init(tensorrt_blob(10, 3, 0), {}, follow.view()), Error::Ok);
    EXPECT_EQ(ten.state().deserializes.load(), 2);
    EXPECT_EQ(eleven.state().deserializes.load(), 1);
  }
  // Both majors serve delegates at once, in one process.
  Delegate a, b;
  ASSERT_EQ(a.init(tensorrt_blob(11, 4, 0), {}, {}), Error::Ok);
  ASSERT_EQ(b.init(tensorrt_blob(10, 16, 1), {}, {}), Error::Ok);
  EXPECT_EQ(eleven.state().deserializes.load(), 2);
  EXPECT_EQ(ten.state().deserializes.load(), 3);
}

TEST(BackendProviders, APlanWhoseMajorHasNoProviderSaysWhichItNeeds) {
  FakeProvider eleven("tensorrt-native-11", TTE_MEMORY_HOST, TTE_PROVIDER_NATIVE);
  ASSERT_EQ(eleven.status(), TTE_OK) << eleven.message();
  {
    Delegate delegate;
    StderrCapture log;
    EXPECT_NE(delegate.init(tensorrt_blob(10, 16, 1), {}, {}), Error::Ok);
    EXPECT_TRUE(contains(log.text(),
                         "the plan was built by TensorRT 10.16.1, and no native "
                         "provider for TensorRT 10 ('tensorrt-native-10') is "
                         "registered"))
        << log.text();
    EXPECT_TRUE(contains(log.text(), "'tensorrt-native-11' runs TensorRT 11 plans only"))
        << log.text();
    EXPECT_EQ(eleven.state().deserializes.load(), 0);
  }
  et::BackendOptions<2> follow;
  ASSERT_EQ(follow.set_option("provider", "tensorrt-native"), Error::Ok);
  Delegate delegate;
  StderrCapture log;
  EXPECT_EQ(delegate.init(tensorrt_blob(10, 16, 1), {}, follow.view()), Error::NotFound);
  EXPECT_TRUE(contains(log.text(),
                       "the plan was built by TensorRT 10.16.1, and load option "
                       "provider='tensorrt-native' takes the native provider of that "
                       "major, but no native provider for TensorRT 10"))
      << log.text();
  EXPECT_EQ(eleven.state().deserializes.load(), 0);
}

TEST(BackendProviders, DeviceProviderWithoutAGpuIsNeverAsked) {
  if (tte_cuda_device_count() > 0) GTEST_SKIP() << "this machine has a CUDA device";
  FakeProvider device("fake-device", TTE_MEMORY_DEVICE, TTE_PROVIDER_NATIVE);
  Delegate delegate;
  StderrCapture log;
  EXPECT_EQ(delegate.init(add_one_blob()), Error::NotSupported);
  // With why no device is usable (tte_cuda_unavailable_reason).
  EXPECT_TRUE(contains(log.text(), std::string("no CUDA device (") + tte_cuda_unavailable_reason() +
                                       "): TensorRT engines need an NVIDIA GPU"))
      << log.text();
  EXPECT_EQ(device.state().deserializes.load(), 0);
}

TEST(BackendProviders, HostProviderRunsWhereDeviceProviderCannot) {
  if (tte_cuda_device_count() > 0) GTEST_SKIP() << "this machine has a CUDA device";
  FakeProvider device("fake-device", TTE_MEMORY_DEVICE, TTE_PROVIDER_NATIVE);
  FakeProvider host("fake-host");
  Delegate delegate;
  ASSERT_EQ(delegate.init(add_one_blob()), Error::Ok);
  EXPECT_EQ(device.state().deserializes.load(), 0);
  EXPECT_EQ(host.state().deserializes.load(), 1);
}

TEST(BackendProviders, DeviceIdPastTheDeviceCount) {
  if (tte_cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  FakeProvider device("fake-device", TTE_MEMORY_DEVICE);
  Delegate delegate;
  StderrCapture log;
  EXPECT_EQ(delegate.init(add_one_blob(/*device_id=*/64)), Error::DelegateInvalidCompatibility);
  EXPECT_TRUE(contains(log.text(), "the engine is for cuda:64 but this process sees"))
      << log.text();
  EXPECT_EQ(device.state().deserializes.load(), 0);
}

TEST(BackendOptions, WeightStreamingBudget) {
  FakeProvider provider("budget");
  auto last = [&] {
    std::lock_guard<std::mutex> lock(provider.state().mutex);
    return provider.state().last_options;
  };
  {
    Delegate delegate;
    ASSERT_EQ(delegate.init(add_one_blob()), Error::Ok);
    EXPECT_EQ(last().has_weight_streaming_budget, 0);
    EXPECT_EQ(last().device_id, 0);
  }
  CompileSpecs specs;
  specs.entries = {{"target_device", "cuda:0"}, {"weight_streaming_budget", "1048576"}};
  {
    Delegate delegate;
    ASSERT_EQ(delegate.init(add_one_blob(), specs), Error::Ok);
    EXPECT_EQ(last().has_weight_streaming_budget, 1);
    EXPECT_EQ(last().weight_streaming_budget, 1048576);
  }
  {
    et::BackendOptions<2> options;
    ASSERT_EQ(options.set_option("weight_streaming_budget", 4096), Error::Ok);
    Delegate delegate;
    ASSERT_EQ(delegate.init(add_one_blob(), specs, options.view()), Error::Ok);
    EXPECT_EQ(last().weight_streaming_budget, 4096) << "the load option overrides the compile spec";
  }
  {
    et::BackendOptions<2> options;
    ASSERT_EQ(options.set_option("weight_streaming_budget", "8589934592"), Error::Ok);
    Delegate delegate;
    ASSERT_EQ(delegate.init(add_one_blob(), {}, options.view()), Error::Ok);
    EXPECT_EQ(last().weight_streaming_budget, 8589934592LL) << "strings carry more than int";
  }
  {
    et::BackendOptions<2> options;
    ASSERT_EQ(options.set_option("weight_streaming_budget", "12 MB"), Error::Ok);
    Delegate delegate;
    StderrCapture log;
    EXPECT_EQ(delegate.init(add_one_blob(), {}, options.view()), Error::InvalidArgument);
    EXPECT_TRUE(contains(log.text(), "load option 'weight_streaming_budget'")) << log.text();
  }
  {
    CompileSpecs bad;
    bad.entries = {{"weight_streaming_budget", "-1"}};
    Delegate delegate;
    StderrCapture log;
    EXPECT_EQ(delegate.init(add_one_blob(), bad), Error::InvalidProgram);
    EXPECT_TRUE(contains(log.text(), "compile spec 'weight_streaming_budget'")) << log.text();
  }
}

// Upstream refuses them: the two values cannot both be meant.
TEST(BackendOptions, TwoBudgetCompileSpecsAreRefused) {
  FakeProvider provider("budgets");
  CompileSpecs specs;
  specs.entries = {{"weight_streaming_budget", "1024"}, {"weight_streaming_budget", "2048"}};
  Delegate delegate;
  StderrCapture log;
  EXPECT_EQ(delegate.init(add_one_blob(), specs), Error::InvalidProgram);
  EXPECT_TRUE(contains(log.text(), "two 'weight_streaming_budget' compile specs")) << log.text();
  EXPECT_EQ(provider.state().deserializes.load(), 0);
}

// Upstream's rule: an empty string option sets nothing.
TEST(BackendOptions, AnEmptyBudgetOptionLeavesTheCompileSpec) {
  FakeProvider provider("empty-budget");
  CompileSpecs specs;
  specs.entries = {{"weight_streaming_budget", "1048576"}};
  et::BackendOptions<2> options;
  ASSERT_EQ(options.set_option("weight_streaming_budget", ""), Error::Ok);
  Delegate delegate;
  ASSERT_EQ(delegate.init(add_one_blob(), specs, options.view()), Error::Ok);
  std::lock_guard<std::mutex> lock(provider.state().mutex);
  EXPECT_EQ(provider.state().last_options.has_weight_streaming_budget, 1);
  EXPECT_EQ(provider.state().last_options.weight_streaming_budget, 1048576);
}

TEST(BackendOptions, EngineOptionsReachTheProvider) {
  FakeProvider provider("engine-options");
  {
    Delegate delegate;
    ASSERT_EQ(delegate.init(add_one_blob()), Error::Ok);
    std::lock_guard<std::mutex> lock(provider.state().mutex);
    const TteEngineLoadOptions& last = provider.state().last_options;
    EXPECT_EQ(last.refuse_engine_host_code, 0) << "host code is allowed unless refused";
    EXPECT_EQ(last.has_dla_core, 0);
    EXPECT_EQ(last.num_plugin_libraries, 0);
    EXPECT_EQ(provider.state().last_runtime_cache_path, "");
  }
  et::BackendOptions<4> options;
  ASSERT_EQ(options.set_option("engine_host_code_allowed", false), Error::Ok);
  ASSERT_EQ(options.set_option("dla_core", 1), Error::Ok);
  ASSERT_EQ(options.set_option("plugin_libraries", "/opt/a/libone.so:/opt/b/libtwo.so"), Error::Ok);
  ASSERT_EQ(options.set_option("runtime_cache_path", "/var/cache/model.rtxcache"), Error::Ok);
  Delegate delegate;
  ASSERT_EQ(delegate.init(add_one_blob(), {}, options.view()), Error::Ok);
  std::lock_guard<std::mutex> lock(provider.state().mutex);
  const TteEngineLoadOptions& last = provider.state().last_options;
  EXPECT_EQ(last.refuse_engine_host_code, 1);
  EXPECT_EQ(last.has_dla_core, 1);
  EXPECT_EQ(last.dla_core, 1);
  EXPECT_EQ(provider.state().last_plugin_libraries,
            (std::vector<std::string>{"/opt/a/libone.so", "/opt/b/libtwo.so"}));
  EXPECT_EQ(provider.state().last_runtime_cache_path, "/var/cache/model.rtxcache");
}

TEST(BackendOptions, WrongTypesAreRefused) {
  FakeProvider provider("types");
  et::BackendOptions<2> options;
  ASSERT_EQ(options.set_option("provider", 3), Error::Ok);
  Delegate delegate;
  StderrCapture log;
  EXPECT_EQ(delegate.init(add_one_blob(), {}, options.view()), Error::InvalidArgument);
  EXPECT_TRUE(contains(log.text(), "load option 'provider' must be a string")) << log.text();
}

// ---- Concurrency -----------------------------------------------------------

TEST(BackendConcurrency, OneHandleIsSerialized) {
  FakeProvider provider("serial");
  FakeEngineSpec spec;
  spec.tensors = {static_input("x", {16}), output_like("y", 0)};
  spec.enqueue_hold_ms = 2;
  Delegate delegate;
  ASSERT_EQ(delegate.init(make_blob(blob_metadata({"x"}, {"y"}), fake_plan(spec))), Error::Ok);
  constexpr int kThreads = 4;
  constexpr int kCalls = 10;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      OwnedTensor x(ScalarType::Float, {16});
      OwnedTensor y(ScalarType::Float, {16});
      for (int call = 0; call < kCalls; ++call) {
        x.fill(static_cast<float>(t * 100 + call), 0);
        if (delegate.execute({&x, &y}) != Error::Ok ||
            y.data<float>()[15] != static_cast<float>(t * 100 + call + 1)) {
          failures++;
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(provider.state().enqueues.load(), kThreads * kCalls);
  EXPECT_EQ(provider.state().max_in_flight_one_engine.load(), 1);
}

TEST(BackendConcurrency, DifferentHandlesRunInParallel) {
  FakeProvider provider("parallel");
  FakeEngineSpec spec;
  spec.tensors = {static_input("x", {4}), output_like("y", 0)};
  spec.enqueue_hold_ms = 5000;
  spec.wait_for_peer = true;  // returns as soon as the other handle is inside enqueue too
  const auto blob = make_blob(blob_metadata({"x"}, {"y"}), fake_plan(spec));
  Delegate first;
  Delegate second;
  ASSERT_EQ(first.init(blob), Error::Ok);
  ASSERT_EQ(second.init(blob), Error::Ok);
  auto run = [](Delegate* delegate) {
    OwnedTensor x(ScalarType::Float, {4});
    OwnedTensor y(ScalarType::Float, {4});
    EXPECT_EQ(delegate->execute({&x, &y}), Error::Ok);
  };
  const auto start = std::chrono::steady_clock::now();
  std::thread a(run, &first);
  std::thread b(run, &second);
  a.join();
  b.join();
  EXPECT_EQ(provider.state().max_active.load(), 2) << "the two handles never overlapped";
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(4));
}

// ---- The shared host test provider library --------------------------------

TEST(HostTestProvider, RunsATestEnginePlan) {
  const std::string path = host_test_provider();
  if (access(path.c_str(), F_OK) != 0) GTEST_SKIP() << "host test provider not built at " << path;
  TteError error{};
  ASSERT_EQ(tte_load_engine_provider_library(path.c_str(), TTE_PROVIDER_OTHER, &error), TTE_OK)
      << error.message;
  const std::string plan =
      std::string("TTE-TEST-ENGINE\n") +
      R"({"op":"add_one","tensors":[{"name":"x","is_input":true,"dtype":"float32",)"
      R"("profiles":[{"min":[1,4],"opt":[2,4],"max":[8,4]}]},)"
      R"({"name":"y","is_input":false,"dtype":"float32","shape_of":"x"}]})";
  {
    Delegate delegate;
    ASSERT_EQ(delegate.init(make_blob(blob_metadata({"x"}, {"y"}), plan)), Error::Ok);
    OwnedTensor x(ScalarType::Float, {3, 4});
    OwnedTensor y(ScalarType::Float, {8, 4});
    x.fill(0.5f);
    ASSERT_EQ(delegate.execute({&x, &y}), Error::Ok);
    EXPECT_EQ(y.sizes(), (std::vector<int32_t>{3, 4}));
    EXPECT_EQ(y.data<float>()[11], 12.5f);
  }
  EXPECT_EQ(tte_unregister_engine_provider("test-host", nullptr), TTE_OK);
}

}  // namespace
}  // namespace tte_test
