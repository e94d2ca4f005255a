#include "common/executorch_failure.h"

#include "common/et_status.h"
#include "common/logging.h"

namespace tte {
namespace {
thread_local Status t_failure;
}  // namespace

executorch::runtime::Error report_to_executorch(const Status& failure) {
  if (failure.ok()) {
    return executorch::runtime::Error::Ok;
  }
  TTE_LOG(ERROR, "%s", failure.message().c_str());
  t_failure = failure;
  return to_et_error(failure.code());
}

const Status& executorch_failure() { return t_failure; }

void clear_executorch_failure() { t_failure = Status::Ok(); }

}  // namespace tte
