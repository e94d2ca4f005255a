// The C boundary: every function c_api.h exports runs its body through one
// of the three calls below, so no C++ exception crosses the C ABI. A body
// that throws becomes the function's failure: a TteStatus whose message
// names the function and what failed ("tte_program_run failed: out of host
// memory"), or, for a function that returns a value, its documented
// fallback (NULL, 0, an empty string).
//
// Test hook: with TORCH_TENSORRT_EXECUTORCH_TEST_C_BOUNDARY_THROW=1 in the
// environment when the library first answers a call, every guarded body
// throws before it runs. ctest `test_c_boundary` calls every exported
// function that way (and checks it called all that c_api.h declares), which
// shows that each one goes through this guard.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>

#include "common/logging.h"
#include "common/status.h"
#include "torch_tensorrt_executorch/c_api.h"

namespace tte::c_boundary {

inline constexpr char kTestThrowEnv[] = "TORCH_TENSORRT_EXECUTORCH_TEST_C_BOUNDARY_THROW";
inline constexpr char kTestThrowWhat[] = "an exception thrown by the C boundary's test hook";

// Whether the test hook is on; read once per process.
inline bool throw_for_test() noexcept {
  static const bool on = [] {
    const char* value = std::getenv(kTestThrowEnv);
    return value != nullptr && std::strcmp(value, "1") == 0;
  }();
  return on;
}

// The failure an exception stands for, without allocating (the exception
// may be an allocation failure): "<function> failed: <what>".
inline Status exception_status(const char* function, std::exception_ptr thrown) noexcept {
  TteStatus code = TTE_ERROR_INTERNAL;
  char text[512];
  try {
    std::rethrow_exception(std::move(thrown));
  } catch (const std::bad_alloc&) {
    code = TTE_ERROR_HOST_OUT_OF_MEMORY;
    std::snprintf(text, sizeof(text), "%s failed: out of host memory", function);
  } catch (const std::exception& e) {
    std::snprintf(text, sizeof(text), "%s failed: %s", function, e.what());
  } catch (...) {
    std::snprintf(text, sizeof(text), "%s failed: an exception that is not a std::exception",
                  function);
  }
  try {
    return Status(code, text);
  } catch (...) {
    return Status(code, std::string());  // no memory for the text: the code alone
  }
}

// Runs `body` (returning a Status); an exception becomes the Status above.
template <typename Body>
Status guarded(const char* function, Body&& body) noexcept {
  try {
    if (throw_for_test()) throw std::runtime_error(kTestThrowWhat);
    return body();
  } catch (...) {
    return exception_status(function, std::current_exception());
  }
}

// For a function returning TteStatus: the body's Status, copied into `error`.
template <typename Body>
TteStatus status_call(const char* function, TteError* error, Body&& body) noexcept {
  return to_c_status(guarded(function, std::forward<Body>(body)), error);
}

// A function with no status to fill logs what failed (when it can).
inline void log_exception(const char* function, std::exception_ptr thrown) noexcept {
  const Status status = exception_status(function, std::move(thrown));
  try {
    TTE_LOG(ERROR, "%s", status.message().c_str());
  } catch (...) {
  }
}

// For a function returning a value: the body's, or `fallback` if it threw.
template <typename T, typename Body>
T value_call(const char* function, T fallback, Body&& body) noexcept {
  try {
    if (throw_for_test()) throw std::runtime_error(kTestThrowWhat);
    return body();
  } catch (...) {
    log_exception(function, std::current_exception());
    return fallback;
  }
}

// For a function returning nothing: a throw ends the body and is logged.
template <typename Body>
void void_call(const char* function, Body&& body) noexcept {
  value_call(function, 0, [&] {
    body();
    return 0;
  });
}

}  // namespace tte::c_boundary
