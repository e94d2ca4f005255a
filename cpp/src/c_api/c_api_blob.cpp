// tte_blob_describe_json: the blob reader for `inspect` and other callers
// that hold a delegate blob. A blob that does not parse is an answer for the
// caller, not an event for the log, so errors are filled in, not logged.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "blob/blob_reader.h"
#include "c_api/c_boundary.h"
#include "common/status.h"
#include "torch_tensorrt_executorch/c_api.h"

namespace {

tte::Status failure(TteStatus status, const std::string& message) {
  return tte::Status(status, "tte_blob_describe_json: " + message);
}

}  // namespace

extern "C" TTE_API TteStatus tte_blob_describe_json(const void* data, uint64_t size,
                                                    char** out_json, TteError* error) {
  return tte::c_boundary::status_call("tte_blob_describe_json", error, [&] {
    if (out_json == nullptr) return failure(TTE_ERROR_INVALID_ARGUMENT, "out_json is NULL");
    *out_json = nullptr;
    if (data == nullptr && size != 0) {
      return failure(TTE_ERROR_INVALID_ARGUMENT,
                     "data is NULL but size is " + std::to_string(size));
    }
    if (static_cast<std::uint64_t>(static_cast<std::size_t>(size)) != size) {
      return failure(
          TTE_ERROR_INVALID_ARGUMENT,
          "a " + std::to_string(size) + "-byte blob does not fit in this process's memory");
    }
    static const std::uint8_t kNoBytes = 0;
    const tte::ParseResult<tte::DelegateBlob> blob = tte::parse_delegate_blob(
        data != nullptr ? data : &kNoBytes, static_cast<std::size_t>(size));
    if (!blob) {
      return tte::Status(TTE_ERROR_INVALID_PROGRAM, blob.error());
    }
    const std::string json = tte::describe_delegate_blob(blob.value());
    // malloc, so that tte_free_string (free) releases it.
    char* copy = static_cast<char*>(std::malloc(json.size() + 1));
    if (copy == nullptr) return failure(TTE_ERROR_HOST_OUT_OF_MEMORY, "out of host memory");
    std::memcpy(copy, json.c_str(), json.size() + 1);
    *out_json = copy;
    return tte::Status::Ok();
  });
}
