#include "program/etdump_writer.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <executorch/devtools/etdump/etdump_flatcc.h>

namespace tte {

Status write_etdump_file(executorch::runtime::EventTracer* tracer, const std::string& path) {
  auto* etdump = dynamic_cast<executorch::etdump::ETDumpGen*>(tracer);
  if (etdump == nullptr) {
    return Status(TTE_ERROR_INVALID_STATE,
                  "ETDump is off for this program: open it with enable_etdump set");
  }
  const executorch::etdump::ETDumpResult result = etdump->get_etdump_data();
  if (result.buf == nullptr || result.size == 0) {
    return Status(TTE_ERROR_INVALID_STATE, "no ETDump events recorded yet: run a method first");
  }
  FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) {
    const std::string reason = std::strerror(errno);
    std::free(result.buf);
    return Status(TTE_ERROR_NOT_FOUND, "cannot write '" + path + "': " + reason);
  }
  const bool written = std::fwrite(result.buf, 1, result.size, file) == result.size;
  const bool closed = std::fclose(file) == 0;
  std::free(result.buf);
  if (!written || !closed) {
    return Status(TTE_ERROR_RUNTIME, "writing '" + path + "' failed");
  }
  return Status::Ok();
}

}  // namespace tte
