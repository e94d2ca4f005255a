// The caller-stream group of c_api.h, over the thread's caller stream.
#include "c_api/c_boundary.h"
#include "cuda/caller_stream.h"
#include "torch_tensorrt_executorch/c_api.h"

extern "C" {

TTE_API void tte_set_thread_stream(void* stream) {
  tte::c_boundary::void_call("tte_set_thread_stream", [stream] { tte::set_caller_stream(stream); });
}

TTE_API void tte_clear_thread_stream(void) {
  tte::c_boundary::void_call("tte_clear_thread_stream", [] { tte::clear_caller_stream(); });
}

TTE_API int32_t tte_get_thread_stream(void** out_stream) {
  return tte::c_boundary::value_call("tte_get_thread_stream", int32_t{0}, [out_stream] {
    return tte::caller_stream(out_stream) ? int32_t{1} : int32_t{0};
  });
}

}  // extern "C"
