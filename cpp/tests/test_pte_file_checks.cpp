// The checks of a .pte's bytes (program/pte_file_checks.h), compiled from its
// source, on the fixture programs as they are and with bytes changed: the
// head (too short, another file kind, another ExecuTorch format, an extended
// header past the end, exactly at it), where the flatbuffer ends, the fields
// ExecuTorch dereferences (a plan's required fields, tensor dtypes, planned
// tensors inside their arena, delegates' ids and payloads), kernel calls
// that would abort (float8 mixed with float) or read a tensor with no
// memory, and the tensors a program reads from a .ptd.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <executorch/runtime/core/exec_aten/util/scalar_type_util.h>

#include "program/pte_file_checks.h"
#include "text_match.h"

namespace {

namespace et = executorch::runtime;
using executorch::runtime::etensor::ScalarType;
using tte::Status;
using tte_test::contains;

using Bytes = std::vector<uint8_t>;

Bytes read_fixture(const std::string& name) {
  std::ifstream file(std::string(TTE_CPP_FIXTURE_DIR) + "/" + name, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(file), {});
}

// ---- Where things are in a flatbuffer (little-endian) ------------------------

template <typename T>
T get(const Bytes& b, size_t at) {
  T value{};
  std::memcpy(&value, b.data() + at, sizeof(T));
  return value;
}
template <typename T>
void put(Bytes& b, size_t at, T value) {
  std::memcpy(b.data() + at, &value, sizeof(T));
}
size_t follow(const Bytes& b, size_t at) { return at + get<uint32_t>(b, at); }
size_t vtable_of(const Bytes& b, size_t table) { return table - get<int32_t>(b, table); }
// The vtable slot of field `index` (0 when the vtable is shorter).
size_t slot(const Bytes& b, size_t table, int index) {
  const size_t vtable = vtable_of(b, table);
  const size_t at = vtable + 4 + 2 * index;
  return at < vtable + get<uint16_t>(b, vtable) ? at : 0;
}
// Where field `index` of `table` lies; 0 when absent.
size_t field(const Bytes& b, size_t table, int index) {
  const size_t at = slot(b, table, index);
  const uint16_t offset = at == 0 ? 0 : get<uint16_t>(b, at);
  return offset == 0 ? 0 : table + offset;
}
size_t ref(const Bytes& b, size_t table, int index) {
  const size_t at = field(b, table, index);
  return at == 0 ? 0 : follow(b, at);
}
uint32_t length(const Bytes& b, size_t vector) { return get<uint32_t>(b, vector); }
size_t element(const Bytes& b, size_t vector, uint32_t i) { return follow(b, vector + 4 + 4 * i); }

// program.fbs: Program.execution_plan (1); ExecutionPlan {name 0, values 2,
// delegates 7, non_const_buffer_sizes 8}; EValue {val_type 0, val 1};
// Tensor {scalar_type 0, sizes 2, allocation_info 6, extra_tensor_info 9};
// AllocationDetails {memory_id 0, memory_offset_low 1}; ExtraTensorInfo
// {location 2}.
size_t first_plan(const Bytes& b) { return element(b, ref(b, follow(b, 0), 1), 0); }
constexpr uint8_t kTensorValue = 5;

// The tensor tables of the first plan's values, by value index.
std::vector<std::pair<uint32_t, size_t>> tensors(const Bytes& b) {
  std::vector<std::pair<uint32_t, size_t>> found;
  const size_t values = ref(b, first_plan(b), 2);
  for (uint32_t v = 0; v < length(b, values); ++v) {
    const size_t value = element(b, values, v);
    const size_t type = field(b, value, 0);
    if (type != 0 && b[type] == kTensorValue) found.emplace_back(v, ref(b, value, 1));
  }
  return found;
}

// The first tensor that holds a scalar_type field: its value index and
// where that byte is.
std::pair<uint32_t, size_t> first_typed_tensor(const Bytes& b) {
  for (const auto& [v, tensor] : tensors(b)) {
    if (const size_t at = field(b, tensor, 0)) return {v, at};
  }
  ADD_FAILURE() << "no tensor with a scalar_type";
  return {0, 0};
}

// The tensor read from a .ptd (location EXTERNAL): value index and where its
// location byte is.
std::pair<uint32_t, size_t> external_tensor(const Bytes& b) {
  for (const auto& [v, tensor] : tensors(b)) {
    const size_t info = ref(b, tensor, 9);
    const size_t location = info == 0 ? 0 : field(b, info, 2);
    if (location != 0 && b[location] == 1) return {v, location};
  }
  ADD_FAILURE() << "no external tensor";
  return {0, 0};
}

const std::string kDamaged =
    "cannot load program 'p.pte': not a valid ExecuTorch program, or a truncated or damaged "
    "one (";

Status required(const Bytes& b) {
  return tte::check_required_fields(b.data(), b.size(), "program 'p.pte'");
}

// ---- The head ------------------------------------------------------------------

Status head(const Bytes& b, uint64_t file_size) {
  return tte::check_program_head(b.data(), std::min<size_t>(b.size(), 64), file_size,
                                 "program 'p.pte'");
}

TEST(PteHead, AcceptsEveryFixtureProgram) {
  for (const char* name : {"add_one.pte", "external.pte", "two_methods.pte", "identity.pte"}) {
    const Bytes b = read_fixture(name);
    ASSERT_GT(b.size(), 64u) << name;
    EXPECT_TRUE(head(b, b.size()).ok()) << name << ": " << head(b, b.size()).message();
    EXPECT_TRUE(required(b).ok()) << name << ": " << required(b).message();
  }
}

TEST(PteHead, RefusesAFileTooShortToHoldTheIdentifier) {
  const Bytes b = read_fixture("add_one.pte");
  const Status status = tte::check_program_head(b.data(), 7, 7, "program 'p.pte'");
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_PROGRAM);
  EXPECT_EQ(status.message(),
            "cannot load program 'p.pte': not a valid ExecuTorch program: it is 7 bytes long "
            "(truncated?)");
  // Eight bytes with the identifier and nothing else pass: ExecuTorch judges the rest.
  EXPECT_TRUE(tte::check_program_head(b.data(), 8, 8, "program 'p.pte'").ok());
}

TEST(PteHead, TellsAnotherExecuTorchFormatFromAnotherKindOfFile) {
  Bytes b = read_fixture("add_one.pte");
  std::memcpy(b.data() + 4, "ET11", 4);
  Status status = head(b, b.size());
  EXPECT_EQ(status.code(), TTE_ERROR_NOT_SUPPORTED);
  EXPECT_TRUE(contains(status.message(),
                       "cannot load program 'p.pte': it is an ExecuTorch program in format ET11, "
                       "and this runtime (ExecuTorch "))
      << status.message();
  EXPECT_TRUE(contains(status.message(), ") reads ET12: export it again with that version"))
      << status.message();

  for (const char* other : {"ETx2", "FT01", "et12"}) {
    std::memcpy(b.data() + 4, other, 4);
    status = head(b, b.size());
    EXPECT_EQ(status.code(), TTE_ERROR_INVALID_PROGRAM) << other;
    EXPECT_EQ(status.message(), std::string("cannot load program 'p.pte': not a valid ExecuTorch "
                                            "program: its bytes 4..7 are '") +
                                    other +
                                    "', where an ExecuTorch program has 'ET12' (a different "
                                    "kind of file, or a damaged one)");
  }
  // The .ptd that goes with a program is not one.
  const Bytes ptd = read_fixture("external.ptd");
  EXPECT_EQ(head(ptd, ptd.size()).code(), TTE_ERROR_INVALID_PROGRAM);
}

TEST(PteHead, RefusesAnExtendedHeaderPastTheEndOfTheFile) {
  const Bytes b = read_fixture("add_one.pte");
  const uint64_t program_size = get<uint64_t>(b, 16);
  ASSERT_EQ(std::string(b.begin() + 8, b.begin() + 12), "eh00");
  ASSERT_LT(program_size, b.size());
  // A file cut exactly at the program's end still holds it.
  EXPECT_TRUE(head(b, program_size).ok());
  const Status status = head(b, program_size - 1);
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_PROGRAM);
  EXPECT_EQ(status.message(), "cannot load program 'p.pte': its header gives a " +
                                  std::to_string(program_size) + "-byte program, but it has " +
                                  std::to_string(program_size - 1) +
                                  " bytes (truncated?): copy or export it again");
  // Without "eh00" the size field is not read.
  Bytes no_header = b;
  std::memcpy(no_header.data() + 8, "xx00", 4);
  EXPECT_TRUE(head(no_header, 100).ok());
  // Nor when the head is too short to hold it.
  EXPECT_TRUE(tte::check_program_head(b.data(), 23, 100, "program 'p.pte'").ok());
}

TEST(PteHead, TheFlatbufferEndsWhereTheExtendedHeaderSays) {
  const Bytes b = read_fixture("add_one.pte");
  const uint64_t program_size = get<uint64_t>(b, 16);
  EXPECT_EQ(tte::flatbuffer_extent(b.data(), 64, b.size()), program_size);
  EXPECT_EQ(tte::flatbuffer_extent(b.data(), 24, b.size()), program_size);
  // Never past the file; the whole file without a header or a head short of it.
  EXPECT_EQ(tte::flatbuffer_extent(b.data(), 64, program_size - 10), program_size - 10);
  EXPECT_EQ(tte::flatbuffer_extent(b.data(), 23, b.size()), b.size());
  Bytes no_header = b;
  no_header[8] = 'E';
  EXPECT_EQ(tte::flatbuffer_extent(no_header.data(), 64, b.size()), b.size());
}

// ---- The fields ExecuTorch dereferences -----------------------------------------

TEST(PteFields, APlanLackingARequiredFieldIsDamage) {
  for (const int missing : {6, 7, 8}) {
    Bytes b = read_fixture("add_one.pte");
    const size_t at = slot(b, first_plan(b), missing);
    ASSERT_NE(at, 0u) << missing;
    put<uint16_t>(b, at, 0);
    const Status status = required(b);
    EXPECT_EQ(status.code(), TTE_ERROR_INVALID_PROGRAM) << missing;
    EXPECT_EQ(status.message(),
              kDamaged + "execution plan 0 lacks field " + std::to_string(missing) + ")");
  }
  // Bytes that hold no program: nothing to judge here (ExecuTorch refuses them).
  const Bytes tiny{1, 2, 3};
  EXPECT_TRUE(required(tiny).ok());
}

TEST(PteFields, RefusesUnknownQuantizedAndBitsDtypes) {
  Bytes b = read_fixture("add_one.pte");
  const auto [v, at] = first_typed_tensor(b);
  const std::string value = "execution plan 0, value " + std::to_string(v);
  b[at] = 99;
  EXPECT_EQ(required(b).message(), kDamaged + value + " is a tensor of unknown dtype 99)");
  b[at] = static_cast<uint8_t>(-3);
  EXPECT_EQ(required(b).message(), kDamaged + value + " is a tensor of unknown dtype -3)");
  b[at] = static_cast<uint8_t>(ScalarType::QInt8);
  EXPECT_EQ(required(b).message(),
            kDamaged + value + " is a tensor of dtype QInt8, which no ExecuTorch program carries)");
  b[at] = static_cast<uint8_t>(ScalarType::Bits8);
  EXPECT_TRUE(contains(required(b).message(), "dtype Bits8, which no ExecuTorch program carries"));
  // Every real dtype passes (no kernel call mixes it here).
  b[at] = static_cast<uint8_t>(ScalarType::Half);
  EXPECT_TRUE(required(b).ok()) << required(b).message();
}

TEST(PteFields, APlannedTensorMustLieInsideItsArena) {
  const Bytes original = read_fixture("add_one.pte");
  // The end of the last planned tensor in arena 1, from the tensors themselves.
  uint64_t end = 0;
  size_t a_planned = 0;
  uint32_t planned_value = 0;
  for (const auto& [v, tensor] : tensors(original)) {
    const size_t info = ref(original, tensor, 6);
    if (info == 0) continue;
    const size_t id = field(original, info, 0);
    ASSERT_TRUE(id != 0 && get<uint32_t>(original, id) == 1);
    const size_t low = field(original, info, 1);
    uint64_t bytes = et::elementSize(static_cast<ScalarType>(original[field(original, tensor, 0)]));
    const size_t sizes = ref(original, tensor, 2);
    for (uint32_t k = 0; k < length(original, sizes); ++k) {
      bytes *= get<int32_t>(original, sizes + 4 + 4 * k);
    }
    end = std::max<uint64_t>(end, (low == 0 ? 0 : get<uint32_t>(original, low)) + bytes);
    a_planned = id;
    planned_value = v;
  }
  ASSERT_GT(end, 0u) << "add_one plans its tensors in arena 1";
  const size_t arenas = ref(original, first_plan(original), 8);
  ASSERT_EQ(length(original, arenas), 2u);
  const size_t arena_1 = arenas + 4 + 8;

  Bytes b = original;
  put<int64_t>(b, arena_1, static_cast<int64_t>(end));
  EXPECT_TRUE(required(b).ok()) << "an arena exactly as large: " << required(b).message();
  put<int64_t>(b, arena_1, static_cast<int64_t>(end - 1));
  Status status = required(b);
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_PROGRAM);
  EXPECT_TRUE(contains(status.message(), " lies outside its arena (memory id 1, " +
                                             std::to_string(end - 1) + " bytes))"))
      << status.message();

  b = original;
  put<uint32_t>(b, a_planned, 2);
  EXPECT_EQ(required(b).message(),
            kDamaged + "execution plan 0, value " + std::to_string(planned_value) +
                ": a memory-planned tensor is placed in memory id 2, for which the plan declares "
                "no arena (it declares ids 1 to 1))");
}

TEST(PteFields, ADelegateNeedsAnIdAndItsPayload) {
  for (const int missing : {0, 1}) {
    Bytes b = read_fixture("add_one.pte");
    const size_t delegate = element(b, ref(b, first_plan(b), 7), 0);
    const size_t at = slot(b, delegate, missing);
    ASSERT_NE(at, 0u);
    put<uint16_t>(b, at, 0);
    EXPECT_EQ(required(b).message(),
              kDamaged + "execution plan 0, delegate 0 " +
                  (missing == 0 ? "has no backend id)" : "has no processed data)"));
  }
}

TEST(PteFields, AKernelCallMixingFloat8WithAnotherDtypeIsRefused) {
  // external.pte: y = (x + 1) * 2 with aten::mul reading the .ptd constant.
  Bytes b = read_fixture("external.pte");
  const uint32_t v = external_tensor(b).first;
  for (const auto& [value, tensor] : tensors(b)) {
    if (value == v) b[field(b, tensor, 0)] = static_cast<uint8_t>(ScalarType::Float8_e4m3fn);
  }
  const Status status = required(b);
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_PROGRAM);
  // The call's op_index is 0, a flatbuffer default left out of the file:
  // the plan's first operator, aten::mul.
  EXPECT_TRUE(contains(status.message(),
                       kDamaged + "execution plan 0, chain 0, instruction 1 calls 'aten::mul"))
      << status.message();
  EXPECT_TRUE(contains(status.message(),
                       " with tensors of dtypes Float, Float8_e4m3fn, Float, a "
                       "mix ExecuTorch's kernels abort on)"))
      << status.message();
  // All float8: not a mix.
  for (const auto& [value, tensor] : tensors(b)) {
    if (const size_t at = field(b, tensor, 0))
      b[at] = static_cast<uint8_t>(ScalarType::Float8_e4m3fn);
  }
  EXPECT_TRUE(required(b).ok()) << required(b).message();
}

TEST(PteFields, AKernelReadingATensorWithNoMemoryIsRefused) {
  Bytes b = read_fixture("external.pte");
  const auto [v, location] = external_tensor(b);
  b[location] = 0;  // INTERNAL, with no constant data: no memory
  const Status status = required(b);
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_PROGRAM);
  EXPECT_TRUE(contains(status.message(), "calls 'aten::mul")) << status.message();
  EXPECT_TRUE(contains(status.message(), " with value " + std::to_string(v) +
                                             ", a tensor with no memory: neither constant data, "
                                             "planned memory, a data-file entry, nor a method "
                                             "input or output)"))
      << status.message();
}

// ---- Tensors read from a .ptd -----------------------------------------------------

TEST(PteExternalTensors, ListsWhatAProgramReadsFromAPtdByMethod) {
  const Bytes b = read_fixture("external.pte");
  const std::vector<tte::ExternalTensor> found = tte::external_tensors(b.data(), b.size());
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].method, "forward");
  EXPECT_FALSE(found[0].key.empty());
  const Bytes ptd = read_fixture("external.ptd");
  EXPECT_NE(std::search(ptd.begin(), ptd.end(), found[0].key.begin(), found[0].key.end()),
            ptd.end())
      << "the .ptd holds '" << found[0].key << "'";

  const Bytes add_one = read_fixture("add_one.pte");
  EXPECT_TRUE(tte::external_tensors(add_one.data(), add_one.size()).empty());
  // Another location is not a .ptd entry; bytes that hold no program list none.
  Bytes internal = b;
  internal[external_tensor(internal).second] = 0;
  EXPECT_TRUE(tte::external_tensors(internal.data(), internal.size()).empty());
  EXPECT_TRUE(tte::external_tensors(b.data(), 3).empty());
}

}  // namespace
