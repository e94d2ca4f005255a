#include "common/read_only_memory.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace tte {
namespace {

struct Range {
  uintptr_t begin;
  uintptr_t end;
  std::string label;
};

struct ThreadLoans {
  int depth = 0;
  std::vector<Range> ranges;
};

ThreadLoans& loans() {
  thread_local ThreadLoans value;
  return value;
}

}  // namespace

ReadOnlyLoan::ReadOnlyLoan() {
  ThreadLoans& here = loans();
  if (here.depth++ == 0) {
    here.ranges.clear();
  }
}

ReadOnlyLoan::~ReadOnlyLoan() {
  ThreadLoans& here = loans();
  if (--here.depth == 0) {
    here.ranges.clear();
  }
}

void ReadOnlyLoan::add(const void* data, size_t size, std::string label) {
  ThreadLoans& here = loans();
  if (here.depth == 0 || data == nullptr || size == 0) {
    return;
  }
  const auto begin = reinterpret_cast<uintptr_t>(data);
  here.ranges.push_back(Range{begin, begin + size, std::move(label)});
}

const std::string* read_only_label(const void* data, size_t size) {
  if (data == nullptr || size == 0) {
    return nullptr;
  }
  const auto begin = reinterpret_cast<uintptr_t>(data);
  const uintptr_t end = begin + size;
  for (const Range& range : loans().ranges) {
    if (begin < range.end && range.begin < end) {
      return &range.label;
    }
  }
  return nullptr;
}

}  // namespace tte
