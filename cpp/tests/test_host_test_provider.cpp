// The host test provider, driven only through the provider ABI struct, as the
// backend drives it: every op, profiles, shape_of, aliases, fail hooks, the
// counters, and NOT_ACCEPTED for plans that are not test plans.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "testing/test_provider_api.h"
#include "text_match.h"
#include "torch_tensorrt_executorch/engine_provider.h"

extern "C" const TteEngineProvider* tte_engine_provider_entry(uint32_t abi_version);

namespace {

const TteEngineProvider& provider() {
  return *tte_engine_provider_entry(TTE_ENGINE_PROVIDER_ABI_VERSION);
}

std::string test_plan(const std::string& json) { return "TTE-TEST-ENGINE\n" + json; }

// An engine destroyed at scope exit.
class Engine {
 public:
  explicit Engine(const std::string& json, const TteEngineLoadOptions* options = nullptr) {
    std::string plan = test_plan(json);
    TteError error{};
    status_ = provider().deserialize(provider().user_data, plan.data(), plan.size(), options,
                                     &engine_, &error);
    message_ = error.message;
  }
  ~Engine() {
    if (engine_ != nullptr) provider().destroy(engine_);
  }
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  TteEngine* get() const { return engine_; }
  TteStatus status() const { return status_; }
  const std::string& message() const { return message_; }

 private:
  TteEngine* engine_ = nullptr;
  TteStatus status_ = TTE_OK;
  std::string message_;
};

#define ASSERT_LOADED(engine) ASSERT_EQ((engine).status(), TTE_OK) << (engine).message()

// Status and message of one call.
struct Result {
  TteStatus status;
  std::string message;
};

Result set_shape(TteEngine* e, int32_t index, std::vector<int64_t> dims) {
  TteError error{};
  TteStatus s =
      provider().set_input_shape(e, index, dims.data(), static_cast<int32_t>(dims.size()), &error);
  return {s, error.message};
}

Result set_address(TteEngine* e, int32_t index, void* address) {
  TteError error{};
  TteStatus s = provider().set_tensor_address(e, index, address, &error);
  return {s, error.message};
}

Result enqueue(TteEngine* e, void* stream = nullptr) {
  TteError error{};
  TteStatus s = provider().enqueue(e, stream, &error);
  return {s, error.message};
}

Result select_profile(TteEngine* e, int32_t profile) {
  TteError error{};
  TteStatus s = provider().select_profile(e, profile, nullptr, &error);
  return {s, error.message};
}

std::vector<int64_t> output_shape(TteEngine* e, int32_t index) {
  int64_t dims[TTE_MAX_RANK];
  int32_t rank = -1;
  TteError error{};
  TteStatus s = provider().get_output_shape(e, index, dims, TTE_MAX_RANK, &rank, &error);
  EXPECT_EQ(s, TTE_OK) << error.message;
  return s == TTE_OK ? std::vector<int64_t>(dims, dims + rank) : std::vector<int64_t>{};
}

using tte_test::contains;

TteTestProviderStats stats() {
  TteTestProviderStats s{};
  s.struct_size = sizeof(s);
  tte_test_provider_stats(&s);
  return s;
}

std::string input(const std::string& name, const std::string& dtype, const std::string& dims) {
  return R"({"name":")" + name + R"(","is_input":true,"dtype":")" + dtype +
         R"(","profiles":[{"min":)" + dims + R"(,"opt":)" + dims + R"(,"max":)" + dims + "}]}";
}

std::string output(const std::string& name, const std::string& dtype, const std::string& shape_of) {
  return R"({"name":")" + name + R"(","is_input":false,"dtype":")" + dtype + R"(","shape_of":")" +
         shape_of + "\"}";
}

std::string add_one_plan(const std::string& dtype, const std::string& dims = "[4]") {
  return R"({"op":"add_one","tensors":[)" + input("x", dtype, dims) + "," +
         output("y", dtype, "x") + "]}";
}

// Runs add_one over `x` (static shape [n]) and returns y.
template <typename T>
std::vector<T> run_add_one(const std::string& dtype, std::vector<T> x) {
  std::string n = std::to_string(x.size());
  Engine engine(add_one_plan(dtype, "[" + n + "]"));
  EXPECT_EQ(engine.status(), TTE_OK) << engine.message();
  if (engine.status() != TTE_OK) return {};
  std::vector<T> y(x.size());
  EXPECT_EQ(set_shape(engine.get(), 0, {static_cast<int64_t>(x.size())}).status, TTE_OK);
  EXPECT_EQ(set_address(engine.get(), 0, x.data()).status, TTE_OK);
  EXPECT_EQ(set_address(engine.get(), 1, y.data()).status, TTE_OK);
  Result r = enqueue(engine.get());
  EXPECT_EQ(r.status, TTE_OK) << r.message;
  return y;
}

TEST(HostTestProvider, EntryServesAbiVersionOne) {
  EXPECT_EQ(tte_engine_provider_entry(0), nullptr);
  EXPECT_EQ(tte_engine_provider_entry(TTE_ENGINE_PROVIDER_ABI_VERSION + 1), nullptr);
  const TteEngineProvider* p = tte_engine_provider_entry(TTE_ENGINE_PROVIDER_ABI_VERSION);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->abi_version, TTE_ENGINE_PROVIDER_ABI_VERSION);
  EXPECT_EQ(p->struct_size, sizeof(TteEngineProvider));
  EXPECT_STREQ(p->name, "test-host");
  EXPECT_EQ(p->memory_kind, TTE_MEMORY_HOST);
  EXPECT_EQ(p->enqueue_capturable, 0);
  EXPECT_EQ(p->release, nullptr);
  for (const void* fn :
       {reinterpret_cast<const void*>(p->deserialize),
        reinterpret_cast<const void*>(p->num_io_tensors),
        reinterpret_cast<const void*>(p->describe_io_tensor),
        reinterpret_cast<const void*>(p->num_profiles),
        reinterpret_cast<const void*>(p->profile_shape),
        reinterpret_cast<const void*>(p->select_profile),
        reinterpret_cast<const void*>(p->set_input_shape),
        reinterpret_cast<const void*>(p->get_output_shape),
        reinterpret_cast<const void*>(p->set_tensor_address),
        reinterpret_cast<const void*>(p->enqueue), reinterpret_cast<const void*>(p->destroy)}) {
    EXPECT_NE(fn, nullptr);
  }
}

TEST(HostTestProvider, LibraryExportsItsEntryPoints) {
  void* lib = dlopen(TTE_TEST_HOST_PROVIDER, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  auto entry =
      reinterpret_cast<TteEngineProviderEntryFn>(dlsym(lib, TTE_ENGINE_PROVIDER_ENTRY_SYMBOL));
  ASSERT_NE(entry, nullptr);
  EXPECT_STREQ(entry(TTE_ENGINE_PROVIDER_ABI_VERSION)->name, "test-host");
  EXPECT_NE(dlsym(lib, "tte_test_provider_stats"), nullptr);
  EXPECT_NE(dlsym(lib, "tte_test_provider_reset_stats"), nullptr);
  EXPECT_EQ(dlsym(lib, "tte_test_cuda_provider_uncapturable"), nullptr);
  dlclose(lib);
}

TEST(HostTestProvider, OtherPlansAreNotAccepted) {
  for (std::string plan : {std::string(), std::string("ftrt\0\0\0\0 a TensorRT plan", 25),
                           std::string("TTE-TEST-ENGINE")}) {
    TteEngine* engine = reinterpret_cast<TteEngine*>(0x1);
    TteError error{};
    EXPECT_EQ(provider().deserialize(nullptr, plan.data(), plan.size(), nullptr, &engine, &error),
              TTE_ERROR_NOT_ACCEPTED);
    EXPECT_EQ(error.code, TTE_ERROR_NOT_ACCEPTED);
    EXPECT_EQ(engine, nullptr);
    EXPECT_TRUE(contains(error.message, "test-host accepts only test-engine plans"))
        << error.message;
  }
}

TEST(HostTestProvider, InvalidTestPlanIsAnInvalidProgram) {
  Engine engine(R"({"op":"add_one","tensors":[)" + input("x", "float32", "[4]") + "]}");
  EXPECT_EQ(engine.status(), TTE_ERROR_INVALID_PROGRAM);
  EXPECT_EQ(engine.get(), nullptr);
  EXPECT_EQ(engine.message(),
            "invalid test-engine plan: op: op 'add_one' takes 1 input and 1 output, the plan has 1 "
            "input and 0 outputs");
}

TEST(HostTestProvider, DescribesTensorsInEngineOrder) {
  Engine engine(R"({"op":"kv_update","tensors":[)" + output("cache_out", "float16", "cache") + "," +
                input("cache", "float16", "[2,3]") + "," + input("x", "float16", "[2,3]") + "," +
                output("y", "float16", "cache") + R"(],"aliases":{"cache_out":"cache"}})");
  ASSERT_LOADED(engine);
  int32_t count = 0;
  ASSERT_EQ(provider().num_io_tensors(engine.get(), &count, nullptr), TTE_OK);
  ASSERT_EQ(count, 4);
  const char* names[] = {"cache_out", "cache", "x", "y"};
  const int32_t is_input[] = {0, 1, 1, 0};
  const int32_t aliased[] = {1, -1, -1, -1};
  for (int32_t i = 0; i < count; ++i) {
    TteIoTensorDesc desc{};
    ASSERT_EQ(provider().describe_io_tensor(engine.get(), i, &desc, nullptr), TTE_OK);
    EXPECT_STREQ(desc.name, names[i]);
    EXPECT_EQ(desc.is_input, is_input[i]);
    EXPECT_EQ(desc.scalar_type, 5);  // Half
    EXPECT_EQ(desc.rank, 2);
    EXPECT_EQ(desc.aliased_input, aliased[i]);
    EXPECT_EQ(desc.is_shape_tensor, 0);
  }
  TteIoTensorDesc desc{};
  TteError error{};
  EXPECT_EQ(provider().describe_io_tensor(engine.get(), 4, &desc, &error),
            TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(error.message,
               "describe_io_tensor: I/O index 4 is out of range; the engine has 4 I/O tensors");
  EXPECT_EQ(provider().describe_io_tensor(engine.get(), -1, &desc, nullptr),
            TTE_ERROR_INVALID_ARGUMENT);
}

constexpr const char* kTwoProfiles = R"({"op":"add_one","tensors":[
  {"name":"x","is_input":true,"dtype":"float32","profiles":[{"min":[1,4],"opt":[2,4],"max":[8,4]},
                                                           {"min":[9,4],"opt":[16,4],"max":[32,4]}]},
  {"name":"y","is_input":false,"dtype":"float32","shape_of":"x"}]})";

TEST(HostTestProvider, ReportsProfiles) {
  Engine engine(kTwoProfiles);
  ASSERT_LOADED(engine);
  int32_t profiles = 0;
  ASSERT_EQ(provider().num_profiles(engine.get(), &profiles, nullptr), TTE_OK);
  EXPECT_EQ(profiles, 2);
  int64_t min[2], opt[2], max[2];
  ASSERT_EQ(provider().profile_shape(engine.get(), 1, 0, min, opt, max, nullptr), TTE_OK);
  EXPECT_EQ(std::vector<int64_t>(min, min + 2), (std::vector<int64_t>{9, 4}));
  EXPECT_EQ(std::vector<int64_t>(opt, opt + 2), (std::vector<int64_t>{16, 4}));
  EXPECT_EQ(std::vector<int64_t>(max, max + 2), (std::vector<int64_t>{32, 4}));
  TteError error{};
  EXPECT_EQ(provider().profile_shape(engine.get(), 2, 0, min, opt, max, &error),
            TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(error.message, "profile_shape: profile 2 is out of range; the engine has 2");
  EXPECT_EQ(provider().profile_shape(engine.get(), 0, 1, min, opt, max, &error),
            TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(error.message, "output 'y' (index 1) is an output")) << error.message;
  EXPECT_EQ(select_profile(engine.get(), 2).status, TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(select_profile(engine.get(), -1).status, TTE_ERROR_INVALID_ARGUMENT);
}

TEST(HostTestProvider, InputShapesAreCheckedAgainstTheSelectedProfile) {
  Engine engine(kTwoProfiles);
  ASSERT_LOADED(engine);
  EXPECT_EQ(set_shape(engine.get(), 0, {8, 4}).status, TTE_OK);  // profile 0 is selected first
  Result r = set_shape(engine.get(), 0, {9, 4});
  EXPECT_EQ(r.status, TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(r.message,
            "set_input_shape: input 'x' (index 0) shape [9, 4] is outside profile 0: dim 0 must be "
            "in [1, 8]");
  ASSERT_EQ(select_profile(engine.get(), 1).status, TTE_OK);
  EXPECT_EQ(set_shape(engine.get(), 0, {9, 4}).status, TTE_OK);
  r = set_shape(engine.get(), 0, {2, 4});
  EXPECT_EQ(r.status, TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(r.message, "outside profile 1: dim 0 must be in [9, 32]")) << r.message;
  r = set_shape(engine.get(), 0, {16, 5});
  EXPECT_TRUE(contains(r.message, "dim 1 must be in [4, 4]")) << r.message;
  r = set_shape(engine.get(), 0, {16});
  EXPECT_EQ(r.status, TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(r.message, "set_input_shape: input 'x' (index 0) has rank 2, got 1 dims");
  r = set_shape(engine.get(), 1, {16, 4});
  EXPECT_EQ(r.status, TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(r.message, "output 'y' (index 1) is an output")) << r.message;
  EXPECT_EQ(set_shape(engine.get(), 2, {16, 4}).status, TTE_ERROR_INVALID_ARGUMENT);
}

TEST(HostTestProvider, OutputShapesNeedEveryInputShape) {
  Engine engine(R"({"op":"add","tensors":[)" + input("a", "int32", "[3]") + "," +
                input("b", "int32", "[3]") + "," +
                R"({"name":"y","is_input":false,"dtype":"int32","shape_of":"b"}]})");
  ASSERT_LOADED(engine);
  int64_t dims[TTE_MAX_RANK];
  int32_t rank = -1;
  TteError error{};
  EXPECT_EQ(provider().get_output_shape(engine.get(), 2, dims, TTE_MAX_RANK, &rank, &error),
            TTE_ERROR_INVALID_STATE);
  EXPECT_STREQ(error.message,
               "get_output_shape: set every input shape first (after select_profile too); not set: "
               "'a', 'b'");
  ASSERT_EQ(set_shape(engine.get(), 0, {3}).status, TTE_OK);
  EXPECT_EQ(provider().get_output_shape(engine.get(), 2, dims, TTE_MAX_RANK, &rank, &error),
            TTE_ERROR_INVALID_STATE);
  EXPECT_TRUE(contains(error.message, "not set: 'b'")) << error.message;
  ASSERT_EQ(set_shape(engine.get(), 1, {3}).status, TTE_OK);
  EXPECT_EQ(output_shape(engine.get(), 2), (std::vector<int64_t>{3}));

  EXPECT_EQ(provider().get_output_shape(engine.get(), 2, dims, 0, &rank, &error),
            TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(rank, 1);  // the caller learns the rank it needs
  EXPECT_EQ(provider().get_output_shape(engine.get(), 0, dims, TTE_MAX_RANK, &rank, &error),
            TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(error.message, "input 'a' (index 0) is an input")) << error.message;

  // Selecting a profile forgets the shapes.
  ASSERT_EQ(select_profile(engine.get(), 0).status, TTE_OK);
  EXPECT_EQ(provider().get_output_shape(engine.get(), 2, dims, TTE_MAX_RANK, &rank, &error),
            TTE_ERROR_INVALID_STATE);
}

TEST(HostTestProvider, OutputsFollowShapeOfOrAFixedShape) {
  Engine engine(R"({"op":"null","tensors":[
    {"name":"x","is_input":true,"dtype":"float32","profiles":[{"min":[1,2],"opt":[3,2],"max":[5,2]}]},
    {"name":"like_x","is_input":false,"dtype":"int8","shape_of":"x"},
    {"name":"fixed","is_input":false,"dtype":"int8","shape":[7,1,3]},
    {"name":"scalar","is_input":false,"dtype":"int8","shape":[]}]})");
  ASSERT_LOADED(engine);
  ASSERT_EQ(set_shape(engine.get(), 0, {4, 2}).status, TTE_OK);
  EXPECT_EQ(output_shape(engine.get(), 1), (std::vector<int64_t>{4, 2}));
  EXPECT_EQ(output_shape(engine.get(), 2), (std::vector<int64_t>{7, 1, 3}));
  EXPECT_EQ(output_shape(engine.get(), 3), (std::vector<int64_t>{}));
  ASSERT_EQ(set_shape(engine.get(), 0, {1, 2}).status, TTE_OK);
  EXPECT_EQ(output_shape(engine.get(), 1), (std::vector<int64_t>{1, 2}));
}

TEST(HostTestProvider, AddOneInEveryArithmeticDtype) {
  EXPECT_EQ(run_add_one<float>("float32", {0.5f, -1.0f, 1e7f, -3.25f}),
            (std::vector<float>{1.5f, 0.0f, 1e7f + 1, -2.25f}));
  EXPECT_EQ(run_add_one<double>("float64", {0.25, -7.0}), (std::vector<double>{1.25, -6.0}));
  EXPECT_EQ(run_add_one<int64_t>("int64", {-1, 41, INT64_MAX}),
            (std::vector<int64_t>{0, 42, INT64_MIN}));
  EXPECT_EQ(run_add_one<int32_t>("int32", {-5, INT32_MAX}), (std::vector<int32_t>{-4, INT32_MIN}));
  EXPECT_EQ(run_add_one<int16_t>("int16", {7, 32767}), (std::vector<int16_t>{8, -32768}));
  EXPECT_EQ(run_add_one<int8_t>("int8", {0, 127, -128}), (std::vector<int8_t>{1, -128, -127}));
  EXPECT_EQ(run_add_one<uint8_t>("uint8", {0, 254, 255}), (std::vector<uint8_t>{1, 255, 0}));
  // float16 bits: 1.0, 0.5, -1.0, -2.0, 65504 (stays: 65505 rounds to even), inf, smallest
  // subnormal.
  EXPECT_EQ(
      run_add_one<uint16_t>("float16", {0x3C00, 0x3800, 0xBC00, 0xC000, 0x7BFF, 0x7C00, 0x0001}),
      (std::vector<uint16_t>{0x4000, 0x3E00, 0x0000, 0xBC00, 0x7BFF, 0x7C00, 0x3C00}));
  // bfloat16 bits: 1.0, 65536 (stays), 1.0078125 (2.0078125 is a tie, rounds to even 2.0), -1.0.
  EXPECT_EQ(run_add_one<uint16_t>("bfloat16", {0x3F80, 0x4780, 0x3F81, 0xBF80}),
            (std::vector<uint16_t>{0x4000, 0x4780, 0x4000, 0x0000}));
  std::vector<uint16_t> nan = run_add_one<uint16_t>("float16", {0x7E00});
  ASSERT_EQ(nan.size(), 1u);
  EXPECT_EQ(nan[0] & 0x7C00, 0x7C00);
  EXPECT_NE(nan[0] & 0x03FF, 0);
}

// Runs add over a and b (static shape [n]) and returns y.
template <typename T>
std::vector<T> run_add(const std::string& dtype, std::vector<T> a, std::vector<T> b) {
  std::string n = "[" + std::to_string(a.size()) + "]";
  Engine engine(R"({"op":"add","tensors":[)" + input("a", dtype, n) + "," + input("b", dtype, n) +
                "," + output("y", dtype, "a") + "]}");
  EXPECT_EQ(engine.status(), TTE_OK) << engine.message();
  std::vector<T> y(a.size());
  set_shape(engine.get(), 0, {static_cast<int64_t>(a.size())});
  set_shape(engine.get(), 1, {static_cast<int64_t>(a.size())});
  set_address(engine.get(), 0, a.data());
  set_address(engine.get(), 1, b.data());
  set_address(engine.get(), 2, y.data());
  Result r = enqueue(engine.get());
  EXPECT_EQ(r.status, TTE_OK) << r.message;
  return y;
}

TEST(HostTestProvider, AddRoundsHalfTypesToNearestEven) {
  EXPECT_EQ(run_add<int32_t>("int32", {1, 2, 3}, {10, 20, -30}),
            (std::vector<int32_t>{11, 22, -27}));
  // float16: subnormals add exactly, two halves of the smallest normal make it,
  // 2048 + 1 and 2048 + 3 are ties that round to even (2048, 2052), 65504 + 32
  // overflows to inf.
  EXPECT_EQ(run_add<uint16_t>("float16", {0x0001, 0x0200, 0x6800, 0x6800, 0x7BFF},
                              {0x0001, 0x0200, 0x3C00, 0x4200, 0x5000}),
            (std::vector<uint16_t>{0x0002, 0x0400, 0x6800, 0x6802, 0x7C00}));
  // bfloat16: 1 + 2^-8 is a tie that rounds to even (1.0); 1 + 3 * 2^-9 rounds up.
  EXPECT_EQ(run_add<uint16_t>("bfloat16", {0x3F80, 0x3F80}, {0x3B80, 0x3BC0}),
            (std::vector<uint16_t>{0x3F80, 0x3F81}));
}

TEST(HostTestProvider, AddNeedsInputsOfOneShape) {
  Engine engine(R"({"op":"add","tensors":[
    {"name":"a","is_input":true,"dtype":"float32","profiles":[{"min":[1],"opt":[2],"max":[4]}]},
    {"name":"b","is_input":true,"dtype":"float32","profiles":[{"min":[1],"opt":[2],"max":[4]}]},
    {"name":"y","is_input":false,"dtype":"float32","shape_of":"a"}]})");
  ASSERT_LOADED(engine);
  float a[4] = {}, b[4] = {}, y[4] = {};
  set_shape(engine.get(), 0, {2});
  set_shape(engine.get(), 1, {3});
  set_address(engine.get(), 0, a);
  set_address(engine.get(), 1, b);
  set_address(engine.get(), 2, y);
  Result r = enqueue(engine.get());
  EXPECT_EQ(r.status, TTE_ERROR_RUNTIME);
  EXPECT_EQ(r.message, "enqueue: op 'add' needs inputs 'a' and 'b' of one shape, got [2] and [3]");
}

TEST(HostTestProvider, IdentityCopiesPairsInOrderOfAppearance) {
  Engine engine(R"({"op":"identity","tensors":[)" + output("mask_out", "bool", "mask") + "," +
                input("mask", "bool", "[3]") + "," + input("ids", "int64", "[]") + "," +
                R"({"name":"ids_out","is_input":false,"dtype":"int64","shape":[]}]})");
  ASSERT_LOADED(engine);
  bool mask[3] = {true, false, true};
  bool mask_out[3] = {false, true, false};
  int64_t ids = 1234567890123;
  int64_t ids_out = 0;
  set_shape(engine.get(), 1, {3});
  set_shape(engine.get(), 2, {});
  set_address(engine.get(), 0, mask_out);
  set_address(engine.get(), 1, mask);
  set_address(engine.get(), 2, &ids);
  set_address(engine.get(), 3, &ids_out);
  Result r = enqueue(engine.get());
  ASSERT_EQ(r.status, TTE_OK) << r.message;
  EXPECT_EQ(std::memcmp(mask, mask_out, sizeof(mask)), 0);
  EXPECT_EQ(ids_out, ids);
}

std::string kv_plan(bool with_y) {
  return R"({"op":"kv_update","tensors":[)" + input("cache", "float32", "[4]") + "," +
         input("x", "float32", "[4]") + "," + output("cache_out", "float32", "cache") +
         (with_y ? "," + output("y", "float32", "cache") : "") +
         R"(],"aliases":{"cache_out":"cache"}})";
}

TEST(HostTestProvider, KvUpdateWritesTheCacheInPlace) {
  Engine engine(kv_plan(true));
  ASSERT_LOADED(engine);
  float cache[4] = {1, 2, 3, 4};
  float x[4] = {10, 20, 30, 40};
  float y[4] = {};
  set_shape(engine.get(), 0, {4});
  set_shape(engine.get(), 1, {4});
  set_address(engine.get(), 0, cache);
  set_address(engine.get(), 1, x);
  set_address(engine.get(), 2, cache);  // the aliased output is bound to its input
  set_address(engine.get(), 3, y);
  for (int call = 0; call < 2; ++call) {
    Result r = enqueue(engine.get());
    ASSERT_EQ(r.status, TTE_OK) << r.message;
  }
  EXPECT_EQ(std::vector<float>(cache, cache + 4), (std::vector<float>{21, 42, 63, 84}));
  EXPECT_EQ(std::vector<float>(y, y + 4), (std::vector<float>{21, 42, 63, 84}));

  float elsewhere[4] = {};
  set_address(engine.get(), 2, elsewhere);
  Result r = enqueue(engine.get());
  EXPECT_EQ(r.status, TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(r.message,
            "enqueue: output 'cache_out' (index 2) is written in place into input 'cache', so its "
            "address must be that "
            "input's (or left unset)");
}

TEST(HostTestProvider, KvUpdateAliasedAddressMayStayUnset) {
  Engine engine(kv_plan(false));
  ASSERT_LOADED(engine);
  int32_t count = 0;
  provider().num_io_tensors(engine.get(), &count, nullptr);
  EXPECT_EQ(count, 3);
  float cache[4] = {1, 1, 1, 1};
  float x[4] = {1, 2, 3, 4};
  set_shape(engine.get(), 0, {4});
  set_shape(engine.get(), 1, {4});
  set_address(engine.get(), 0, cache);
  set_address(engine.get(), 1, x);
  Result r = enqueue(engine.get());
  ASSERT_EQ(r.status, TTE_OK) << r.message;
  EXPECT_EQ(std::vector<float>(cache, cache + 4), (std::vector<float>{2, 3, 4, 5}));
}

TEST(HostTestProvider, NullChangesNothing) {
  Engine engine(R"({"op":"null","tensors":[)" + input("x", "float32", "[2]") + "," +
                output("y", "float32", "x") + "]}");
  ASSERT_LOADED(engine);
  float x[2] = {1, 2};
  float y[2] = {7, 8};
  set_shape(engine.get(), 0, {2});
  set_address(engine.get(), 0, x);
  set_address(engine.get(), 1, y);
  ASSERT_EQ(enqueue(engine.get()).status, TTE_OK);
  EXPECT_EQ(y[0], 7);
  EXPECT_EQ(y[1], 8);
}

TEST(HostTestProvider, FailHooksReturnTheirMessage) {
  tte_test_provider_reset_stats();
  Engine broken(R"({"op":"null","tensors":[)" + input("x", "int8", "[1]") +
                R"(],"fail":{"deserialize":"plan is cursed"}})");
  EXPECT_EQ(broken.status(), TTE_ERROR_RUNTIME);
  EXPECT_EQ(broken.message(), "plan is cursed");
  EXPECT_EQ(broken.get(), nullptr);
  EXPECT_EQ(stats().deserializes, 0u);

  Engine engine(R"({"op":"null","tensors":[)" + input("x", "int8", "[1]") +
                R"(],"fail":{"deserialize":"","enqueue":"kernel exploded"}})");
  ASSERT_LOADED(engine);
  int8_t x = 0;
  set_shape(engine.get(), 0, {1});
  set_address(engine.get(), 0, &x);
  for (int call = 0; call < 2; ++call) {
    Result r = enqueue(engine.get());
    EXPECT_EQ(r.status, TTE_ERROR_RUNTIME);
    EXPECT_EQ(r.message, "kernel exploded");
  }
  EXPECT_EQ(stats().enqueues, 0u);
}

TEST(HostTestProvider, EnqueueNeedsShapesAddressesAndANullStream) {
  Engine engine(add_one_plan("float32"));
  ASSERT_LOADED(engine);
  float x[4] = {}, y[4] = {};
  Result r = enqueue(engine.get());
  EXPECT_EQ(r.status, TTE_ERROR_INVALID_STATE);
  EXPECT_TRUE(contains(r.message, "not set: 'x'")) << r.message;
  set_shape(engine.get(), 0, {4});
  set_address(engine.get(), 0, x);
  r = enqueue(engine.get());
  EXPECT_EQ(r.status, TTE_ERROR_INVALID_STATE);
  EXPECT_EQ(r.message,
            "enqueue: no address set for output 'y' (index 1); call set_tensor_address for every "
            "I/O tensor first");
  set_address(engine.get(), 1, y);
  int stream_object = 0;
  r = enqueue(engine.get(), &stream_object);
  EXPECT_EQ(r.status, TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(r.message, "takes a NULL stream")) << r.message;
  EXPECT_EQ(enqueue(engine.get()).status, TTE_OK);
  EXPECT_EQ(set_address(engine.get(), 9, x).status, TTE_ERROR_INVALID_ARGUMENT);
}

TEST(HostTestProvider, ElementwiseOpsCheckElementCounts) {
  Engine engine(R"({"op":"add_one","tensors":[)" + input("x", "float32", "[4]") +
                R"(,{"name":"y","is_input":false,"dtype":"float32","shape":[3]}]})");
  ASSERT_LOADED(engine);
  float x[4] = {}, y[3] = {};
  set_shape(engine.get(), 0, {4});
  set_address(engine.get(), 0, x);
  set_address(engine.get(), 1, y);
  Result r = enqueue(engine.get());
  EXPECT_EQ(r.status, TTE_ERROR_RUNTIME);
  EXPECT_EQ(r.message,
            "enqueue: op 'add_one' is elementwise, but output 'y' (index 1) has shape [3] and "
            "input 'x' (index 0) has shape [4]");
}

TEST(HostTestProvider, EmptyTensorsNeedNoAddress) {
  Engine engine(R"({"op":"add_one","tensors":[
    {"name":"x","is_input":true,"dtype":"float32","profiles":[{"min":[0,4],"opt":[1,4],"max":[2,4]}]},
    {"name":"y","is_input":false,"dtype":"float32","shape_of":"x"}]})");
  ASSERT_LOADED(engine);
  set_shape(engine.get(), 0, {0, 4});
  set_address(engine.get(), 0, nullptr);
  Result r = enqueue(engine.get());
  EXPECT_EQ(r.status, TTE_OK) << r.message;
}

TEST(HostTestProvider, CountersSeeWhatTheBackendDid) {
  tte_test_provider_reset_stats();
  TteTestProviderStats s = stats();
  EXPECT_EQ(s.struct_size, sizeof(TteTestProviderStats));
  EXPECT_EQ(s.deserializes, 0u);
  EXPECT_EQ(s.last_device_id, -1);
  EXPECT_EQ(s.last_profile, -1);
  {
    TteEngineLoadOptions options{};
    options.struct_size = sizeof(options);
    options.device_id = 3;
    options.has_weight_streaming_budget = 1;
    options.weight_streaming_budget = 123456789;
    Engine engine(kTwoProfiles, &options);
    ASSERT_LOADED(engine);
    s = stats();
    EXPECT_EQ(s.deserializes, 1u);
    EXPECT_EQ(s.last_device_id, 3);
    EXPECT_EQ(s.last_has_weight_streaming_budget, 1);
    EXPECT_EQ(s.last_weight_streaming_budget, 123456789);
    ASSERT_EQ(select_profile(engine.get(), 1).status, TTE_OK);
    float x[9 * 4] = {}, y[9 * 4] = {};
    set_shape(engine.get(), 0, {9, 4});
    set_address(engine.get(), 0, x);
    set_address(engine.get(), 1, y);
    for (int i = 0; i < 3; ++i) ASSERT_EQ(enqueue(engine.get()).status, TTE_OK);
    EXPECT_EQ(y[35], 1.0f);
    s = stats();
    EXPECT_EQ(s.enqueues, 3u);
    EXPECT_EQ(s.select_profiles, 1u);
    EXPECT_EQ(s.last_profile, 1);
    EXPECT_EQ(s.last_stream, nullptr);
    EXPECT_EQ(s.destroys, 0u);
  }
  EXPECT_EQ(stats().destroys, 1u);

  // Options of an older, shorter struct: the budget field is not read.
  TteEngineLoadOptions short_options{};
  short_options.struct_size = offsetof(TteEngineLoadOptions, has_weight_streaming_budget);
  short_options.device_id = 1;
  short_options.has_weight_streaming_budget = 1;
  short_options.weight_streaming_budget = 7;
  {
    Engine engine(kTwoProfiles, &short_options);
  }
  s = stats();
  EXPECT_EQ(s.last_device_id, 1);
  EXPECT_EQ(s.last_has_weight_streaming_budget, 0);
  {
    Engine engine(kTwoProfiles, nullptr);
  }
  EXPECT_EQ(stats().last_device_id, 0);
  EXPECT_EQ(stats().deserializes, 3u);

  // A caller's struct is never written past its struct_size.
  unsigned char buffer[sizeof(TteTestProviderStats) + 8];
  std::memset(buffer, 0xAB, sizeof(buffer));
  uint32_t small = 16;
  std::memcpy(buffer, &small, sizeof(small));
  tte_test_provider_stats(reinterpret_cast<TteTestProviderStats*>(buffer));
  uint64_t deserializes = 0;
  std::memcpy(&deserializes, buffer + offsetof(TteTestProviderStats, deserializes),
              sizeof(deserializes));
  EXPECT_EQ(deserializes, 3u);
  for (size_t i = 16; i < sizeof(buffer); ++i) ASSERT_EQ(buffer[i], 0xAB) << "byte " << i;
  TteTestProviderStats zeroed{};
  tte_test_provider_stats(&zeroed);
  EXPECT_EQ(zeroed.deserializes, 0u);
}

TEST(HostTestProvider, NullArgumentsAreErrorsNotCrashes) {
  TteError error{};
  int32_t count = 0;
  EXPECT_EQ(provider().num_io_tensors(nullptr, &count, &error), TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(error.message, "engine handle is NULL");
  EXPECT_EQ(provider().enqueue(nullptr, nullptr, &error), TTE_ERROR_INVALID_ARGUMENT);
  std::string plan = test_plan(add_one_plan("float32"));
  EXPECT_EQ(provider().deserialize(nullptr, plan.data(), plan.size(), nullptr, nullptr, &error),
            TTE_ERROR_INVALID_ARGUMENT);
  Engine engine(add_one_plan("float32"));
  ASSERT_LOADED(engine);
  EXPECT_EQ(provider().num_io_tensors(engine.get(), nullptr, nullptr), TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(provider().describe_io_tensor(engine.get(), 0, nullptr, nullptr),
            TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(provider().set_input_shape(engine.get(), 0, nullptr, 1, nullptr),
            TTE_ERROR_INVALID_ARGUMENT);
  provider().destroy(nullptr);
}

TEST(HostTestProvider, SpinHoldsEnqueue) {
  Engine engine(R"({"op":"add_one","tensors":[)" + input("x", "float32", "[1]") + "," +
                output("y", "float32", "x") + R"(],"spin_us":20000})");
  ASSERT_LOADED(engine);
  float x = 1, y = 0;
  set_shape(engine.get(), 0, {1});
  set_address(engine.get(), 0, &x);
  set_address(engine.get(), 1, &y);
  auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(enqueue(engine.get()).status, TTE_OK);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(20));
  EXPECT_EQ(y, 2.0f);
}

TEST(HostTestProvider, EnginesRunOnThreadsOfTheirOwn) {
  auto work = [](float base, std::vector<float>* out) {
    Engine engine(add_one_plan("float32", "[64]"));
    std::vector<float> x(64, base);
    out->assign(64, 0);
    set_shape(engine.get(), 0, {64});
    set_address(engine.get(), 0, x.data());
    set_address(engine.get(), 1, out->data());
    for (int i = 0; i < 200; ++i) enqueue(engine.get());
  };
  std::vector<float> a, b;
  std::thread ta(work, 1.0f, &a);
  std::thread tb(work, 5.0f, &b);
  ta.join();
  tb.join();
  EXPECT_EQ(a, std::vector<float>(64, 2.0f));
  EXPECT_EQ(b, std::vector<float>(64, 6.0f));
}

// The Python writer's golden plan, run: float16 kv_update with Unicode names.
TEST(HostTestProvider, RunsTheGoldenKvUpdatePlan) {
  std::ifstream file(
      std::string(TTE_SOURCE_DIR) + "/tests/data/test_engines/kv_update_unicode.plan",
      std::ios::binary);
  std::string plan((std::istreambuf_iterator<char>(file)), {});
  ASSERT_FALSE(plan.empty());
  TteEngine* engine = nullptr;
  TteError error{};
  ASSERT_EQ(provider().deserialize(nullptr, plan.data(), plan.size(), nullptr, &engine, &error),
            TTE_OK)
      << error.message;
  TteIoTensorDesc desc{};
  provider().describe_io_tensor(engine, 2, &desc, nullptr);
  EXPECT_STREQ(desc.name, "x😀");
  uint16_t cache[6] = {0x3C00, 0x3C00, 0x3C00, 0x3C00, 0x3C00, 0x3C00};  // 1.0
  uint16_t x[6] = {0x3C00, 0x4000, 0x3800, 0, 0xBC00, 0x3C00};           // 1, 2, 0.5, 0, -1, 1
  uint16_t y[6] = {};
  set_shape(engine, 1, {2, 3});
  set_shape(engine, 2, {2, 3});
  set_address(engine, 0, cache);
  set_address(engine, 1, cache);
  set_address(engine, 2, x);
  set_address(engine, 3, y);
  Result r = enqueue(engine);
  ASSERT_EQ(r.status, TTE_OK) << r.message;
  const uint16_t expected[6] = {0x4000, 0x4200, 0x3E00,
                                0x3C00, 0x0000, 0x4000};  // 2, 3, 1.5, 1, 0, 2
  EXPECT_EQ(std::memcmp(cache, expected, sizeof(expected)), 0);
  EXPECT_EQ(std::memcmp(y, expected, sizeof(expected)), 0);
  provider().destroy(engine);
}

}  // namespace

TEST(HostTestProvider, BatchedCallSetsShapesThenEnqueues) {
  Engine engine(kTwoProfiles);
  ASSERT_LOADED(engine);
  ASSERT_NE(provider().execute, nullptr);
  tte_test_provider_reset_stats();
  float x[9 * 4] = {}, y[9 * 4] = {};
  const int32_t input_index = 0, input_rank = 2, output_index = 1;
  const int64_t dims[] = {9, 4};
  int32_t output_rank = -1;
  int64_t output_dims[TTE_MAX_RANK] = {};
  const int32_t tensors[] = {0, 1};
  void* addresses[] = {x, y};
  TteEngineExecution call{};
  call.struct_size = sizeof(call);
  call.steps = TTE_EXECUTE_SET_SHAPES | TTE_EXECUTE_ENQUEUE;
  call.profile = 1;
  call.num_inputs = 1;
  call.input_indices = &input_index;
  call.input_ranks = &input_rank;
  call.input_dims = dims;
  call.num_outputs = 1;
  call.output_indices = &output_index;
  call.output_ranks = &output_rank;
  call.output_dims = output_dims;
  call.num_tensors = 2;
  call.tensor_indices = tensors;
  call.addresses = addresses;
  TteError error{};
  ASSERT_EQ(provider().execute(engine.get(), &call, &error), TTE_OK) << error.message;
  EXPECT_EQ(output_rank, 2);
  EXPECT_EQ(std::vector<int64_t>(output_dims, output_dims + 2), (std::vector<int64_t>{9, 4}));
  EXPECT_EQ(y[35], 1.0f);
  // Enqueue alone keeps the shapes and profile the engine was given.
  x[35] = 5.0f;
  call.steps = TTE_EXECUTE_ENQUEUE;
  ASSERT_EQ(provider().execute(engine.get(), &call, &error), TTE_OK) << error.message;
  EXPECT_EQ(y[35], 6.0f);
  TteTestProviderStats s = stats();
  EXPECT_EQ(s.executes, 2u);
  EXPECT_EQ(s.enqueues, 2u);
  EXPECT_EQ(s.input_shapes_set, 1u);
  EXPECT_EQ(s.select_profiles, 1u);
  // A shape outside the profile fails with the per-tensor call's message.
  const int64_t too_big[] = {99, 4};
  call.steps = TTE_EXECUTE_SET_SHAPES;
  call.input_dims = too_big;
  EXPECT_EQ(provider().execute(engine.get(), &call, &error), TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(error.message, "outside profile 1")) << error.message;
  // A call shorter than the provider reads is refused.
  call.struct_size = 8;
  EXPECT_EQ(provider().execute(engine.get(), &call, &error), TTE_ERROR_INVALID_ARGUMENT);
}

TEST(HostTestProvider, PerTensorVariantIsAVersionOneStruct) {
  const TteEngineProvider* per_tensor = tte_test_host_provider_per_tensor();
  ASSERT_NE(per_tensor, nullptr);
  EXPECT_STREQ(per_tensor->name, "test-host-per-tensor");
  EXPECT_EQ(per_tensor->struct_size, offsetof(TteEngineProvider, execute));
  EXPECT_EQ(per_tensor->execute, nullptr);
  EXPECT_EQ(per_tensor->enqueue, provider().enqueue);
}
