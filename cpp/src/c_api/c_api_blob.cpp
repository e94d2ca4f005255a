// tte_blob_describe_json: the blob reader for `inspect` and other callers
// that hold a delegate blob. A blob that does not parse is an answer for the
// caller, not an event for the log, so errors are filled in, not logged.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <string>

#include "blob/blob_reader.h"
#include "common/status.h"
#include "torch_tensorrt_executorch/c_api.h"

namespace {

TteStatus fail(TteError* error, TteStatus status, const std::string& message) {
  return tte::to_c_status(tte::Status(status, "tte_blob_describe_json: " + message), error);
}

}  // namespace

extern "C" TTE_API TteStatus tte_blob_describe_json(const void* data, uint64_t size, char** out_json,
                                                    TteError* error) {
  if (out_json == nullptr) return fail(error, TTE_ERROR_INVALID_ARGUMENT, "out_json is NULL");
  *out_json = nullptr;
  if (data == nullptr && size != 0) {
    return fail(error, TTE_ERROR_INVALID_ARGUMENT, "data is NULL but size is " + std::to_string(size));
  }
  if (static_cast<std::uint64_t>(static_cast<std::size_t>(size)) != size) {
    return fail(error, TTE_ERROR_INVALID_ARGUMENT,
                "a " + std::to_string(size) + "-byte blob does not fit in this process's memory");
  }
  try {
    static const std::uint8_t kNoBytes = 0;
    const tte::ParseResult<tte::DelegateBlob> blob =
        tte::parse_delegate_blob(data != nullptr ? data : &kNoBytes, static_cast<std::size_t>(size));
    if (!blob) {
      return tte::to_c_status(tte::Status(TTE_ERROR_INVALID_PROGRAM, blob.error()), error);
    }
    const std::string json = tte::describe_delegate_blob(blob.value());
    // malloc, so that tte_free_string (free) releases it.
    char* copy = static_cast<char*>(std::malloc(json.size() + 1));
    if (copy == nullptr) return fail(error, TTE_ERROR_HOST_OUT_OF_MEMORY, "out of host memory");
    std::memcpy(copy, json.c_str(), json.size() + 1);
    *out_json = copy;
    return TTE_OK;
  } catch (const std::bad_alloc&) {
    return fail(error, TTE_ERROR_HOST_OUT_OF_MEMORY, "out of host memory");
  } catch (const std::exception& e) {
    return fail(error, TTE_ERROR_INTERNAL, e.what());
  }
}
