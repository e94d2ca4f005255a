// The file a program was opened from (program/watched_file.h): what is
// refused at open and why, whether it changed since, its identity, and reads.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "program/watched_file.h"
#include "text_match.h"

namespace {

namespace fs = std::filesystem;

class WatchedFileTest : public testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/tte_watched_file_XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    folder_ = pattern;
  }
  void TearDown() override { fs::remove_all(folder_); }

  std::string write(const std::string& name, const std::string& bytes) {
    const std::string path = (folder_ / name).string();
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
    return path;
  }

  tte::Status open(const std::string& path, std::unique_ptr<tte::WatchedFile>* out) {
    return tte::WatchedFile::open(path, "program", out);
  }

  fs::path folder_;
};

using tte_test::contains;

TEST_F(WatchedFileTest, AMissingFileIsNotFound) {
  std::unique_ptr<tte::WatchedFile> file;
  const tte::Status status = open((folder_ / "missing.pte").string(), &file);
  EXPECT_EQ(status.code(), TTE_ERROR_NOT_FOUND);
  EXPECT_TRUE(contains(status.message(), "it does not exist")) << status.message();
  EXPECT_TRUE(contains(status.message(), "program '")) << status.message();
  EXPECT_EQ(file, nullptr);
}

TEST_F(WatchedFileTest, APathThroughAFileIsNotFound) {
  const std::string plain = write("plain", "x");
  std::unique_ptr<tte::WatchedFile> file;
  const tte::Status status = open(plain + "/inside.pte", &file);
  EXPECT_EQ(status.code(), TTE_ERROR_NOT_FOUND);
  EXPECT_TRUE(contains(status.message(), "part of its path is not a directory"))
      << status.message();
}

TEST_F(WatchedFileTest, ADirectoryIsRefusedAsOne) {
  std::unique_ptr<tte::WatchedFile> file;
  const tte::Status status = open(folder_.string(), &file);
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(status.message(), "it is a directory, not a file")) << status.message();
}

TEST_F(WatchedFileTest, AFifoIsRefusedWithoutBlocking) {
  const std::string path = (folder_ / "pipe").string();
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  std::unique_ptr<tte::WatchedFile> file;
  const tte::Status status = open(path, &file);
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(status.message(), "a FIFO (named pipe)")) << status.message();
}

TEST_F(WatchedFileTest, ASocketIsRefused) {
  const std::string path = (folder_ / "socket").string();
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  ASSERT_LT(path.size(), sizeof(address.sun_path));
  std::snprintf(address.sun_path, sizeof(address.sun_path), "%s", path.c_str());
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  std::unique_ptr<tte::WatchedFile> file;
  const tte::Status status = open(path, &file);
  ::close(fd);
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(status.message(), "a socket")) << status.message();
}

TEST_F(WatchedFileTest, ASymbolicLinkLoopIsNamed) {
  const std::string a = (folder_ / "a").string();
  const std::string b = (folder_ / "b").string();
  ASSERT_EQ(::symlink(b.c_str(), a.c_str()), 0);
  ASSERT_EQ(::symlink(a.c_str(), b.c_str()), 0);
  std::unique_ptr<tte::WatchedFile> file;
  const tte::Status status = open(a, &file);
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(status.message(), "symbolic links form a loop")) << status.message();
}

TEST_F(WatchedFileTest, AnUnreadableFileSaysSo) {
  if (::geteuid() == 0) {
    GTEST_SKIP() << "root reads files whatever their mode";
  }
  const std::string path = write("secret.pte", "abc");
  ASSERT_EQ(::chmod(path.c_str(), 0), 0);
  std::unique_ptr<tte::WatchedFile> file;
  const tte::Status status = open(path, &file);
  EXPECT_TRUE(contains(status.message(), "permission denied")) << status.message();
}

TEST_F(WatchedFileTest, AnOpenFileIsReadAndUnchanged) {
  const std::string path = write("model.pte", "0123456789");
  std::unique_ptr<tte::WatchedFile> file;
  ASSERT_TRUE(open(path, &file).ok());
  EXPECT_EQ(file->path(), path);
  EXPECT_EQ(file->size(), 10u);
  EXPECT_TRUE(file->unchanged(true).ok());
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(file->read(3, 4, &bytes).ok());
  EXPECT_EQ(std::string(bytes.begin(), bytes.end()), "3456");
  // Written just now: its identity does not yet name its contents.
  EXPECT_FALSE(file->settled());
}

TEST_F(WatchedFileTest, AReadPastTheEndSaysTheFileEndedEarly) {
  const std::string path = write("model.pte", "0123");
  std::unique_ptr<tte::WatchedFile> file;
  ASSERT_TRUE(open(path, &file).ok());
  std::vector<uint8_t> bytes;
  const tte::Status status = file->read(2, 8, &bytes);
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_STATE);
  EXPECT_TRUE(contains(status.message(), "it ended early")) << status.message();
}

TEST_F(WatchedFileTest, AFileThatGrewChangedSize) {
  const std::string path = write("model.pte", "0123");
  std::unique_ptr<tte::WatchedFile> file;
  ASSERT_TRUE(open(path, &file).ok());
  std::ofstream(path, std::ios::binary | std::ios::app) << "4567";
  const tte::Status status = file->unchanged(false);
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_STATE);
  EXPECT_TRUE(contains(status.message(), "changed size from 4 to 8 bytes")) << status.message();
  EXPECT_TRUE(contains(status.message(), "open the program again")) << status.message();
}

TEST_F(WatchedFileTest, AFileRewrittenInPlaceAtItsSizeWasRewritten) {
  const std::string path = write("model.pte", "0123");
  std::unique_ptr<tte::WatchedFile> file;
  ASSERT_TRUE(open(path, &file).ok());
  // A modification time of its own, whatever the clock's granularity.
  timespec times[2] = {{0, UTIME_OMIT}, {12345, 678}};
  std::ofstream(path, std::ios::binary | std::ios::in | std::ios::out) << "abcd";
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
  const tte::Status status = file->unchanged(false);
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_STATE);
  EXPECT_TRUE(contains(status.message(), "was rewritten")) << status.message();
}

TEST_F(WatchedFileTest, AnotherFileMovedToThePathIsAReplacement) {
  const std::string path = write("model.pte", "0123");
  std::unique_ptr<tte::WatchedFile> file;
  ASSERT_TRUE(open(path, &file).ok());
  const std::string other = write("other.pte", "wxyz");
  ASSERT_EQ(std::rename(other.c_str(), path.c_str()), 0);
  // The open file itself did not change; its path names another one now.
  EXPECT_TRUE(file->unchanged(false).ok());
  const tte::Status status = file->unchanged(true);
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_STATE);
  EXPECT_TRUE(contains(status.message(), "was replaced by another file")) << status.message();
  // The open file still reads as it was.
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(file->read(0, 4, &bytes).ok());
  EXPECT_EQ(std::string(bytes.begin(), bytes.end()), "0123");
}

TEST_F(WatchedFileTest, IdentityKeysNameTheFileAsItWas) {
  const std::string path = write("model.pte", "0123");
  std::unique_ptr<tte::WatchedFile> first;
  std::unique_ptr<tte::WatchedFile> second;
  ASSERT_TRUE(open(path, &first).ok());
  ASSERT_TRUE(open(path, &second).ok());
  EXPECT_EQ(first->identity_key(), second->identity_key());
  std::string now;
  ASSERT_TRUE(tte::WatchedFile::current_identity_key(path, &now));
  EXPECT_EQ(now, first->identity_key());
  std::ofstream(path, std::ios::binary | std::ios::app) << "4";
  ASSERT_TRUE(tte::WatchedFile::current_identity_key(path, &now));
  EXPECT_NE(now, first->identity_key());
  EXPECT_FALSE(tte::WatchedFile::current_identity_key((folder_ / "missing").string(), &now));
}

}  // namespace
