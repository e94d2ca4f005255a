// The caller-stream group of c_api.h: the stream a caller sets for its
// thread's calls (call_context.h; a call copies it when it begins).
#include "c_api/c_boundary.h"
#include "common/call_context.h"
#include "torch_tensorrt_executorch/c_api.h"

extern "C" {

TTE_API void tte_set_thread_stream(void* stream) {
  tte::c_boundary::void_call("tte_set_thread_stream",
                             [stream] { tte::set_thread_stream_setting(stream); });
}

TTE_API void tte_clear_thread_stream(void) {
  tte::c_boundary::void_call("tte_clear_thread_stream", [] { tte::clear_thread_stream_setting(); });
}

TTE_API int32_t tte_get_thread_stream(void** out_stream) {
  return tte::c_boundary::value_call("tte_get_thread_stream", int32_t{0}, [out_stream] {
    return tte::thread_stream_setting(out_stream) ? int32_t{1} : int32_t{0};
  });
}

}  // extern "C"
