// An engine's I/O table (backend/engine_io.h), compiled from its source, read
// through a provider whose engine each test describes: tensors bound to the
// blob's io_bindings by name (never by engine order) or, without them, by
// the engines' own numbered names; what the table refuses (nameless, shape
// tensors, ranks and dtypes out of range, duplicates, missing or extra or
// turned-around names, bad profile ranges) and the provider failures it
// names; and aliased outputs from the blob's aliased_io checked against the
// engine's own aliasing.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "backend/engine_io.h"
#include "backend/provider_registry.h"
#include "text_match.h"

namespace {

using executorch::runtime::etensor::ScalarType;
using tte::AliasedIo;
using tte::AliasKind;
using tte::BlobMetadata;
using tte::EngineIo;
using tte::Status;
using tte_test::contains;

struct FakeTensor {
  std::string name;
  bool is_input = false;
  int32_t scalar_type = static_cast<int32_t>(ScalarType::Float);
  int32_t rank = 2;
  int32_t aliased_input = -1;
  bool shape_tensor = false;
  bool null_name = false;
  // Inputs, per profile.
  std::vector<std::vector<int64_t>> min{{1, 4}}, max{{8, 4}};
};

// The engine the provider describes: TteEngine* points at one.
struct FakeEngine {
  std::vector<FakeTensor> tensors;
  int32_t profiles = 1;
  std::string fail;  // the call that fails, with TTE_ERROR_RUNTIME
};

FakeEngine* fake(TteEngine* engine) { return reinterpret_cast<FakeEngine*>(engine); }

TteStatus failed(TteError* error, const char* what) {
  error->code = TTE_ERROR_RUNTIME;
  std::snprintf(error->message, sizeof(error->message), "%s broke", what);
  return TTE_ERROR_RUNTIME;
}

TteStatus num_io_tensors(TteEngine* engine, int32_t* count, TteError* error) {
  if (fake(engine)->fail == "num_io_tensors") return failed(error, "counting");
  *count = static_cast<int32_t>(fake(engine)->tensors.size());
  return TTE_OK;
}

TteStatus describe_io_tensor(TteEngine* engine, int32_t i, TteIoTensorDesc* desc, TteError* error) {
  if (fake(engine)->fail == "describe_io_tensor") return failed(error, "describing");
  const FakeTensor& t = fake(engine)->tensors[i];
  desc->name = t.null_name ? nullptr : t.name.c_str();
  desc->is_input = t.is_input;
  desc->scalar_type = t.scalar_type;
  desc->rank = t.rank;
  desc->aliased_input = t.aliased_input;
  desc->is_shape_tensor = t.shape_tensor;
  return TTE_OK;
}

TteStatus num_profiles(TteEngine* engine, int32_t* count, TteError* error) {
  if (fake(engine)->fail == "num_profiles") return failed(error, "profiling");
  *count = fake(engine)->profiles;
  return TTE_OK;
}

TteStatus profile_shape(TteEngine* engine, int32_t p, int32_t i, int64_t* min, int64_t* opt,
                        int64_t* max, TteError* error) {
  if (fake(engine)->fail == "profile_shape") return failed(error, "shaping");
  const FakeTensor& t = fake(engine)->tensors[i];
  for (int32_t d = 0; d < t.rank; ++d) {
    min[d] = t.min[p][d];
    opt[d] = t.max[p][d];
    max[d] = t.max[p][d];
  }
  return TTE_OK;
}

TteEngineProvider fake_abi() {
  TteEngineProvider p{};
  p.abi_version = TTE_ENGINE_PROVIDER_ABI_VERSION;
  p.struct_size = sizeof(p);
  p.name = "fake";
  p.memory_kind = TTE_MEMORY_HOST;
  p.num_io_tensors = num_io_tensors;
  p.describe_io_tensor = describe_io_tensor;
  p.num_profiles = num_profiles;
  p.profile_shape = profile_shape;
  return p;
}

FakeTensor input(const std::string& name) {
  FakeTensor t;
  t.name = name;
  t.is_input = true;
  return t;
}
FakeTensor output(const std::string& name, int32_t aliased_input = -1) {
  FakeTensor t;
  t.name = name;
  t.aliased_input = aliased_input;
  return t;
}

BlobMetadata bindings(const std::vector<std::string>& inputs,
                      const std::vector<std::string>& outputs) {
  BlobMetadata metadata;
  for (const auto& name : inputs) metadata.io_bindings.push_back({name, true, "", {}});
  for (const auto& name : outputs) metadata.io_bindings.push_back({name, false, "", {}});
  return metadata;
}

class EngineIoTest : public ::testing::Test {
 protected:
  Status describe(const BlobMetadata& metadata) {
    io_ = EngineIo{};
    return tte::describe_engine_io(provider_, reinterpret_cast<TteEngine*>(&engine_), metadata,
                                   &io_);
  }
  static std::vector<std::string> names(const std::vector<tte::EngineTensor>& list) {
    std::vector<std::string> out;
    for (const auto& t : list) out.push_back(t.name);
    return out;
  }

  tte::EngineProvider provider_{fake_abi(), TTE_PROVIDER_OTHER, 1};
  FakeEngine engine_;
  EngineIo io_;
};

TEST_F(EngineIoTest, BindsByTheBlobsNamesNotTheEnginesOrder) {
  // The engine lists an output first and the inputs the other way round.
  engine_.tensors = {output("out"), input("b"), input("a")};
  engine_.tensors[1].scalar_type = static_cast<int32_t>(ScalarType::Long);
  engine_.tensors[1].rank = 1;
  engine_.tensors[1].min = {{2}};
  engine_.tensors[1].max = {{6}};
  ASSERT_TRUE(describe(bindings({"a", "b"}, {"out"})).ok());
  EXPECT_EQ(names(io_.inputs), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(names(io_.outputs), (std::vector<std::string>{"out"}));
  EXPECT_EQ(io_.inputs[0].index, 2);
  EXPECT_EQ(io_.inputs[1].index, 1);
  EXPECT_EQ(io_.outputs[0].index, 0);
  EXPECT_EQ(io_.inputs[1].dtype, ScalarType::Long);
  EXPECT_EQ(io_.inputs[1].rank, 1);
  EXPECT_EQ(io_.num_profiles, 1);
  EXPECT_EQ(io_.inputs[1].min_dims, (std::vector<std::vector<int64_t>>{{2}}));
  EXPECT_EQ(io_.inputs[1].max_dims, (std::vector<std::vector<int64_t>>{{6}}));
  EXPECT_EQ(io_.num_arguments(), 3u);
  EXPECT_EQ(io_.argument(2).name, "out");
}

TEST_F(EngineIoTest, WithoutBindingsTheEnginesNumberedNamesGiveTheOrder) {
  engine_.tensors = {input("input_1"), output("output_0"), input("input_0")};
  ASSERT_TRUE(describe(BlobMetadata{}).ok());
  EXPECT_EQ(names(io_.inputs), (std::vector<std::string>{"input_0", "input_1"}));
  EXPECT_EQ(names(io_.outputs), (std::vector<std::string>{"output_0"}));
  engine_.tensors = {input("x"), output("y")};
  const Status status = describe(BlobMetadata{});
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_PROGRAM);
  EXPECT_TRUE(contains(status.message(),
                       "the blob lists no io_bindings and the engine's names give no order: "))
      << status.message();
}

TEST_F(EngineIoTest, NamesWhatTheBindingsAndTheEngineDisagreeOn) {
  engine_.tensors = {input("x"), output("y"), output("extra")};
  Status status = describe(bindings({"x", "ghost"}, {"y"}));
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_PROGRAM);
  EXPECT_EQ(status.message(),
            "the blob's I/O bindings do not match the engine's tensors: not in the engine: "
            "'ghost'; not in the blob: 'extra'");
  engine_.tensors = {input("x"), output("y")};
  status = describe(bindings({"y"}, {"x"}));
  EXPECT_EQ(status.message(),
            "the blob's I/O bindings do not match the engine's tensors: 'y' is an input in the "
            "blob but an output of the engine; 'x' is an output in the blob but an input of the "
            "engine");
}

TEST_F(EngineIoTest, RefusesTensorsTheBackendCannotBind) {
  const BlobMetadata metadata = bindings({"x"}, {"y"});
  engine_.tensors = {input("x"), output("y")};
  engine_.tensors[1].null_name = true;
  Status status = describe(metadata);
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_PROGRAM);
  EXPECT_EQ(status.message(), "engine I/O tensor 1 has no name");

  engine_.tensors = {input("x"), output("y")};
  engine_.tensors[0].shape_tensor = true;
  status = describe(metadata);
  EXPECT_EQ(status.code(), TTE_ERROR_NOT_SUPPORTED);
  EXPECT_TRUE(contains(status.message(), "engine tensor 'x' is a shape tensor"))
      << status.message();

  engine_.tensors = {input("x"), output("y")};
  engine_.tensors[1].rank = TTE_MAX_RANK + 1;
  status = describe(metadata);
  EXPECT_EQ(status.message(), "engine tensor 'y' has rank 17; expected 0..16");
  engine_.tensors[1].rank = TTE_MAX_RANK;  // the largest rank is fine
  EXPECT_TRUE(describe(metadata).ok());
  engine_.tensors[1].rank = -1;
  EXPECT_EQ(describe(metadata).message(), "engine tensor 'y' has rank -1; expected 0..16");

  engine_.tensors = {input("x"), output("y")};
  for (const int32_t type : {-1, 200, 100}) {
    engine_.tensors[1].scalar_type = type;
    status = describe(metadata);
    EXPECT_EQ(status.code(), TTE_ERROR_INVALID_PROGRAM) << type;
    EXPECT_EQ(status.message(),
              "engine tensor 'y' has unknown scalar type " + std::to_string(type));
  }

  engine_.tensors = {input("x"), output("x")};
  EXPECT_EQ(describe(metadata).message(), "the engine has two I/O tensors named 'x'");
}

TEST_F(EngineIoTest, ReadsEveryProfileAndRefusesABadRange) {
  engine_.profiles = 2;
  engine_.tensors = {input("x"), output("y")};
  engine_.tensors[0].min = {{1, 4}, {9, 4}};
  engine_.tensors[0].max = {{8, 4}, {16, 4}};
  ASSERT_TRUE(describe(bindings({"x"}, {"y"})).ok());
  EXPECT_EQ(io_.num_profiles, 2);
  EXPECT_EQ(io_.inputs[0].min_dims, (std::vector<std::vector<int64_t>>{{1, 4}, {9, 4}}));
  EXPECT_EQ(io_.inputs[0].max_dims, (std::vector<std::vector<int64_t>>{{8, 4}, {16, 4}}));

  // min == max is a fixed dim; min > max or a negative min is damage.
  engine_.tensors[0].min = {{1, 4}, {16, 4}};
  EXPECT_TRUE(describe(bindings({"x"}, {"y"})).ok());
  engine_.tensors[0].min = {{1, 4}, {17, 4}};
  Status status = describe(bindings({"x"}, {"y"}));
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_PROGRAM);
  EXPECT_EQ(status.message(),
            "engine input 'x' has an invalid range in profile 1: min [17, 4], max [16, 4]");
  engine_.tensors[0].min = {{-1, 4}, {9, 4}};
  EXPECT_TRUE(contains(describe(bindings({"x"}, {"y"})).message(), "in profile 0: min [-1, 4]"));

  engine_.profiles = 0;
  engine_.tensors[0].min = {{1, 4}, {9, 4}};
  EXPECT_EQ(describe(bindings({"x"}, {"y"})).message(),
            "the engine reports 0 optimization profiles; expected at least 1");
}

TEST_F(EngineIoTest, NamesTheProviderCallThatFailed) {
  engine_.tensors = {input("x"), output("y")};
  for (const char* call :
       {"num_io_tensors", "describe_io_tensor", "num_profiles", "profile_shape"}) {
    engine_.fail = call;
    const Status status = describe(bindings({"x"}, {"y"}));
    EXPECT_EQ(status.code(), TTE_ERROR_RUNTIME) << call;
    EXPECT_TRUE(
        contains(status.message(), std::string("engine provider 'fake': ") + call + " failed: "))
        << status.message();
  }
}

TEST_F(EngineIoTest, BindsTheBlobsAliasesAndTheEnginesUndeclaredOnes) {
  // Engine order: cache_out aliases I/O tensor 2 (cache); out2 aliases x (0).
  engine_.tensors = {input("x"), output("cache_out", 2), input("cache"), output("y"),
                     output("out2", 0)};
  BlobMetadata metadata = bindings({"cache", "x"}, {"y", "cache_out", "out2"});
  metadata.aliased_io = {{"cache_out", "cache", AliasKind::kKvCacheUpdate}};
  ASSERT_TRUE(describe(metadata).ok());
  ASSERT_EQ(names(io_.outputs), (std::vector<std::string>{"y", "cache_out", "out2"}));
  EXPECT_EQ(io_.outputs[0].aliased_input, -1);
  EXPECT_EQ(io_.outputs[1].aliased_input, 0);  // cache: delegate input 0
  EXPECT_FALSE(io_.outputs[1].check_alias_shape);
  EXPECT_EQ(io_.outputs[2].aliased_input, 1);  // x, undeclared by the blob
  EXPECT_FALSE(io_.outputs[2].check_alias_shape);

  // A "user" alias the engine does not declare: shapes are checked at execute.
  metadata.aliased_io = {{"y", "x", AliasKind::kUser}};
  ASSERT_TRUE(describe(metadata).ok());
  EXPECT_EQ(io_.outputs[0].aliased_input, 1);
  EXPECT_TRUE(io_.outputs[0].check_alias_shape);
}

TEST_F(EngineIoTest, RefusesAliasesTheEngineDoesNotBackUp) {
  engine_.tensors = {input("x"), output("y"), input("cache"), output("cache_out", 0)};
  BlobMetadata metadata = bindings({"x", "cache"}, {"y", "cache_out"});
  metadata.aliased_io = {{"cache_out", "cache", AliasKind::kKvCacheUpdate}};
  Status status = describe(metadata);
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_PROGRAM);
  EXPECT_EQ(status.message(),
            "aliased_io says output 'cache_out' updates input 'cache' in place "
            "(kv_cache_update), but the engine aliases it to input 'x'");
  metadata.aliased_io = {{"y", "cache", AliasKind::kKvCacheUpdate}};
  EXPECT_EQ(describe(metadata).message(),
            "aliased_io says output 'y' updates input 'cache' in place (kv_cache_update), but "
            "the engine does not alias that output");

  metadata.aliased_io = {{"nope", "x", AliasKind::kUser}};
  EXPECT_EQ(describe(metadata).message(),
            "aliased_io entry (output 'nope', input 'x'): 'nope' is not an output of the engine");
  metadata.aliased_io = {{"y", "nope", AliasKind::kUser}};
  EXPECT_EQ(describe(metadata).message(),
            "aliased_io entry (output 'y', input 'nope'): 'nope' is not an input of the engine");
  metadata.aliased_io = {{"y", "x", AliasKind::kUser}, {"y", "cache", AliasKind::kUser}};
  EXPECT_EQ(describe(metadata).message(), "aliased_io lists output 'y' twice");

  engine_.tensors[2].scalar_type = static_cast<int32_t>(ScalarType::Half);
  metadata.aliased_io = {{"y", "cache", AliasKind::kUser}};
  EXPECT_EQ(describe(metadata).message(),
            "aliased_io: output 'y' (float32, rank 2) cannot be written into input 'cache' "
            "(float16, rank 2)");

  // The engine's own alias must name an input.
  engine_.tensors = {input("x"), output("y", 1)};
  status = describe(bindings({"x"}, {"y"}));
  EXPECT_EQ(status.message(),
            "engine output 'y' claims to alias I/O tensor 1, which is not an input");
  engine_.tensors[1].aliased_input = 7;
  EXPECT_TRUE(contains(describe(bindings({"x"}, {"y"})).message(), "alias I/O tensor 7"));
}

}  // namespace
