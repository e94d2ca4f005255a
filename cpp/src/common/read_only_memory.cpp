#include "common/read_only_memory.h"

#include <utility>

namespace tte {

void ReadOnlyLoans::add(const void* data, size_t size, std::string label) {
  if (data == nullptr || size == 0) {
    return;
  }
  const auto begin = reinterpret_cast<uintptr_t>(data);
  ranges_.push_back(Range{begin, begin + size, std::move(label)});
}

const std::string* ReadOnlyLoans::label_of(const void* data, size_t size) const {
  if (data == nullptr || size == 0) {
    return nullptr;
  }
  const auto begin = reinterpret_cast<uintptr_t>(data);
  const uintptr_t end = begin + size;
  for (const Range& range : ranges_) {
    if (begin < range.end && range.begin < end) {
      return &range.label;
    }
  }
  return nullptr;
}

}  // namespace tte
