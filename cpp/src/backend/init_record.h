// One TensorRTBackend delegate's record (common/delegate_record.h), added to
// its call's records however init ends, with the reason when it failed.
// Only a call that asked for records (CallContext::delegate_records: the
// Program API loading a method) gets one; the stock runtime's loads, which
// come with no call, record nothing.
#pragma once

#include <string>

#include <executorch/runtime/backend/interface.h>

#include "common/call_context.h"
#include "common/delegate_record.h"
#include "common/status.h"

namespace tte {

struct DelegateBlob;

class InitRecord {
 public:
  InitRecord(CallContext* call, const executorch::runtime::BackendInitContext& context,
             executorch::runtime::ArrayRef<executorch::runtime::CompileSpec> compile_specs);
  ~InitRecord();
  InitRecord(const InitRecord&) = delete;
  InitRecord& operator=(const InitRecord&) = delete;

  void set_blob(const DelegateBlob& blob);
  void set_provider(const std::string& name) { record_.provider = name; }
  void set_result(const Status& status) { record_.error = status.message(); }

 private:
  std::vector<DelegateRecord>* records_;
  DelegateRecord record_;
};

}  // namespace tte
