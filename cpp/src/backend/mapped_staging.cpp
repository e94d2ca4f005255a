#include "backend/mapped_staging.h"

#include <cstring>
#include <mutex>

#include "common/logging.h"

namespace tte {

bool mapped_staging_from_env(const char* value, bool integrated) {
  if (value == nullptr || *value == '\0') {
    return integrated;
  }
  if (std::strcmp(value, "1") == 0 || std::strcmp(value, "0") == 0) {
    return *value == '1';
  }
  static std::once_flag reported;
  std::call_once(reported, [&] {
    TTE_LOG(WARNING, "ignoring %s='%s' (expected 1 or 0)", kMappedStagingEnv, value);
  });
  return integrated;
}

}  // namespace tte
