#include "common/executorch_failure.h"

#include <algorithm>
#include <string_view>
#include <utility>

#include "common/text.h"

namespace tte {
namespace {

// ExecuTorch logs the cause first and then each caller on the way out
// ("Init failed for backend ...", "Failed to load method ..."): the first
// lines are the ones worth keeping, and a message has room for a few.
constexpr size_t kMaxLines = 4;
constexpr size_t kMaxLineBytes = 240;

}  // namespace

void ExecuTorchFailure::open() {
  if (depth_++ == 0) {
    reported_ = Status::Ok();
    lines_.clear();
  }
}

void ExecuTorchFailure::close() {
  if (depth_ > 0) {
    --depth_;
  }
}

bool ExecuTorchFailure::note_line(const char* text, size_t length) {
  if (depth_ == 0 || text == nullptr) {
    return false;
  }
  std::string_view raw(text, std::min(length, kMaxLineBytes));
  while (!raw.empty() && (raw.back() == '\n' || raw.back() == ' ')) {
    raw.remove_suffix(1);
  }
  // ExecuTorch quotes names from the file as they are.
  std::string line = printable(raw);
  if (line.empty() || lines_.size() >= kMaxLines ||
      std::find(lines_.begin(), lines_.end(), line) != lines_.end()) {
    return true;
  }
  if (length > kMaxLineBytes) {
    line += "...";
  }
  lines_.push_back(std::move(line));
  return true;
}

}  // namespace tte
