#include "program/tracked_file_loader.h"

#include <sys/mman.h>

#include <new>
#include <utility>

#include "common/segment_origins.h"
#include "program/watched_file.h"

namespace tte {

namespace et = executorch::runtime;

namespace {

// The inner loader's buffer, kept until ours is freed.
struct HeldSegment {
  et::FreeableBuffer inner;
};

void free_held_segment(void* context, void* data, size_t /*size*/) {
  forget_segment(data);
  delete static_cast<HeldSegment*>(context);  // frees the inner buffer
}

void unmap_pages(void* /*context*/, void* data, size_t size) { ::munmap(data, size); }

}  // namespace

// The pages are all written by the read that follows, so populating them
// first wastes nothing; a range the file does not hold goes to ExecuTorch's
// own load before any memory is taken (a damaged file's size could ask for
// more than the machine has), for its checks and its error, and so does a
// mapping that cannot be made.
et::Result<et::FreeableBuffer> TrackedFileLoader::read_backend_segment(
    size_t offset, size_t size, const SegmentInfo& segment_info) const {
  const et::Result<size_t> file_size = inner_.size();
  if (size < kPopulatedFrom || !file_size.ok() || offset > *file_size ||
      size > *file_size - offset) {
    return inner_.load(offset, size, segment_info);
  }
  void* pages = ::mmap(nullptr, size, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (pages == MAP_FAILED) {
    return inner_.load(offset, size, segment_info);
  }
  const et::Error error = inner_.load_into(offset, size, segment_info, pages);
  if (error != et::Error::Ok) {
    ::munmap(pages, size);
    return error;
  }
  return et::FreeableBuffer(pages, size, unmap_pages, nullptr);
}

et::Result<et::FreeableBuffer> TrackedFileLoader::load(size_t offset, size_t size,
                                                       const SegmentInfo& segment_info) const {
  if (segment_info.segment_type != SegmentInfo::Type::Backend) {
    return inner_.load(offset, size, segment_info);
  }
  et::Result<et::FreeableBuffer> loaded = read_backend_segment(offset, size, segment_info);
  if (!loaded.ok() || file_identity_.empty()) {
    return loaded;
  }
  // Asked after the read: a change during or before it shows in the change
  // time, one after it did not touch the bytes read.
  std::string now;
  if (!WatchedFile::current_identity_key(path_, &now) || now != file_identity_) {
    return loaded;
  }
  auto* held = new (std::nothrow) HeldSegment{std::move(*loaded)};
  if (held == nullptr) {
    return et::Error::MemoryAllocationFailed;
  }
  void* data = const_cast<void*>(held->inner.data());
  const size_t held_size = held->inner.size();
  record_segment(data, held_size, file_identity_, offset);
  return et::FreeableBuffer(data, held_size, free_held_segment, held);
}

}  // namespace tte
