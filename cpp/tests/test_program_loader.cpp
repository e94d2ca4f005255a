// Opening a .pte (+ .ptd) through ExecuTorch's Module (program/program_loader.h),
// compiled from its sources, on the fixture programs over the stand-in
// TensorRTBackend (program_unit_support.h): from a path or from caller bytes
// (copied, so the caller may free them), the method names read, the .ptd
// keys each method reads, ETDump on request; what is refused before
// ExecuTorch reads anything (a NULL buffer, a missing file, another kind of
// file, a header past the end, a damaged .ptd), the .ptd combinations
// Module cannot take, and the damage ExecuTorch would not see (a dtype, a
// method name that is not text); and a file changed after it was opened.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <executorch/devtools/etdump/etdump_flatcc.h>

#include "common/call_context.h"
#include "program/program_loader.h"
#include "program_unit_support.h"
#include "text_match.h"

namespace {

using tte::OpenedProgram;
using tte::ProgramOptions;
using tte::ProgramSource;
using tte::Status;
using tte_test::contains;
using tte_unit::fixture;

using Bytes = std::vector<uint8_t>;

Bytes read_bytes(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(file), {});
}

// Flatbuffer positions (program.fbs): the first ExecutionPlan, a table's
// field, a reference's target.
size_t follow(const Bytes& b, size_t at) {
  uint32_t offset = 0;
  std::memcpy(&offset, b.data() + at, 4);
  return at + offset;
}
size_t field(const Bytes& b, size_t table, int index) {
  int32_t back = 0;
  std::memcpy(&back, b.data() + table, 4);
  uint16_t offset = 0;
  std::memcpy(&offset, b.data() + (table - back) + 4 + 2 * index, 2);
  return offset == 0 ? 0 : table + offset;
}
size_t first_plan(const Bytes& b) {
  const size_t plans = follow(b, field(b, follow(b, 0), 1));
  return follow(b, plans + 4);
}

// The first tensor value's scalar_type byte set to `dtype`.
Bytes with_dtype(Bytes bytes, uint8_t dtype) {
  const size_t values = follow(bytes, field(bytes, first_plan(bytes), 2));
  uint32_t count = 0;
  std::memcpy(&count, bytes.data() + values, 4);
  for (uint32_t v = 0; v < count; ++v) {
    const size_t value = follow(bytes, values + 4 + 4 * v);
    const size_t type = field(bytes, value, 0);
    if (type == 0 || bytes[type] != 5) continue;  // KernelTypes.Tensor
    const size_t at = field(bytes, follow(bytes, field(bytes, value, 1)), 0);
    if (at == 0) continue;
    bytes[at] = dtype;
    return bytes;
  }
  ADD_FAILURE() << "no tensor with a scalar_type";
  return bytes;
}

class ProgramLoader : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(tte_unit::kStandInRegistered); }
  void TearDown() override {
    for (const auto& path : temp_files_) std::remove(path.c_str());
  }

  Status open(const ProgramSource& source, const ProgramOptions& options = {}) {
    opened_ = OpenedProgram{};
    tte::CallContext call;
    return tte::open_program(call, source, options, &opened_);
  }
  Status open_bytes(const Bytes& bytes, const ProgramOptions& options = {}) {
    return open(ProgramSource::buffer(bytes.data(), bytes.size()), options);
  }
  // `bytes` in a file of this test's; its path.
  std::string temp_file(const Bytes& bytes, const std::string& name) {
    const char* dir = std::getenv("TMPDIR");
    const std::string path = std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") +
                             "/tte_loader_" + std::to_string(::getpid()) + "_" + name;
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    file.write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
    temp_files_.push_back(path);
    return path;
  }

  OpenedProgram opened_;
  std::vector<std::string> temp_files_;
};

TEST_F(ProgramLoader, OpensAProgramFileAndNamesItsMethods) {
  ASSERT_TRUE(open(ProgramSource::file(fixture("two_methods.pte"))).ok());
  ASSERT_NE(opened_.module, nullptr);
  std::vector<std::string> names = opened_.method_names;
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"forward", "plus_two"}));
  ASSERT_EQ(opened_.files.size(), 1u);
  EXPECT_EQ(opened_.files[0]->path(), fixture("two_methods.pte"));
  EXPECT_FALSE(opened_.has_data_files);
  EXPECT_TRUE(opened_.external_key.empty());
  EXPECT_TRUE(opened_.owned_bytes.empty()) << "a file is read, not copied";
  EXPECT_EQ(opened_.module->event_tracer(), nullptr) << "ETDump is off unless asked";
  EXPECT_TRUE(opened_.files_unchanged().ok());
  // The module is loaded and its methods load over the stand-in backend.
  EXPECT_EQ(opened_.module->load_method("plus_two"), executorch::runtime::Error::Ok);
}

TEST_F(ProgramLoader, CopiesCallerBytesSoTheCallerMayFreeThem) {
  Bytes bytes = read_bytes(fixture("add_one.pte"));
  ProgramOptions options;
  options.enable_etdump = true;
  ASSERT_TRUE(open_bytes(bytes, options).ok());
  ASSERT_EQ(opened_.owned_bytes.size(), 1u);
  EXPECT_NE(opened_.owned_bytes[0].data(), static_cast<void*>(bytes.data()));
  EXPECT_EQ(std::memcmp(opened_.owned_bytes[0].data(), bytes.data(), bytes.size()), 0);
  EXPECT_TRUE(opened_.files.empty());
  EXPECT_EQ(opened_.method_names, (std::vector<std::string>{"forward"}));
  EXPECT_NE(dynamic_cast<executorch::etdump::ETDumpGen*>(opened_.module->event_tracer()), nullptr);
  std::fill(bytes.begin(), bytes.end(), 0);
  EXPECT_EQ(opened_.module->load_method("forward"), executorch::runtime::Error::Ok);
}

TEST_F(ProgramLoader, RefusesANullBufferAndAMissingFileBeforeExecuTorch) {
  Status status = open(ProgramSource::buffer(nullptr, 10));
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(status.message(), "program buffer is NULL");
  EXPECT_EQ(opened_.module, nullptr);

  const std::string missing = fixture("does_not_exist.pte");
  status = open(ProgramSource::file(missing));
  EXPECT_EQ(status.code(), TTE_ERROR_NOT_FOUND);
  EXPECT_EQ(status.message(), "cannot open program '" + missing + "': it does not exist");
  ProgramOptions options;
  options.data_paths = {fixture("missing.ptd")};
  status = open(ProgramSource::file(fixture("external.pte")), options);
  EXPECT_EQ(status.code(), TTE_ERROR_NOT_FOUND);
  EXPECT_TRUE(contains(status.message(), "cannot open data file '")) << status.message();
}

TEST_F(ProgramLoader, ChecksTheHeadOfAFileAndOfABuffer) {
  const Bytes ptd = read_bytes(fixture("external.ptd"));
  const std::string as_program = temp_file(ptd, "not_a_program.pte");
  Status status = open(ProgramSource::file(as_program));
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_PROGRAM);
  EXPECT_TRUE(contains(status.message(), "cannot load program '" + as_program +
                                             "': not a valid ExecuTorch program: its bytes "
                                             "4..7 are 'FT01'"))
      << status.message();
  status = open_bytes(ptd);
  EXPECT_TRUE(contains(status.message(),
                       "cannot load program buffer: not a valid ExecuTorch "
                       "program: its bytes 4..7 are 'FT01'"))
      << status.message();

  // Cut inside the flatbuffer the extended header announces.
  Bytes cut = read_bytes(fixture("add_one.pte"));
  cut.resize(200);
  status = open(ProgramSource::file(temp_file(cut, "cut.pte")));
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_PROGRAM);
  EXPECT_TRUE(contains(status.message(), "-byte program, but it has 200 bytes (truncated?)"))
      << status.message();
  status = open_bytes(cut);
  EXPECT_TRUE(contains(status.message(), "cannot load program buffer: its header gives a "))
      << status.message();
}

TEST_F(ProgramLoader, ReadsTheKeysAMethodTakesFromAPtdPathOrBuffer) {
  ProgramOptions by_path;
  by_path.data_paths = {fixture("external.ptd")};
  ASSERT_TRUE(open(ProgramSource::file(fixture("external.pte")), by_path).ok());
  EXPECT_TRUE(opened_.has_data_files);
  ASSERT_EQ(opened_.files.size(), 2u);
  EXPECT_EQ(opened_.files[1]->path(), fixture("external.ptd"));
  ASSERT_EQ(opened_.external_key.size(), 1u);
  const std::string key = opened_.external_key.at("forward");
  EXPECT_FALSE(key.empty());

  ProgramOptions by_buffer;
  by_buffer.data_buffers = {read_bytes(fixture("external.ptd"))};
  const Bytes program = read_bytes(fixture("external.pte"));
  ASSERT_TRUE(open_bytes(program, by_buffer).ok());
  EXPECT_TRUE(opened_.has_data_files);
  EXPECT_EQ(opened_.owned_bytes.size(), 2u) << "the program and the .ptd, copied";
  EXPECT_EQ(opened_.external_key.at("forward"), key);
}

TEST_F(ProgramLoader, RefusesPtdCombinationsModuleCannotTake) {
  const Bytes ptd = read_bytes(fixture("external.ptd"));
  ProgramOptions two_buffers;
  two_buffers.data_buffers = {ptd, ptd};
  Status status = open_bytes(read_bytes(fixture("external.pte")), two_buffers);
  EXPECT_EQ(status.code(), TTE_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(status.message(),
            "a program opened from a buffer takes at most one .ptd (ExecuTorch's Module takes "
            "one data loader here); open the program from a path to use several");

  ProgramOptions mixed;
  mixed.data_paths = {fixture("external.ptd")};
  mixed.data_buffers = {ptd};
  status = open(ProgramSource::file(fixture("external.pte")), mixed);
  EXPECT_EQ(status.code(), TTE_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(status.message(),
            "several .ptd sources with at least one buffer: ExecuTorch's Module takes one data "
            "loader here; pass every .ptd as a path, or a single buffer");
}

TEST_F(ProgramLoader, RefusesADamagedPtdBeforeExecuTorchReadsIt) {
  Bytes ptd = read_bytes(fixture("external.ptd"));
  std::memcpy(ptd.data() + 8, "XH01", 4);
  ProgramOptions options;
  options.data_buffers = {ptd};
  Status status = open_bytes(read_bytes(fixture("external.pte")), options);
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_PROGRAM) << status.message();
  EXPECT_TRUE(contains(status.message(), ".ptd buffer")) << status.message();
  EXPECT_EQ(opened_.module, nullptr) << "refused before the module was made";

  options.data_buffers.clear();
  options.data_paths = {temp_file(ptd, "damaged.ptd")};
  status = open(ProgramSource::file(fixture("external.pte")), options);
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_PROGRAM) << status.message();
  EXPECT_TRUE(contains(status.message(), "data file '" + options.data_paths[0] + "'"))
      << status.message();
}

TEST_F(ProgramLoader, RefusesDamageExecuTorchWouldNotSee) {
  // A quantized dtype: ExecuTorch's verifier takes it, its kernels abort on
  // it (check_required_fields, after the load).
  const Bytes bytes = with_dtype(read_bytes(fixture("add_one.pte")), 12);  // QInt8
  const std::string path = temp_file(bytes, "qint8.pte");
  Status status = open(ProgramSource::file(path));
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_PROGRAM);
  EXPECT_TRUE(contains(status.message(), "cannot load program '" + path +
                                             "': not a valid ExecuTorch program, or a truncated "
                                             "or damaged one (execution plan 0, value "))
      << status.message();
  EXPECT_TRUE(contains(status.message(),
                       " is a tensor of dtype QInt8, which no ExecuTorch program carries)"))
      << status.message();
  status = open_bytes(bytes);
  EXPECT_TRUE(contains(status.message(),
                       "cannot load program buffer: not a valid ExecuTorch "
                       "program, or a truncated or damaged one ("))
      << status.message();

  // A method name holding a control character.
  Bytes named = read_bytes(fixture("add_one.pte"));
  const size_t name = follow(named, field(named, first_plan(named), 0));
  named[name + 4] = 0x01;  // "\x01orward"
  status = open_bytes(named);
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_PROGRAM);
  EXPECT_TRUE(contains(status.message(),
                       "cannot load program buffer: the name of method 0 ('\\x01orward') is not "
                       "valid UTF-8 or holds control characters, so the file is damaged"))
      << status.message();
}

TEST_F(ProgramLoader, ExecuTorchsOwnRefusalIsNamedAsAnOpen) {
  // A dtype ExecuTorch's verifier refuses itself.
  const std::string path = temp_file(with_dtype(read_bytes(fixture("add_one.pte")), 99), "x.pte");
  Status status = open(ProgramSource::file(path));
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_PROGRAM);
  EXPECT_TRUE(contains(status.message(),
                       "cannot load program '" + path + "': it is not a valid ExecuTorch program"))
      << status.message();
  EXPECT_TRUE(contains(status.message(), "Invalid ScalarType 99")) << status.message();
  // The flatbuffer's root offset past the end.
  Bytes bytes = read_bytes(fixture("add_one.pte"));
  const uint32_t past = 1u << 30;
  std::memcpy(bytes.data(), &past, 4);
  status = open_bytes(bytes);
  EXPECT_NE(status.code(), TTE_OK);
  EXPECT_TRUE(contains(status.message(), "cannot load program buffer")) << status.message();
}

TEST_F(ProgramLoader, TellsWhenAFileChangesAfterItWasOpened) {
  const std::string path = temp_file(read_bytes(fixture("add_one.pte")), "changes.pte");
  ASSERT_TRUE(open(ProgramSource::file(path)).ok());
  EXPECT_TRUE(opened_.files_unchanged().ok());
  {
    std::ofstream append(path, std::ios::binary | std::ios::app);
    append << "more";
  }
  const Status status = opened_.files_unchanged();
  EXPECT_FALSE(status.ok());
  EXPECT_TRUE(contains(status.message(), path)) << status.message();
}

}  // namespace
