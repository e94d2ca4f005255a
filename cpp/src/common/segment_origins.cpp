#include "common/segment_origins.h"

#include <map>
#include <mutex>
#include <utility>

namespace tte {
namespace {

struct Segment {
  size_t size = 0;
  std::string file_identity;
  uint64_t file_offset = 0;
};

struct Segments {
  std::mutex mutex;
  std::map<uintptr_t, Segment> by_start;
};

Segments& segments() {
  static Segments* registry = new Segments();  // never destroyed: buffers may outlive statics
  return *registry;
}

}  // namespace

void record_segment(const void* data, size_t size, std::string file_identity,
                    uint64_t file_offset) {
  if (data == nullptr || size == 0) {
    return;
  }
  Segments& registry = segments();
  std::lock_guard<std::mutex> lock(registry.mutex);
  registry.by_start[reinterpret_cast<uintptr_t>(data)] =
      Segment{size, std::move(file_identity), file_offset};
}

void forget_segment(const void* data) {
  Segments& registry = segments();
  std::lock_guard<std::mutex> lock(registry.mutex);
  registry.by_start.erase(reinterpret_cast<uintptr_t>(data));
}

std::optional<std::string> segment_origin(const void* data, size_t size) {
  const uintptr_t start = reinterpret_cast<uintptr_t>(data);
  Segments& registry = segments();
  std::lock_guard<std::mutex> lock(registry.mutex);
  auto it = registry.by_start.upper_bound(start);
  if (it == registry.by_start.begin()) {
    return std::nullopt;
  }
  --it;
  const uintptr_t segment_start = it->first;
  const Segment& segment = it->second;
  const uintptr_t offset = start - segment_start;
  if (offset > segment.size || size > segment.size - offset) {
    return std::nullopt;
  }
  return segment.file_identity + '@' + std::to_string(segment.file_offset + offset) + ':' +
         std::to_string(size);
}

size_t recorded_segment_count() {
  Segments& registry = segments();
  std::lock_guard<std::mutex> lock(registry.mutex);
  return registry.by_start.size();
}

}  // namespace tte
