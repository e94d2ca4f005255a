// ExecuTorch's FileDataLoader for a program's own file, with two things of
// its own for backend segments (the engines):
// - a segment of 1 MiB or more is read into anonymous pages the kernel
//   provides all at once (MAP_POPULATE) instead of one page fault per 4 KiB
//   page as the read first touches each: the same memory, freed when the
//   segment is, with far fewer traps (a 64 MiB engine: 16,384 faults);
// - where the file is settled, it records where each segment came from
//   (common/segment_origins.h) while the segment's buffer lives. The engine
//   cache then knows two loads of the same file share a plan without hashing
//   it: the plan's bytes are read once, by this loader, and never walked
//   again on the load path.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include <executorch/extension/data_loader/file_data_loader.h>
#include <executorch/runtime/core/data_loader.h>

namespace tte {

class TrackedFileLoader final : public executorch::runtime::DataLoader {
 public:
  // `file_identity`: WatchedFile::identity_key() of the file at `path` that
  // `inner` reads, taken when the program opened it, or empty where the file
  // was not settled then (nothing is recorded). A segment is recorded
  // only when `path` still has that identity after the segment was read: a
  // file rewritten, renamed or replaced since (its change time, size or
  // inode differ) leaves its segments unrecorded, so they are hashed.
  TrackedFileLoader(executorch::extension::FileDataLoader inner, std::string path,
                    std::string file_identity)
      : inner_(std::move(inner)),
        path_(std::move(path)),
        file_identity_(std::move(file_identity)) {}

  executorch::runtime::Result<executorch::runtime::FreeableBuffer> load(
      size_t offset, size_t size, const SegmentInfo& segment_info) const override;
  executorch::runtime::Error load_into(size_t offset, size_t size, const SegmentInfo& segment_info,
                                       void* buffer) const override {
    return inner_.load_into(offset, size, segment_info, buffer);
  }
  executorch::runtime::Result<size_t> size() const override { return inner_.size(); }

 private:
  static constexpr size_t kPopulatedFrom = size_t{1} << 20;
  executorch::runtime::Result<executorch::runtime::FreeableBuffer> read_backend_segment(
      size_t offset, size_t size, const SegmentInfo& segment_info) const;

  executorch::extension::FileDataLoader inner_;
  std::string path_;
  std::string file_identity_;
};

}  // namespace tte
