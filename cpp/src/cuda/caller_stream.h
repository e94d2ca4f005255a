// The CUDA stream a caller asked this thread's delegate work to run on
// (tte_set_thread_stream). Thread-local, so concurrent callers with their
// own streams never see each other's.
#pragma once

namespace tte {

void set_caller_stream(void* stream);
void clear_caller_stream();
// True and *stream set when a caller stream is set on this thread.
bool caller_stream(void** stream);

}  // namespace tte
