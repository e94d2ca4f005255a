// The test-engine plan parser (docs/test-engine-format.md): what it accepts,
// and a clear message for everything it does not.
#include "testing/test_engine_format.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>
#include <tuple>

namespace tte::test_engine {
namespace {

std::string with_magic(const std::string& json) { return std::string(kMagic, kMagicSize) + json; }

ParseStatus parse(const std::string& bytes, Plan* plan, std::string* error) {
  return parse_plan(bytes.data(), bytes.size(), plan, error);
}

Plan parse_ok(const std::string& json) {
  Plan plan;
  std::string error;
  EXPECT_EQ(parse(with_magic(json), &plan, &error), ParseStatus::kOk) << error;
  return plan;
}

std::string parse_error(const std::string& json) {
  Plan plan;
  std::string error;
  EXPECT_EQ(parse(with_magic(json), &plan, &error), ParseStatus::kInvalid) << json;
  return error;
}

std::string read_golden(const char* name) {
  std::ifstream file(std::string(TTE_SOURCE_DIR) + "/tests/data/test_engines/" + name,
                     std::ios::binary);
  EXPECT_TRUE(file.good()) << "missing golden plan " << name;
  return std::string(std::istreambuf_iterator<char>(file), {});
}

constexpr const char* kAddOne = R"({"op":"add_one","tensors":[
  {"name":"x","is_input":true,"dtype":"float32","profiles":[{"min":[1,4],"opt":[2,4],"max":[8,4]}]},
  {"name":"y","is_input":false,"dtype":"float32","shape_of":"x"}]})";

TEST(TestEngineFormat, MagicIsSixteenBytes) {
  EXPECT_EQ(kMagicSize, 16u);
  EXPECT_EQ(std::string(kMagic), "TTE-TEST-ENGINE\n");
}

TEST(TestEngineFormat, ParsesAddOne) {
  Plan plan = parse_ok(kAddOne);
  EXPECT_EQ(plan.op, Op::kAddOne);
  ASSERT_EQ(plan.tensors.size(), 2u);
  const TensorSpec& x = plan.tensors[0];
  EXPECT_EQ(x.name, "x");
  EXPECT_TRUE(x.is_input);
  EXPECT_EQ(x.dtype->scalar_type, kFloat);
  EXPECT_EQ(x.rank, 2);
  ASSERT_EQ(x.profiles.size(), 1u);
  EXPECT_EQ(x.profiles[0].min, (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(x.profiles[0].opt, (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(x.profiles[0].max, (std::vector<int64_t>{8, 4}));
  const TensorSpec& y = plan.tensors[1];
  EXPECT_FALSE(y.is_input);
  EXPECT_EQ(y.shape_of, 0);
  EXPECT_EQ(y.rank, 2);
  EXPECT_EQ(y.aliased_input, -1);
  EXPECT_EQ(plan.inputs, (std::vector<int32_t>{0}));
  EXPECT_EQ(plan.outputs, (std::vector<int32_t>{1}));
  EXPECT_EQ(plan.num_profiles, 1);
  EXPECT_TRUE(plan.fail_deserialize.empty());
  EXPECT_TRUE(plan.fail_enqueue.empty());
  EXPECT_EQ(plan.spin_us, 0);
}

// Padding: any JSON whitespace after the object, of any length; braces and
// brackets inside strings do not end the object early.
TEST(TestEngineFormat, WhitespaceAfterTheObjectIsPadding) {
  EXPECT_EQ(parse_ok(std::string(kAddOne) + std::string(100003, ' ')).op, Op::kAddOne);
  EXPECT_EQ(parse_ok(std::string(kAddOne) + " \n\t\r  " + std::string(77, ' ') + "\n").op,
            Op::kAddOne);
  const Plan braces = parse_ok(R"({"op":"add_one","tensors":[
    {"name":"x}]\"{","is_input":true,"dtype":"float32","profiles":[{"min":[4],"opt":[4],"max":[4]}]},
    {"name":"y","is_input":false,"dtype":"float32","shape_of":"x}]\"{"}]})" +
                               std::string(64, ' '));
  EXPECT_EQ(braces.tensors[0].name, "x}]\"{");
}

TEST(TestEngineFormat, AnythingButWhitespaceAfterTheObjectIsNamedByItsOffset) {
  // 16 bytes of magic, then the object, 1000 spaces, and one stray byte.
  const std::string json =
      std::string(kAddOne) + std::string(1000, ' ') + "x" + std::string(9, ' ');
  const std::string error = parse_error(json);
  EXPECT_NE(error.find("characters after the document, at byte " +
                       std::to_string(16 + std::string(kAddOne).size() + 1000)),
            std::string::npos)
      << error;
  EXPECT_NE(
      parse_error(std::string(kAddOne) + std::string(1000, ' ') + "\v").find("after the document"),
      std::string::npos);
  EXPECT_NE(parse_error(std::string(kAddOne) + "}").find("after the document"), std::string::npos);
}

TEST(TestEngineFormat, DtypesMapToExecuTorchScalarTypes) {
  // Values of executorch/runtime/core/portable_type/scalar_type.h.
  const std::pair<const char*, int32_t> expected[] = {
      {"uint8", 0},   {"int8", 1},    {"int16", 2},   {"int32", 3}, {"int64", 4},
      {"float16", 5}, {"float32", 6}, {"float64", 7}, {"bool", 11}, {"bfloat16", 15},
  };
  const std::pair<const char*, int32_t> sizes[] = {
      {"uint8", 1},   {"int8", 1},    {"int16", 2},   {"int32", 4}, {"int64", 8},
      {"float16", 2}, {"float32", 4}, {"float64", 8}, {"bool", 1},  {"bfloat16", 2},
  };
  for (size_t i = 0; i < std::size(expected); ++i) {
    const DtypeInfo* d = find_dtype(expected[i].first);
    ASSERT_NE(d, nullptr) << expected[i].first;
    EXPECT_EQ(d->scalar_type, expected[i].second) << expected[i].first;
    EXPECT_EQ(d->element_size, sizes[i].second) << expected[i].first;
    EXPECT_EQ(find_dtype(expected[i].second), d);
    Plan plan =
        parse_ok(std::string(R"({"op":"null","tensors":[{"name":"x","is_input":true,"dtype":")") +
                 expected[i].first + R"(","profiles":[{"min":[1],"opt":[1],"max":[1]}]}]})");
    EXPECT_EQ(plan.tensors[0].dtype->scalar_type, expected[i].second);
  }
  EXPECT_EQ(find_dtype("float"), nullptr);
  EXPECT_EQ(find_dtype(int32_t{8}), nullptr);  // ComplexHalf: no test dtype
}

TEST(TestEngineFormat, InterleavedTensorsAndForwardShapeOf) {
  Plan plan = parse_ok(R"({"op":"identity","tensors":[
    {"name":"o0","is_input":false,"dtype":"int64","shape_of":"i0"},
    {"name":"i0","is_input":true,"dtype":"int64","profiles":[{"min":[3],"opt":[3],"max":[3]}]},
    {"name":"o1","is_input":false,"dtype":"bool","shape":[2,2]},
    {"name":"i1","is_input":true,"dtype":"bool","profiles":[{"min":[4],"opt":[4],"max":[4]}]}]})");
  EXPECT_EQ(plan.inputs, (std::vector<int32_t>{1, 3}));
  EXPECT_EQ(plan.outputs, (std::vector<int32_t>{0, 2}));
  EXPECT_EQ(plan.tensors[0].shape_of, 1);
  EXPECT_EQ(plan.tensors[2].shape_of, -1);
  EXPECT_EQ(plan.tensors[2].shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(plan.tensors[2].rank, 2);
}

TEST(TestEngineFormat, SeveralProfilesAndScalars) {
  Plan plan = parse_ok(R"({"op":"add","tensors":[
    {"name":"a","is_input":true,"dtype":"int32","profiles":[{"min":[1],"opt":[2],"max":[4]},{"min":[5],"opt":[8],"max":[16]}]},
    {"name":"b","is_input":true,"dtype":"int32","profiles":[{"min":[1],"opt":[2],"max":[4]},{"min":[5],"opt":[8],"max":[16]}]},
    {"name":"y","is_input":false,"dtype":"int32","shape_of":"a"}]})");
  EXPECT_EQ(plan.num_profiles, 2);
  EXPECT_EQ(plan.tensors[1].profiles[1].max, (std::vector<int64_t>{16}));

  Plan scalar = parse_ok(R"({"op":"add_one","tensors":[
    {"name":"x","is_input":true,"dtype":"float64","profiles":[{"min":[],"opt":[],"max":[]}]},
    {"name":"y","is_input":false,"dtype":"float64","shape":[]}]})");
  EXPECT_EQ(scalar.tensors[0].rank, 0);
  EXPECT_EQ(scalar.tensors[1].rank, 0);
}

TEST(TestEngineFormat, AliasesFailHooksAndSpin) {
  Plan plan = parse_ok(R"({"op":"kv_update","tensors":[
    {"name":"cache","is_input":true,"dtype":"float32","profiles":[{"min":[4],"opt":[4],"max":[4]}]},
    {"name":"x","is_input":true,"dtype":"float32","profiles":[{"min":[4],"opt":[4],"max":[4]}]},
    {"name":"cache_out","is_input":false,"dtype":"float32","shape_of":"cache"},
    {"name":"y","is_input":false,"dtype":"float32","shape_of":"cache"}],
    "aliases":{"cache_out":"cache"},"fail":{"deserialize":"no","enqueue":"boom"},"spin_us":250})");
  EXPECT_EQ(plan.tensors[2].aliased_input, 0);
  EXPECT_EQ(plan.tensors[3].aliased_input, -1);
  EXPECT_EQ(plan.fail_deserialize, "no");
  EXPECT_EQ(plan.fail_enqueue, "boom");
  EXPECT_EQ(plan.spin_us, 250);
}

TEST(TestEngineFormat, UnicodeNamesRawAndEscaped) {
  // "ключ" as UTF-8 bytes and as \u escapes name the same tensor; a
  // character outside the BMP arrives as a surrogate pair.
  Plan plan = parse_ok(R"({"op":"add_one","tensors":[
    {"name":"\u043a\u043b\u044e\u0447","is_input":true,"dtype":"float32","profiles":[{"min":[1],"opt":[1],"max":[1]}]},
    {"name":"y\ud83d\ude00","is_input":false,"dtype":"float32","shape_of":"ключ"}]})");
  EXPECT_EQ(plan.tensors[0].name, "ключ");
  EXPECT_EQ(plan.tensors[1].name, "y😀");
  EXPECT_EQ(plan.tensors[1].shape_of, 0);
}

TEST(TestEngineFormat, OtherBytesAreNotTestPlans) {
  Plan plan;
  std::string error;
  EXPECT_EQ(parse_plan(nullptr, 0, &plan, &error), ParseStatus::kNotTestPlan);
  EXPECT_EQ(parse("", &plan, &error), ParseStatus::kNotTestPlan);
  EXPECT_EQ(parse("TTE-TEST-ENGINE", &plan, &error), ParseStatus::kNotTestPlan);  // 15 bytes
  EXPECT_EQ(parse("tte-test-engine\n{}", &plan, &error), ParseStatus::kNotTestPlan);
  EXPECT_EQ(parse(std::string("ftrt\0\0\0\0", 8) + std::string(64, '\x01'), &plan, &error),
            ParseStatus::kNotTestPlan);
  EXPECT_TRUE(error.empty());
  EXPECT_FALSE(has_magic("TTE-TEST-ENGINE", 15));
  EXPECT_TRUE(has_magic("TTE-TEST-ENGINE\n", 16));
}

TEST(TestEngineFormat, ErrorsLeaveThePlanUntouched) {
  Plan plan = parse_ok(kAddOne);
  std::string error;
  EXPECT_EQ(parse(with_magic("{}"), &plan, &error), ParseStatus::kInvalid);
  EXPECT_EQ(plan.tensors.size(), 2u);
}

// A plan that is not valid, and a part of the message it must produce.
using BadPlan = std::tuple<const char*, const char*>;
class TestEngineFormatRejects : public ::testing::TestWithParam<BadPlan> {};

TEST_P(TestEngineFormatRejects, WithAClearMessage) {
  auto [json, expected] = GetParam();
  std::string error = parse_error(json);
  EXPECT_EQ(error.rfind("invalid test-engine plan: ", 0), 0u) << error;
  EXPECT_NE(error.find(expected), std::string::npos)
      << "message: " << error << "\nexpected part: " << expected;
}

#define X_IN(name, dtype, dims)                                                                   \
  "{\"name\":\"" name "\",\"is_input\":true,\"dtype\":\"" dtype "\",\"profiles\":[{\"min\":" dims \
  ",\"opt\":" dims ",\"max\":" dims "}]}"
#define X_OUT(name, dtype, of) \
  "{\"name\":\"" name "\",\"is_input\":false,\"dtype\":\"" dtype "\",\"shape_of\":\"" of "\"}"
#define ADD_ONE_TENSORS "[" X_IN("x", "float32", "[4]") "," X_OUT("y", "float32", "x") "]"

INSTANTIATE_TEST_SUITE_P(
    Document, TestEngineFormatRejects,
    ::testing::Values(
        BadPlan{"", "does not parse"}, BadPlan{"{\"op\":", "does not parse"},
        BadPlan{"{\"op\":\"null\",\"tensors\":[" X_IN("x", "int8", "[1]") "]} trailing",
                "does not parse"},
        BadPlan{"[1,2]", "plan: expected a JSON object"},
        BadPlan{"{\"tensors\":" ADD_ONE_TENSORS "}", "plan: missing key 'op'"},
        BadPlan{"{\"op\":7,\"tensors\":" ADD_ONE_TENSORS "}", "plan.op: expected a string"},
        BadPlan{"{\"op\":\"add_two\",\"tensors\":" ADD_ONE_TENSORS "}",
                "op: unknown op 'add_two' (expected add_one, add, identity, kv_update, null, "
                "keep_positive)"},
        BadPlan{"{\"op\":\"add_one\",\"tensors\":" ADD_ONE_TENSORS ",\"extra\":1}",
                "plan: unknown key 'extra' (expected op, tensors, aliases, fail, spin_us, "
                "scratch_bytes, weight_bytes)"},
        BadPlan{"{\"op\":\"add_one\",\"tensors\":" ADD_ONE_TENSORS ",\"capturable\":false}",
                "'capturable' is not part of a test plan"},
        BadPlan{"{\"op\":\"add_one\"}", "plan: missing key 'tensors'"},
        BadPlan{"{\"op\":\"add_one\",\"tensors\":[]}", "tensors: expected a non-empty list"},
        BadPlan{"{\"op\":\"add_one\",\"tensors\":{}}", "tensors: expected a non-empty list"},
        BadPlan{"{\"op\":\"add_one\",\"tensors\":" ADD_ONE_TENSORS ",\"spin_us\":-1}",
                "spin_us: expected microseconds"},
        BadPlan{"{\"op\":\"add_one\",\"tensors\":" ADD_ONE_TENSORS ",\"spin_us\":10000001}",
                "spin_us: expected"},
        BadPlan{"{\"op\":\"add_one\",\"tensors\":" ADD_ONE_TENSORS ",\"spin_us\":1.5}",
                "spin_us: expected"},
        BadPlan{"{\"op\":\"add_one\",\"tensors\":" ADD_ONE_TENSORS ",\"fail\":{\"execute\":\"x\"}}",
                "fail: unknown key 'execute' (expected deserialize, enqueue)"},
        BadPlan{"{\"op\":\"add_one\",\"tensors\":" ADD_ONE_TENSORS ",\"fail\":{\"enqueue\":1}}",
                "fail.enqueue: expected a message string"},
        BadPlan{"{\"op\":\"add_one\",\"tensors\":" ADD_ONE_TENSORS ",\"fail\":\"enqueue\"}",
                "fail: expected a JSON object"}));

INSTANTIATE_TEST_SUITE_P(
    Tensors, TestEngineFormatRejects,
    ::testing::Values(
        BadPlan{"{\"op\":\"null\",\"tensors\":[3]}", "tensors[0]: expected a JSON object"},
        BadPlan{"{\"op\":\"null\",\"tensors\":[{\"is_input\":true}]}",
                "tensors[0]: missing key 'name'"},
        BadPlan{"{\"op\":\"null\",\"tensors\":[{\"name\":\"\",\"is_input\":true}]}",
                "tensors[0]: name is empty"},
        BadPlan{"{\"op\":\"null\",\"tensors\":[{\"name\":\"x\",\"dtype\":\"int8\"}]}",
                "tensors[0] ('x'): missing key 'is_input'"},
        BadPlan{
            "{\"op\":\"null\",\"tensors\":[{\"name\":\"x\",\"is_input\":1,\"dtype\":\"int8\"}]}",
            "tensors[0] ('x').is_input: expected true or false"},
        BadPlan{"{\"op\":\"null\",\"tensors\":[{\"name\":\"x\",\"is_input\":true}]}",
                "tensors[0] ('x'): missing key 'dtype'"},
        BadPlan{
            "{\"op\":\"null\",\"tensors\":[{\"name\":\"x\",\"is_input\":true,\"dtype\":\"float\"}]"
            "}",
            "tensors[0] ('x').dtype: unknown dtype 'float' (expected float32, float16, bfloat16"},
        BadPlan{"{\"op\":\"null\",\"tensors\":[" X_IN("x", "int8", "[1]") "," X_IN("x", "int8",
                                                                                   "[1]") "]}",
                "tensors[1] ('x'): name is also used by tensors[0]"},
        BadPlan{"{\"op\":\"null\",\"tensors\":[{\"name\":\"x\",\"is_input\":true,\"dtype\":"
                "\"int8\",\"shape\":[1]}]}",
                "tensors[0] ('x'): 'shape' is for outputs"},
        BadPlan{"{\"op\":\"null\",\"tensors\":[{\"name\":\"x\",\"is_input\":true,\"dtype\":"
                "\"int8\",\"shape_of\":\"x\"}]}",
                "'shape_of' is for outputs"},
        BadPlan{
            "{\"op\":\"null\",\"tensors\":[{\"name\":\"x\",\"is_input\":true,\"dtype\":\"int8\"}]}",
            "tensors[0] ('x'): missing key 'profiles'"},
        BadPlan{"{\"op\":\"null\",\"tensors\":[{\"name\":\"x\",\"is_input\":true,\"dtype\":"
                "\"int8\",\"profiles\":[],"
                "\"note\":1}]}",
                "unknown key 'note' (expected name, is_input, dtype, profiles)"},
        BadPlan{"{\"op\":\"null\",\"tensors\":[{\"name\":\"x\",\"is_input\":true,\"dtype\":"
                "\"int8\",\"profiles\":[]}]}",
                "tensors[0] ('x').profiles: expected a non-empty list of {min, opt, max}"},
        BadPlan{"{\"op\":\"null\",\"tensors\":[{\"name\":\"x\",\"is_input\":true,\"dtype\":"
                "\"int8\",\"profiles\":[{\"min\":[1],"
                "\"max\":[1]}]}]}",
                "tensors[0] ('x').profiles[0]: missing key 'opt'"},
        BadPlan{"{\"op\":\"null\",\"tensors\":[{\"name\":\"x\",\"is_input\":true,\"dtype\":"
                "\"int8\",\"profiles\":[{\"min\":[1],"
                "\"opt\":[1],\"max\":[1,2]}]}]}",
                "tensors[0] ('x').profiles[0]: min, opt and max have ranks 1, 1 and 2"},
        BadPlan{"{\"op\":\"null\",\"tensors\":[{\"name\":\"x\",\"is_input\":true,\"dtype\":"
                "\"int8\",\"profiles\":[{\"min\":[2],"
                "\"opt\":[1],\"max\":[3]}]}]}",
                "profiles[0]: dim 0 needs min <= opt <= max, got 2, 1, 3"},
        BadPlan{"{\"op\":\"null\",\"tensors\":[{\"name\":\"x\",\"is_input\":true,\"dtype\":"
                "\"int8\",\"profiles\":[{\"min\":[1],"
                "\"opt\":[1],\"max\":[1]},{\"min\":[1,1],\"opt\":[1,1],\"max\":[1,1]}]}]}",
                "profiles[1]: rank 2 differs from profile 0's rank 1"},
        BadPlan{"{\"op\":\"null\",\"tensors\":[" X_IN("x", "int8", "[-1]") "]}",
                "profiles[0].min[0]: dims are >= 0, got -1"},
        BadPlan{"{\"op\":\"null\",\"tensors\":[" X_IN("x", "int8", "[2.5]") "]}",
                "min[0]: expected an integer dim, got 2.5"},
        BadPlan{"{\"op\":\"null\",\"tensors\":[" X_IN("x", "int8", "[\"2\"]") "]}",
                "expected an integer dim, got \"2\""},
        BadPlan{"{\"op\":\"null\",\"tensors\":[" X_IN("x", "int8", "[true]") "]}",
                "expected an integer dim, got true"},
        BadPlan{"{\"op\":\"null\",\"tensors\":[" X_IN("x", "int8", "[18446744073709551615]") "]}",
                "expected an integer dim"},
        BadPlan{"{\"op\":\"null\",\"tensors\":[" X_IN("x", "int8", "3") "]}",
                "min: expected a list of dims, got 3"},
        BadPlan{"{\"op\":\"null\",\"tensors\":[" X_IN("x", "int8",
                                                      "[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]") "]}",
                "rank 17 is above the largest the ABI carries (16)"},
        BadPlan{
            "{\"op\":\"null\",\"tensors\":[" X_IN("x", "int64", "[1048576,1048576,1048576]") "]}",
            "the tensor would exceed 2^50 bytes"},
        BadPlan{"{\"op\":\"null\",\"tensors\":[" X_IN(
                    "a", "int8", "[1]") ",{\"name\":\"b\",\"is_input\":true,\"dtype\":"
                                        "\"int8\",\"profiles\":[{\"min\":[1],\"opt\":[1],\"max\":["
                                        "1]},{\"min\":[1],\"opt\":[1],\"max\":[1]}]}]}",
                "tensors[1] ('b').profiles: has 2 profiles but 'a' has 1"},
        BadPlan{"{\"op\":\"null\",\"tensors\":[{\"name\":\"y\",\"is_input\":false,\"dtype\":"
                "\"int8\"}]}",
                "tensors[0] ('y'): an output has exactly one of 'shape_of' (an input's name) or "
                "'shape'"},
        BadPlan{"{\"op\":\"null\",\"tensors\":[" X_IN(
                    "x", "int8", "[1]") ",{\"name\":\"y\",\"is_input\":false,\"dtype\":"
                                        "\"int8\",\"shape\":[1],\"shape_of\":\"x\"}]}",
                "an output has exactly one of"},
        BadPlan{"{\"op\":\"null\",\"tensors\":[{\"name\":\"y\",\"is_input\":false,\"dtype\":"
                "\"int8\",\"profiles\":[]}]}",
                "'profiles' is for inputs"},
        BadPlan{"{\"op\":\"null\",\"tensors\":[" X_OUT("y", "int8", "") "]}",
                "tensors[0] ('y').shape_of: is empty"},
        BadPlan{"{\"op\":\"null\",\"tensors\":[" X_OUT("y", "int8", "q") "]}",
                "tensors[0] ('y').shape_of: 'q' names no tensor of this plan"},
        BadPlan{"{\"op\":\"null\",\"tensors\":[" X_OUT("y", "int8", "z") "," X_OUT("z", "int8",
                                                                                   "y") "]}",
                "'z' is an output; shape_of names an input"},
        BadPlan{"{\"op\":\"null\",\"tensors\":[{\"name\":\"y\",\"is_input\":false,\"dtype\":"
                "\"int8\",\"shape\":[-2]}]}",
                "tensors[0] ('y').shape[0]: dims are >= 0"},
        // -1 marks keep_positive's data-dependent output, and nothing else.
        BadPlan{"{\"op\":\"null\",\"tensors\":[{\"name\":\"y\",\"is_input\":false,\"dtype\":"
                "\"int8\",\"shape\":[-1]}]}",
                "tensors[0] ('y').shape: -1 (a data-dependent dim) is for op 'keep_positive'"},
        BadPlan{
            "{\"op\":\"keep_positive\",\"tensors\":[" X_IN("x", "int8",
                                                           "[4]") "," X_OUT("y", "int8", "x") "]}",
            "op 'keep_positive' takes a 1-D input and gives a 1-D output of data-dependent size"},
        BadPlan{
            "{\"op\":\"keep_positive\",\"tensors\":[" X_IN(
                "x", "bool",
                "[4]") ",{\"name\":\"y\",\"is_input\":false,\"dtype\":\"bool\",\"shape\":[-1]}]}",
            "op 'keep_positive' does arithmetic"},
        BadPlan{"{\"op\":\"null\",\"tensors\":[{\"name\":\"y\",\"is_input\":false,\"dtype\":"
                "\"int8\",\"shape\":[1],\"x\":0}]}",
                "unknown key 'x' (expected name, is_input, dtype, shape_of, shape)"},
        BadPlan{"{\"op\":\"null\",\"tensors\":[{\"name\":\"\xff\",\"is_input\":true}]}",
                "does not parse"}));

INSTANTIATE_TEST_SUITE_P(
    Aliases, TestEngineFormatRejects,
    ::testing::Values(
        BadPlan{"{\"op\":\"add_one\",\"tensors\":" ADD_ONE_TENSORS ",\"aliases\":[]}",
                "aliases: expected a JSON object"},
        BadPlan{"{\"op\":\"add_one\",\"tensors\":" ADD_ONE_TENSORS ",\"aliases\":{\"y\":1}}",
                "aliases.y: expected an input name, got 1"},
        BadPlan{"{\"op\":\"add_one\",\"tensors\":" ADD_ONE_TENSORS ",\"aliases\":{\"q\":\"x\"}}",
                "aliases.q: 'q' names no tensor of this plan"},
        BadPlan{"{\"op\":\"add_one\",\"tensors\":" ADD_ONE_TENSORS ",\"aliases\":{\"x\":\"x\"}}",
                "aliases.x: 'x' is an input; alias keys are outputs"},
        BadPlan{"{\"op\":\"add_one\",\"tensors\":" ADD_ONE_TENSORS ",\"aliases\":{\"y\":\"q\"}}",
                "aliases.y: 'q' names no tensor"},
        BadPlan{"{\"op\":\"add_one\",\"tensors\":" ADD_ONE_TENSORS ",\"aliases\":{\"y\":\"y\"}}",
                "aliases.y: 'y' is an output; alias values are inputs"},
        BadPlan{"{\"op\":\"null\",\"tensors\":[" X_IN("x", "int8", "[1]") "," X_OUT(
                    "y", "uint8", "x") "],"
                                       "\"aliases\":{\"y\":\"x\"}}",
                "aliases.y: output is uint8 but input is int8"},
        BadPlan{"{\"op\":\"null\",\"tensors\":[" X_IN(
                    "x", "int8", "[1]") ",{\"name\":\"y\",\"is_input\":false,\"dtype\":"
                                        "\"int8\",\"shape\":[1]}],\"aliases\":{\"y\":\"x\"}}",
                "an output written in place has its input's shape: give 'y' \"shape_of\": \"x\""},
        BadPlan{"{\"op\":\"null\",\"tensors\":[" X_IN("x", "int8", "[1]") "," X_OUT(
                    "y", "int8", "x") "," X_OUT("z", "int8",
                                                "x") "],\"aliases\":{\"y\":\"x\",\"z\":\"x\"}}",
                "input 'x' is already written in place by 'y'"}));

#define KV_TENSORS                                                               \
  "[" X_IN("cache", "float32", "[4]") "," X_IN("x", "float32", "[4]") "," X_OUT( \
      "cache_out", "float32", "cache") "," X_OUT("y", "float32", "cache") "]"

INSTANTIATE_TEST_SUITE_P(
    OpRoles, TestEngineFormatRejects,
    ::testing::Values(
        BadPlan{"{\"op\":\"add_one\",\"tensors\":[" X_IN("a", "float32", "[1]") "," X_IN(
                    "b", "float32", "[1]") "," X_OUT("y", "float32", "a") "]}",
                "op: op 'add_one' takes 1 input and 1 output, the plan has 2 inputs and 1 output"},
        BadPlan{"{\"op\":\"add_one\",\"tensors\":[" X_IN("x", "float32",
                                                         "[1]") "," X_OUT("y", "float16", "x") "]}",
                "tensors[1] ('y'): is float16 but 'x' is float32: op 'add_one' keeps the dtype"},
        BadPlan{"{\"op\":\"add_one\",\"tensors\":[" X_IN("x", "bool", "[1]") "," X_OUT("y", "bool",
                                                                                       "x") "]}",
                "tensors[0] ('x'): op 'add_one' does arithmetic; bool tensors are for 'identity' "
                "and 'null'"},
        BadPlan{"{\"op\":\"add\",\"tensors\":[" X_IN("a", "int32", "[1]") "," X_OUT("y", "int32",
                                                                                    "a") "]}",
                "op 'add' takes 2 inputs and 1 output, the plan has 1 input and 1 output"},
        BadPlan{"{\"op\":\"add\",\"tensors\":[" X_IN("a", "int32", "[1]") "," X_IN(
                    "b", "int64", "[1]") "," X_OUT("y", "int32", "a") "]}",
                "tensors[1] ('b'): is int64 but 'a' is int32"},
        BadPlan{"{\"op\":\"identity\",\"tensors\":[" X_IN("a", "int32", "[1]") "," X_IN(
                    "b", "int32", "[1]") "," X_OUT("y", "int32", "a") "]}",
                "op 'identity' takes n >= 1 inputs and as many outputs, the plan has 2 inputs and "
                "1 output"},
        BadPlan{"{\"op\":\"identity\",\"tensors\":[" X_OUT("y", "int32", "y") "]}",
                "'y' is an output"},
        BadPlan{"{\"op\":\"identity\",\"tensors\":[{\"name\":\"y\",\"is_input\":false,\"dtype\":"
                "\"int8\",\"shape\":[1]}]}",
                "op 'identity' takes n >= 1 inputs and as many outputs, the plan has 0 inputs and "
                "1 output"},
        BadPlan{
            "{\"op\":\"identity\",\"tensors\":[" X_IN("a", "int32", "[1]") "," X_IN(
                "b", "int32", "[1]") "," X_OUT("ya", "int32",
                                               "a") "," X_OUT("yb", "int32",
                                                              "a") "],\"aliases\":{\"yb\":\"a\"}}",
            "op 'identity' cannot write output 'yb' into input 'a': an identity output may alias "
            "only its own input"},
        BadPlan{"{\"op\":\"kv_update\",\"tensors\":" KV_TENSORS "}",
                "aliases: op 'kv_update' writes the cache in place: map its first output "
                "'cache_out' to its first input 'cache'"},
        BadPlan{"{\"op\":\"kv_update\",\"tensors\":[" X_IN("cache", "float32", "[4]") "," X_OUT(
                    "cache_out", "float32", "cache") "],"
                                                     "\"aliases\":{\"cache_out\":\"cache\"}}",
                "op 'kv_update' takes 2 inputs (cache, x) and 1 or 2 outputs (cache_out[, y])"},
        BadPlan{"{\"op\":\"kv_update\",\"tensors\":[" X_IN("cache", "float32", "[4]") "," X_IN(
                    "x", "float32",
                    "[4]") "," X_OUT("y", "float32",
                                     "x") "," X_OUT("cache_out", "float32",
                                                    "cache") "],\"aliases\":{\"y\":\"x\",\"cache_"
                                                             "out\":\"cache\"}}",
                "map its first output 'y' to its first input 'cache'"},
        BadPlan{"{\"op\":\"kv_update\",\"tensors\":[" X_IN("cache", "float32", "[4]") "," X_IN(
                    "x", "float32",
                    "[4]") "," X_OUT("cache_out", "float32",
                                     "cache") "," X_OUT("y", "float32",
                                                        "x") "],\"aliases\":{\"cache_out\":"
                                                             "\"cache\",\"y\":\"x\"}}",
                "op 'kv_update' cannot write output 'y' into input 'x': only the cache output is "
                "written in place"}));

TEST(TestEngineFormat, NullTakesAnything) {
  Plan plan = parse_ok("{\"op\":\"null\",\"tensors\":[" X_IN("a", "bool", "[1]") "," X_IN(
      "b", "float16", "[2]") "," X_OUT("y", "int64", "a") "," X_OUT("z", "int64",
                                                                    "b") "],\"aliases\":{}}");
  EXPECT_EQ(plan.op, Op::kNull);
  Plan outputs_only = parse_ok(
      "{\"op\":\"null\",\"tensors\":[{\"name\":\"y\",\"is_input\":false,\"dtype\":\"int8\","
      "\"shape\":[3]}]}");
  EXPECT_TRUE(outputs_only.inputs.empty());
  EXPECT_EQ(outputs_only.num_profiles, 1);
}

// The Python writer's golden output (tests/testing/test_make_test_engine.py).
TEST(TestEngineFormat, ReadsGoldenPlansOfThePythonWriter) {
  Plan plan;
  std::string error;
  ASSERT_EQ(parse(read_golden("add_one_profiles.plan"), &plan, &error), ParseStatus::kOk) << error;
  EXPECT_EQ(plan.op, Op::kAddOne);
  EXPECT_EQ(plan.num_profiles, 2);
  EXPECT_EQ(plan.tensors[0].profiles[1].opt, (std::vector<int64_t>{16, 4}));

  ASSERT_EQ(parse(read_golden("kv_update_unicode.plan"), &plan, &error), ParseStatus::kOk) << error;
  EXPECT_EQ(plan.op, Op::kKvUpdate);
  ASSERT_EQ(plan.tensors.size(), 4u);
  EXPECT_EQ(plan.tensors[0].name, "кэш_out");
  EXPECT_EQ(plan.tensors[0].aliased_input, 1);
  EXPECT_EQ(plan.tensors[2].name, "x😀");
  EXPECT_EQ(plan.tensors[2].dtype->scalar_type, kHalf);
  EXPECT_EQ(plan.inputs, (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(plan.outputs, (std::vector<int32_t>{0, 3}));
  EXPECT_TRUE(plan.fail_deserialize.empty());
  EXPECT_EQ(plan.spin_us, 1);

  ASSERT_EQ(parse(read_golden("identity_dicts.plan"), &plan, &error), ParseStatus::kOk) << error;
  EXPECT_EQ(plan.op, Op::kIdentity);
  EXPECT_EQ(plan.tensors[0].dtype->scalar_type, kBool);
  EXPECT_EQ(plan.tensors[1].rank, 0);
  EXPECT_EQ(plan.fail_enqueue, "enqueue failed on purpose");
}

}  // namespace
}  // namespace tte::test_engine
