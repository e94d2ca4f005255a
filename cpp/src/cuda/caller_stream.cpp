#include "cuda/caller_stream.h"

namespace tte {
namespace {
// A set flag rather than a non-null stream: the legacy default stream is
// NULL and is a legitimate choice.
thread_local bool t_is_set = false;
thread_local void* t_stream = nullptr;
}  // namespace

void set_caller_stream(void* stream) {
  t_stream = stream;
  t_is_set = true;
}

void clear_caller_stream() {
  t_stream = nullptr;
  t_is_set = false;
}

bool caller_stream(void** stream) {
  if (t_is_set && stream != nullptr) {
    *stream = t_stream;
  }
  return t_is_set;
}

}  // namespace tte
