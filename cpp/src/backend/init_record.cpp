#include "backend/init_record.h"

#include <utility>

#include "blob/blob_reader.h"

namespace tte {

InitRecord::InitRecord(
    CallContext* call, const executorch::runtime::BackendInitContext& context,
    executorch::runtime::ArrayRef<executorch::runtime::CompileSpec> compile_specs)
    : records_(call != nullptr ? call->delegate_records : nullptr) {
  if (records_ == nullptr) {
    return;
  }
  const char* method = context.get_method_name();
  record_.method = method != nullptr ? method : "";
  for (const executorch::runtime::CompileSpec& spec : compile_specs) {
    record_.compile_specs.emplace_back(
        spec.key != nullptr ? spec.key : "",
        std::string(static_cast<const char*>(spec.value.buffer), spec.value.nbytes));
  }
}

InitRecord::~InitRecord() {
  if (records_ != nullptr) {
    records_->push_back(std::move(record_));
  }
}

void InitRecord::set_blob(const DelegateBlob& blob) {
  if (records_ != nullptr) {
    record_.blob_json = describe_delegate_blob(blob);
  }
}

}  // namespace tte
