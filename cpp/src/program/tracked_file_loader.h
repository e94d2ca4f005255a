// ExecuTorch's FileDataLoader, recording where each backend segment it
// loads came from (common/segment_origins.h) while the segment's buffer
// lives. The engine cache then knows two loads of the same file share a
// plan without hashing it: the plan's bytes are read once, by this loader,
// and never walked again on the load path.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include <executorch/extension/data_loader/file_data_loader.h>
#include <executorch/runtime/core/data_loader.h>

namespace tte {

class TrackedFileLoader final : public executorch::runtime::DataLoader {
 public:
  // `file_identity`: WatchedFile::identity_key() of the file `inner` reads,
  // opened before it (the program checks the file is unchanged after every
  // load, so the identity stays true of what was read).
  TrackedFileLoader(executorch::extension::FileDataLoader inner, std::string file_identity)
      : inner_(std::move(inner)), file_identity_(std::move(file_identity)) {}

  executorch::runtime::Result<executorch::runtime::FreeableBuffer> load(
      size_t offset, size_t size, const SegmentInfo& segment_info) const override;
  executorch::runtime::Error load_into(size_t offset, size_t size, const SegmentInfo& segment_info,
                                       void* buffer) const override {
    return inner_.load_into(offset, size, segment_info, buffer);
  }
  executorch::runtime::Result<size_t> size() const override { return inner_.size(); }

 private:
  executorch::extension::FileDataLoader inner_;
  std::string file_identity_;
};

}  // namespace tte
