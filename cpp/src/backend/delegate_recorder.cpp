#include "backend/delegate_recorder.h"

#include "blob/blob_reader.h"

namespace tte {
namespace {
thread_local DelegateRecorder* g_current = nullptr;
}  // namespace

DelegateRecorder* DelegateRecorder::current() { return g_current; }

DelegateRecorder::Scope::Scope(DelegateRecorder* recorder) : previous_(g_current) {
  g_current = recorder;
}

DelegateRecorder::Scope::~Scope() { g_current = previous_; }

InitRecord::InitRecord(
    const executorch::runtime::BackendInitContext& context,
    executorch::runtime::ArrayRef<executorch::runtime::CompileSpec> compile_specs)
    : recorder_(DelegateRecorder::current()) {
  if (recorder_ == nullptr) {
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
  if (recorder_ != nullptr) {
    recorder_->add(std::move(record_));
  }
}

void InitRecord::set_blob(const DelegateBlob& blob) {
  if (recorder_ != nullptr) {
    record_.blob_json = describe_delegate_blob(blob);
  }
}

}  // namespace tte
