// tte_program_write_etdump's file writer (program/etdump_writer.h), compiled
// from its source, over ExecuTorch's ETDumpGen: refused when ETDump is off
// or nothing was recorded, the recorded events written as one ETDump
// flatbuffer (and written again after the next run), and a path
// that cannot be opened or a device that cannot take the bytes named.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <executorch/devtools/etdump/etdump_flatcc.h>

#include "program/etdump_writer.h"
#include "text_match.h"

namespace {

using executorch::etdump::ETDumpGen;
using tte::Status;
using tte_test::contains;

std::string temp_path(const std::string& name) {
  const char* dir = std::getenv("TMPDIR");
  return std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") + "/tte_etdump_" +
         std::to_string(::getpid()) + "_" + name;
}

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(file), {});
}

// One run's worth of events: a block and a profiled step.
void record_a_run(ETDumpGen& etdump) {
  etdump.create_event_block("Execute");
  auto entry = etdump.start_profiling("Method::execute");
  etdump.end_profiling(entry);
}

TEST(EtdumpWriter, WithoutATracerEtdumpIsOff) {
  const Status status = tte::write_etdump_file(nullptr, temp_path("off.etdp"));
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_STATE);
  EXPECT_EQ(status.message(), "ETDump is off for this program: open it with enable_etdump set");
}

TEST(EtdumpWriter, NothingRecordedYetWritesNoFile) {
  ETDumpGen etdump;
  const std::string path = temp_path("empty.etdp");
  std::remove(path.c_str());
  const Status status = tte::write_etdump_file(&etdump, path);
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_STATE);
  EXPECT_EQ(status.message(), "no ETDump events recorded yet: run a method first");
  EXPECT_TRUE(read_file(path).empty());
  EXPECT_NE(::access(path.c_str(), F_OK), 0) << "no file is created";
}

TEST(EtdumpWriter, WritesTheRecordedEventsAsAnEtdumpAndStartsAgain) {
  ETDumpGen etdump;
  record_a_run(etdump);
  const std::string path = temp_path("run.etdp");
  const Status status = tte::write_etdump_file(&etdump, path);
  ASSERT_TRUE(status.ok()) << status.message();
  const std::vector<uint8_t> bytes = read_file(path);
  ASSERT_GT(bytes.size(), 16u);
  // ETDump's flatbuffer identifier, and the names recorded.
  const std::string text(bytes.begin(), bytes.end());
  EXPECT_TRUE(contains(text.substr(0, 16), "ED00")) << "not an ETDump";
  EXPECT_TRUE(contains(text, "Method::execute"));
  // The recording was handed over: the tracer writes again (the file is
  // replaced, not appended to).
  record_a_run(etdump);
  ASSERT_TRUE(tte::write_etdump_file(&etdump, path).ok());
  const std::vector<uint8_t> next = read_file(path);
  ASSERT_GT(next.size(), 16u);
  EXPECT_TRUE(contains(std::string(next.begin(), next.begin() + 16), "ED00"));
  EXPECT_LT(next.size(), 2 * bytes.size() + 16);
  std::remove(path.c_str());
}

TEST(EtdumpWriter, NamesAPathThatCannotBeOpened) {
  ETDumpGen etdump;
  record_a_run(etdump);
  const std::string path = temp_path("no_such_dir") + "/run.etdp";
  const Status status = tte::write_etdump_file(&etdump, path);
  EXPECT_EQ(status.code(), TTE_ERROR_NOT_FOUND);
  EXPECT_EQ(status.message(), "cannot write '" + path + "': No such file or directory");
}

TEST(EtdumpWriter, ADeviceThatTakesNoBytesIsAFailedWrite) {
  if (::access("/dev/full", W_OK) != 0) GTEST_SKIP() << "no writable /dev/full here";
  ETDumpGen etdump;
  record_a_run(etdump);
  const Status status = tte::write_etdump_file(&etdump, "/dev/full");
  EXPECT_EQ(status.code(), TTE_ERROR_RUNTIME);
  EXPECT_EQ(status.message(), "writing '/dev/full' failed");
}

}  // namespace
