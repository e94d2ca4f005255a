// The caller-stream group of c_api.h, over the thread's caller stream.
#include "cuda/caller_stream.h"
#include "torch_tensorrt_executorch/c_api.h"

extern "C" {

TTE_API void tte_set_thread_stream(void* stream) { tte::set_caller_stream(stream); }

TTE_API void tte_clear_thread_stream(void) { tte::clear_caller_stream(); }

TTE_API int32_t tte_get_thread_stream(void** out_stream) {
  return tte::caller_stream(out_stream) ? 1 : 0;
}

}  // extern "C"
