#include "program/watched_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

namespace tte {
namespace {

// statx of `path` (fd < 0) or of `fd`; false with errno set on failure.
bool identify(int fd, const std::string& path, WatchedFile::Identity* out) {
  struct statx info{};
  const int result = fd >= 0 ? ::statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &info)
                             : ::statx(AT_FDCWD, path.c_str(), 0, STATX_BASIC_STATS, &info);
  if (result != 0) {
    return false;
  }
  out->mode = info.stx_mode;
  out->size = info.stx_size;
  out->mtime_sec = info.stx_mtime.tv_sec;
  out->mtime_nsec = info.stx_mtime.tv_nsec;
  out->ctime_sec = info.stx_ctime.tv_sec;
  out->ctime_nsec = info.stx_ctime.tv_nsec;
  out->dev_major = info.stx_dev_major;
  out->dev_minor = info.stx_dev_minor;
  out->inode = info.stx_ino;
  return true;
}

// "a directory", "a FIFO (named pipe)", ...; nullptr for a regular file.
const char* kind_of(uint32_t mode) {
  if (S_ISREG(mode)) return nullptr;
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

std::string quoted(const char* what, const std::string& path) {
  return std::string(what) + " '" + path + "'";
}

Status not_a_file(const char* what, const std::string& path, const char* kind) {
  return Status(TTE_ERROR_INVALID_ARGUMENT,
                "cannot open " + quoted(what, path) + ": it is " + kind +
                    ", not a file: pass the path of the file itself (or read the bytes and open "
                    "them as a buffer)");
}

Status cannot_open(const char* what, const std::string& path, int error) {
  const std::string where = "cannot open " + quoted(what, path) + ": ";
  switch (error) {
    case ENOENT:
      return Status(TTE_ERROR_NOT_FOUND, where + "it does not exist");
    case ELOOP:
      return Status(TTE_ERROR_INVALID_ARGUMENT,
                    where + "its symbolic links form a loop (or nest too deep)");
    case ENOTDIR:
      return Status(TTE_ERROR_NOT_FOUND,
                    where + "it does not exist (part of its path is not a directory)");
    case EACCES:
    case EPERM:
      return Status(TTE_ERROR_NOT_FOUND,
                    where + "permission denied: make it readable by this user");
    default:
      return Status(TTE_ERROR_NOT_FOUND, where + std::strerror(error));
  }
}

}  // namespace

Status WatchedFile::open(const std::string& path, const char* what,
                         std::unique_ptr<WatchedFile>* out) {
  Identity info;
  if (!identify(-1, path, &info)) {
    return cannot_open(what, path, errno);
  }
  if (const char* kind = kind_of(info.mode)) {
    return not_a_file(what, path, kind);
  }
  // O_NONBLOCK: the path may have become a FIFO since.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    return cannot_open(what, path, errno);
  }
  if (!identify(fd, path, &info) || kind_of(info.mode) != nullptr) {
    const int error = errno;
    ::close(fd);
    const char* kind = kind_of(info.mode);
    return kind != nullptr ? not_a_file(what, path, kind) : cannot_open(what, path, error);
  }
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  const bool settled = info.ctime_sec + kSettledSeconds < now.tv_sec ||
                       (info.ctime_sec + kSettledSeconds == now.tv_sec &&
                        static_cast<long>(info.ctime_nsec) <= now.tv_nsec);
  out->reset(new WatchedFile(path, what, fd, info, settled));
  return Status::Ok();
}

WatchedFile::~WatchedFile() { ::close(fd_); }

namespace {

std::string key_of(const WatchedFile::Identity& id) {
  return std::to_string(id.dev_major) + ':' + std::to_string(id.dev_minor) + ':' +
         std::to_string(id.inode) + ':' + std::to_string(id.size) + ':' +
         std::to_string(id.mtime_sec) + '.' + std::to_string(id.mtime_nsec) + ':' +
         std::to_string(id.ctime_sec) + '.' + std::to_string(id.ctime_nsec);
}

}  // namespace

std::string WatchedFile::identity_key() const { return key_of(opened_); }

bool WatchedFile::current_identity_key(const std::string& path, std::string* out) {
  Identity now;
  if (!identify(-1, path, &now)) {
    return false;
  }
  *out = key_of(now);
  return true;
}

Status WatchedFile::unchanged(bool path_too) const {
  Identity now;
  const bool same_file = identify(fd_, path_, &now) && now.size == opened_.size &&
                         now.mtime_sec == opened_.mtime_sec && now.mtime_nsec == opened_.mtime_nsec;
  Identity named;
  const bool same_path =
      !path_too || (identify(-1, path_, &named) && named.dev_major == opened_.dev_major &&
                    named.dev_minor == opened_.dev_minor && named.inode == opened_.inode);
  if (same_file && same_path) {
    return Status::Ok();
  }
  std::string how;
  if (!same_file) {
    how = now.size == opened_.size ? "was rewritten"
                                   : "changed size from " + std::to_string(opened_.size) + " to " +
                                         std::to_string(now.size) + " bytes";
  } else {
    how = "was replaced by another file";
  }
  return Status(TTE_ERROR_INVALID_STATE, quoted(what_, path_) + " " + how +
                                             " since the program was opened: open the program "
                                             "again (write new versions to a new path, or "
                                             "replace the file by renaming)");
}

Status WatchedFile::read(uint64_t offset, size_t size, std::vector<uint8_t>* out) const {
  out->resize(size);
  size_t done = 0;
  while (done < size) {
    const ssize_t n =
        ::pread(fd_, out->data() + done, size - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return Status(TTE_ERROR_INVALID_STATE,
                    "cannot read " + quoted(what_, path_) + ": " +
                        (n == 0 ? std::string("it ended early (cut short since it was opened?)")
                                : std::string(std::strerror(errno))));
    }
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

}  // namespace tte
