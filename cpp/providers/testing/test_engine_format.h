// The test-engine plan (docs/test-engine-format.md): the "engine" format of
// the test providers. Parsed and validated once, at deserialize, into a Plan
// that the host and CUDA test providers run. No ExecuTorch dependency.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "plan_magic.h"

namespace tte::test_engine {

inline constexpr const char* kMagic = kTestEnginePlanMagic;
inline constexpr size_t kMagicSize = kTestEnginePlanMagicSize;
inline constexpr int64_t kMaxSpinUs = 10'000'000;
inline constexpr int64_t kMaxMemoryBytes = int64_t{1} << 40;

// ExecuTorch ScalarType values, as numbered in
// executorch/runtime/core/portable_type/scalar_type.h, for the kernels'
// switches (the CUDA provider's kernels build without ExecuTorch headers);
// test_engine_format.cpp checks them against ExecuTorch's, and takes names
// and sizes from the library's dtype table (src/common/dtypes.h).
enum ScalarType : int32_t {
  kByte = 0,
  kChar = 1,
  kShort = 2,
  kInt = 3,
  kLong = 4,
  kHalf = 5,
  kFloat = 6,
  kDouble = 7,
  kBool = 11,
  kBFloat16 = 15,
};

struct DtypeInfo {
  const char* name;  // the plan's name: "float32", "int64", ...
  int32_t scalar_type;
  int32_t element_size;
};

// The dtype called `name` in a plan, or nullptr.
const DtypeInfo* find_dtype(std::string_view name);
// The dtype whose ScalarType is `scalar_type`, or nullptr.
const DtypeInfo* find_dtype(int32_t scalar_type);

enum class Op { kAddOne, kAdd, kIdentity, kKvUpdate, kNull, kKeepPositive };
const char* op_name(Op op);

struct ProfileDims {
  std::vector<int64_t> min;
  std::vector<int64_t> opt;
  std::vector<int64_t> max;
};

struct TensorSpec {
  std::string name;
  bool is_input = false;
  const DtypeInfo* dtype = nullptr;
  int32_t rank = 0;
  // Inputs: one entry per optimization profile.
  std::vector<ProfileDims> profiles;
  // Outputs: the engine index of the input whose current shape this output
  // takes, or -1 when `shape` holds a fixed shape (where -1 is a dim known
  // only after the run: keep_positive's output).
  int32_t shape_of = -1;
  std::vector<int64_t> shape;
  // Outputs: engine index of the input written in place, else -1.
  int32_t aliased_input = -1;
};

struct Plan {
  Op op = Op::kNull;
  // Engine order; inputs and outputs may interleave.
  std::vector<TensorSpec> tensors;
  // Engine indices of the inputs and of the outputs, in order of appearance:
  // the op's roles (add: a = inputs[0], b = inputs[1]).
  std::vector<int32_t> inputs;
  std::vector<int32_t> outputs;
  int32_t num_profiles = 1;
  // Microseconds enqueue waits (on the stream, for the CUDA provider) before
  // the op writes its outputs: makes unfinished work observable.
  int64_t spin_us = 0;
  // Scratch (activation) memory each profile's run uses, one entry per
  // profile: allocated by the engine, or given by the backend when the
  // engine was loaded with user-managed device memory; enqueue writes it.
  std::vector<int64_t> scratch_bytes;
  // Memory the deserialized engine holds for its "weights", shared by every
  // execution context made from it (create_execution_context).
  int64_t weight_bytes = 0;
  // Non-empty: that call fails with this message.
  std::string fail_deserialize;
  std::string fail_enqueue;
};

// True when `data` starts with kMagic: a test plan, valid or not.
bool has_magic(const void* data, uint64_t size);

enum class ParseStatus {
  kOk,
  // No magic: another provider's plan.
  kNotTestPlan,
  // The magic is there but the rest is not a valid plan; `error` says why.
  kInvalid,
};

// Parses and validates a whole plan (magic included). On kInvalid, `error`
// holds one line naming the field at fault and what was expected.
ParseStatus parse_plan(const void* data, uint64_t size, Plan* plan, std::string* error);

}  // namespace tte::test_engine
