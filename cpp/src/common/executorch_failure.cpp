#include "common/executorch_failure.h"

#include <algorithm>

#include "common/et_status.h"
#include "common/logging.h"
#include "common/text.h"

namespace tte {
namespace {

// ExecuTorch logs the cause first and then each caller on the way out
// ("Init failed for backend ...", "Failed to load method ..."): the first
// lines are the ones worth keeping, and a message has room for a few.
constexpr size_t kMaxLines = 4;
constexpr size_t kMaxLineBytes = 240;

struct ThreadRecord {
  int depth = 0;
  Status reported;
  std::vector<std::string> lines;
};

ThreadRecord& record() {
  thread_local ThreadRecord value;
  return value;
}

}  // namespace

executorch::runtime::Error report_to_executorch(const Status& failure) {
  if (failure.ok()) {
    return executorch::runtime::Error::Ok;
  }
  ThreadRecord& here = record();
  if (here.depth > 0) {
    TTE_LOG(INFO, "%s", failure.message().c_str());
  } else {
    TTE_LOG(ERROR, "%s", failure.message().c_str());
  }
  here.reported = failure;
  return to_et_error(failure.code());
}

bool note_executorch_error_line(const char* text, size_t length) {
  ThreadRecord& here = record();
  if (here.depth == 0 || text == nullptr) {
    return false;
  }
  std::string_view raw(text, std::min(length, kMaxLineBytes));
  while (!raw.empty() && (raw.back() == '\n' || raw.back() == ' ')) {
    raw.remove_suffix(1);
  }
  // ExecuTorch quotes names from the file as they are.
  std::string line = printable(raw);
  if (line.empty() || here.lines.size() >= kMaxLines ||
      std::find(here.lines.begin(), here.lines.end(), line) != here.lines.end()) {
    return true;
  }
  if (length > kMaxLineBytes) {
    line += "...";
  }
  here.lines.push_back(std::move(line));
  return true;
}

bool in_executorch_call() { return record().depth > 0; }

ExecuTorchCall::ExecuTorchCall() {
  ThreadRecord& here = record();
  outer_ = here.depth == 0;
  if (outer_) {
    here.reported = Status::Ok();
    here.lines.clear();
  }
  ++here.depth;
}

ExecuTorchCall::~ExecuTorchCall() { --record().depth; }

const Status& ExecuTorchCall::reported() const { return record().reported; }

const std::vector<std::string>& ExecuTorchCall::log_lines() const { return record().lines; }

}  // namespace tte
