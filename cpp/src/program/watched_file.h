// A file a program was opened from (.pte or .ptd), held open together with
// what it looked like then. ExecuTorch reads the file through a descriptor of
// its own (FileDataLoader: every load is a private copy, nothing is mapped,
// so a file cut short or rewritten under a loaded program cannot fault it);
// this one tells whether the file has changed since, so that a method loaded
// later is not read from a different file, and reads the program's
// flatbuffer for check_required_fields.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"

namespace tte {

class WatchedFile {
 public:
  // Opens `path`; `what` names it in messages ("program", "data file"). A
  // path that is missing, unreadable, a directory, a FIFO, a device, a
  // socket or a symbolic link loop is refused with a message saying which.
  static Status open(const std::string& path, const char* what, std::unique_ptr<WatchedFile>* out);
  ~WatchedFile();
  WatchedFile(const WatchedFile&) = delete;
  WatchedFile& operator=(const WatchedFile&) = delete;

  const std::string& path() const { return path_; }
  uint64_t size() const { return opened_.size; }

  // Ok while the file has the size and modification time it had when it was
  // opened and, with `path_too`, `path` still names it (not another file
  // moved there).
  Status unchanged(bool path_too) const;

  // The file as it was opened, as text: device, inode, size, modification
  // and change times. Two opens give the same text only for the same file
  // with the same contents, short of a rewrite that keeps its size and
  // restores both times to the nanosecond (the change time cannot be set
  // by a caller; the kernel sets it on every write).
  std::string identity_key() const;
  // The same text for the file `path` names now; false when it cannot be
  // asked.
  static bool current_identity_key(const std::string& path, std::string* out);

  // Whether the file's change time was at least kSettledSeconds before it
  // was opened. Only then does identity_key() name its contents: a file
  // changed within the timestamps' granularity of the open could change
  // again without a new change time (git's "racily clean" problem). A
  // settled file that changes later gets a later change time at any
  // granularity up to kSettledSeconds.
  static constexpr int64_t kSettledSeconds = 2;
  bool settled() const { return settled_; }

  // `size` bytes at `offset`, read now.
  Status read(uint64_t offset, size_t size, std::vector<uint8_t>* out) const;

  // What statx says of a file (statx, not stat: stat and fstat are
  // GLIBC_2.33 symbols, past the wheel's glibc 2.28 floor).
  struct Identity {
    uint32_t mode = 0;
    uint64_t size = 0;
    int64_t mtime_sec = 0;
    uint32_t mtime_nsec = 0;
    int64_t ctime_sec = 0;
    uint32_t ctime_nsec = 0;
    uint32_t dev_major = 0;
    uint32_t dev_minor = 0;
    uint64_t inode = 0;
  };

 private:
  WatchedFile(std::string path, const char* what, int fd, const Identity& opened, bool settled)
      : path_(std::move(path)), what_(what), fd_(fd), opened_(opened), settled_(settled) {}

  std::string path_;
  const char* what_;
  int fd_;
  Identity opened_;
  bool settled_;
};

}  // namespace tte
