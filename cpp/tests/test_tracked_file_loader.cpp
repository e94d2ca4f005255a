// The Program API's file loader (program/tracked_file_loader.h), compiled
// from its source over ExecuTorch's FileDataLoader and a file of its own:
// a backend segment read from the file as it was opened is recorded (file
// identity, offset, size) while its buffer lives and forgotten when freed;
// other segment kinds, a file changed, replaced or removed since it was
// opened, and failed reads record nothing; size and load_into pass through.
// A backend segment of 1 MiB or more is read into pages of its own (page
// aligned), recorded and freed the same way.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <utility>

#include <executorch/extension/data_loader/file_data_loader.h>

#include "common/segment_origins.h"
#include "program/tracked_file_loader.h"
#include "program/watched_file.h"

namespace {

namespace et = executorch::runtime;
using executorch::extension::FileDataLoader;
using Segment = et::DataLoader::SegmentInfo;

class TrackedFileLoaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* dir = std::getenv("TMPDIR");
    path_ = std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") + "/tte_tracked_" +
            std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name();
    write("0123456789abcdefghijklmnopqrstuv");
    ASSERT_TRUE(tte::WatchedFile::current_identity_key(path_, &identity_));
    before_ = tte::recorded_segment_count();
  }
  void TearDown() override {
    std::remove(path_.c_str());
    EXPECT_EQ(tte::recorded_segment_count(), before_) << "a segment was left recorded";
  }
  void write(const std::string& text) {
    std::ofstream file(path_, std::ios::binary | std::ios::trunc);
    file << text;
  }
  tte::TrackedFileLoader loader(const std::string& identity) {
    auto inner = FileDataLoader::from(path_.c_str());
    EXPECT_TRUE(inner.ok());
    return tte::TrackedFileLoader(std::move(*inner), path_, identity);
  }
  static std::string text(const et::FreeableBuffer& buffer) {
    return std::string(static_cast<const char*>(buffer.data()), buffer.size());
  }

  std::string path_;
  std::string identity_;
  size_t before_ = 0;
};

TEST_F(TrackedFileLoaderTest, RecordsABackendSegmentWhileItsBufferLives) {
  const tte::TrackedFileLoader tracked = loader(identity_);
  auto loaded = tracked.load(10, 6, Segment(Segment::Type::Backend, 0));
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(text(*loaded), "abcdef");
  EXPECT_EQ(tte::recorded_segment_count(), before_ + 1);
  EXPECT_EQ(tte::segment_origin(loaded->data(), loaded->size()), identity_ + "@10:6");
  // Part of the segment: the same file, its own offset.
  EXPECT_EQ(tte::segment_origin(static_cast<const char*>(loaded->data()) + 2, 3),
            identity_ + "@12:3");
  loaded->Free();
  EXPECT_EQ(tte::recorded_segment_count(), before_);
}

TEST_F(TrackedFileLoaderTest, FreeingTheBufferWithoutFreeForgetsItToo) {
  const tte::TrackedFileLoader tracked = loader(identity_);
  {
    auto loaded = tracked.load(0, 4, Segment(Segment::Type::Backend, 0));
    ASSERT_TRUE(loaded.ok());
    EXPECT_EQ(tte::recorded_segment_count(), before_ + 1);
  }  // the FreeableBuffer's destructor frees it
  EXPECT_EQ(tte::recorded_segment_count(), before_);
}

TEST_F(TrackedFileLoaderTest, OtherSegmentKindsAreNotRecorded) {
  const tte::TrackedFileLoader tracked = loader(identity_);
  for (const auto type : {Segment::Type::Program, Segment::Type::Constant, Segment::Type::Mutable,
                          Segment::Type::External}) {
    auto loaded = tracked.load(0, 10, Segment(type, 0));
    ASSERT_TRUE(loaded.ok());
    EXPECT_EQ(text(*loaded), "0123456789");
    EXPECT_EQ(tte::recorded_segment_count(), before_) << static_cast<int>(type);
    EXPECT_FALSE(tte::segment_origin(loaded->data(), loaded->size()).has_value());
  }
}

TEST_F(TrackedFileLoaderTest, AFileChangedSinceItWasOpenedIsNotRecorded) {
  // Another identity than the file's now: read, but never recorded.
  const tte::TrackedFileLoader stale = loader(identity_ + "-then");
  auto loaded = stale.load(10, 6, Segment(Segment::Type::Backend, 0));
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(text(*loaded), "abcdef");
  EXPECT_EQ(tte::recorded_segment_count(), before_);

  // The file rewritten after the loader was made (another size).
  const tte::TrackedFileLoader tracked = loader(identity_);
  write("0123456789ABCDEFghijklmnopqrstuvwxyz");
  auto rewritten = tracked.load(10, 6, Segment(Segment::Type::Backend, 0));
  ASSERT_TRUE(rewritten.ok());
  EXPECT_EQ(tte::recorded_segment_count(), before_);
}

TEST_F(TrackedFileLoaderTest, AFileRemovedOrReplacedIsNotRecorded) {
  const tte::TrackedFileLoader tracked = loader(identity_);
  ASSERT_EQ(std::remove(path_.c_str()), 0);
  // The loader's descriptor still reads the removed file.
  auto loaded = tracked.load(0, 4, Segment(Segment::Type::Backend, 0));
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(text(*loaded), "0123");
  EXPECT_EQ(tte::recorded_segment_count(), before_);
  // Another file of the same bytes at the path.
  write("0123456789abcdefghijklmnopqrstuv");
  auto replaced = tracked.load(0, 4, Segment(Segment::Type::Backend, 0));
  ASSERT_TRUE(replaced.ok());
  EXPECT_EQ(tte::recorded_segment_count(), before_);
}

TEST_F(TrackedFileLoaderTest, AFailedReadIsPassedOnAndRecordsNothing) {
  const tte::TrackedFileLoader tracked = loader(identity_);
  auto past = tracked.load(30, 10, Segment(Segment::Type::Backend, 0));
  EXPECT_FALSE(past.ok());
  EXPECT_EQ(tte::recorded_segment_count(), before_);
}

TEST_F(TrackedFileLoaderTest, SizeAndLoadIntoAreTheFilesOwn) {
  const tte::TrackedFileLoader tracked = loader(identity_);
  auto size = tracked.size();
  ASSERT_TRUE(size.ok());
  EXPECT_EQ(*size, 32u);
  char buffer[5] = {};
  ASSERT_EQ(tracked.load_into(20, 4, Segment(Segment::Type::Backend, 0), buffer), et::Error::Ok);
  EXPECT_EQ(std::string(buffer), "klmn");
  EXPECT_EQ(tte::recorded_segment_count(), before_);
}

TEST_F(TrackedFileLoaderTest, ALargeBackendSegmentIsReadIntoPagesOfItsOwn) {
  std::string bytes(3u << 20, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) {
    bytes[i] = static_cast<char>('a' + i % 23);
  }
  write(bytes);
  ASSERT_TRUE(tte::WatchedFile::current_identity_key(path_, &identity_));
  const tte::TrackedFileLoader tracked = loader(identity_);
  const size_t offset = 4097;
  const size_t size = (2u << 20) + 5;
  auto loaded = tracked.load(offset, size, Segment(Segment::Type::Backend, 0));
  ASSERT_TRUE(loaded.ok());
  ASSERT_EQ(loaded->size(), size);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(loaded->data()) % static_cast<uintptr_t>(::getpagesize()),
            0u);
  EXPECT_TRUE(text(*loaded) == bytes.substr(offset, size)) << "the segment's bytes differ";
  EXPECT_EQ(tte::segment_origin(loaded->data(), loaded->size()),
            identity_ + "@" + std::to_string(offset) + ":" + std::to_string(size));
  loaded->Free();
  EXPECT_EQ(tte::recorded_segment_count(), before_);

  // Not settled when opened (no identity): read the same way, recorded nowhere.
  const tte::TrackedFileLoader unsettled = loader("");
  auto again = unsettled.load(offset, size, Segment(Segment::Type::Backend, 0));
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(text(*again) == bytes.substr(offset, size)) << "the segment's bytes differ";
  EXPECT_EQ(tte::recorded_segment_count(), before_);

  // Past the end: the read's error, nothing recorded.
  auto past = tracked.load(2u << 20, 2u << 20, Segment(Segment::Type::Backend, 0));
  EXPECT_FALSE(past.ok());
  EXPECT_EQ(tte::recorded_segment_count(), before_);
}

// Peak resident memory (VmHWM) of this process, in KiB, or -1.
long peak_resident_kib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) {
      return std::stol(line.substr(6));
    }
  }
  return -1;
}

TEST_F(TrackedFileLoaderTest, ASegmentPastTheEndTakesNoMemory) {
  // A damaged file's segment of 256 MiB in a file of 32 bytes: refused
  // before its pages are populated (the peak resident set stays put).
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";
  clear.close();
  const long before = peak_resident_kib();
  if (before < 0 || !clear) {
    GTEST_SKIP() << "no /proc/self/status or clear_refs here";
  }
  const tte::TrackedFileLoader tracked = loader(identity_);
  auto past = tracked.load(0, size_t{256} << 20, Segment(Segment::Type::Backend, 0));
  EXPECT_FALSE(past.ok());
  EXPECT_LT(peak_resident_kib() - before, 64 * 1024) << "the segment's pages were populated";
  EXPECT_EQ(tte::recorded_segment_count(), before_);
}

}  // namespace
