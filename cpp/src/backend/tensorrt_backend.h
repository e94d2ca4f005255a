// The `TensorRTBackend` delegate as ExecuTorch sees it: thin glue from the
// BackendInterface to TensorRTDelegate, registered from a static initializer
// when the library loads. A failure's Status crosses back to ExecuTorch as
// an Error through report_to_executorch (common/call_context.h), into the
// call in progress. Registration can fail quietly (the name is taken, or
// the registry is full); the result is kept and checked at every use.
//
// With load_options.h, this header is what the Program API (program/) may
// use of the backend layer; the rest of backend/ is its own business
// (scripts/ci/check-layers.py holds program/ to it).
#pragma once

#include <string>

#include <executorch/runtime/backend/interface.h>

namespace tte {

class TensorRTBackend final : public executorch::runtime::BackendInterface {
 public:
  bool is_available() const override;
  executorch::runtime::Result<executorch::runtime::DelegateHandle*> init(
      executorch::runtime::BackendInitContext& context,
      executorch::runtime::FreeableBuffer* processed,
      executorch::runtime::ArrayRef<executorch::runtime::CompileSpec> compile_specs) const override;
  executorch::runtime::Error execute(
      executorch::runtime::BackendExecutionContext& context,
      executorch::runtime::DelegateHandle* handle,
      executorch::runtime::Span<executorch::runtime::EValue*> args) const override;
  void destroy(executorch::runtime::DelegateHandle* handle) const override;
};

// This library's backend instance.
const TensorRTBackend& tensorrt_backend();

// What register_backend returned at load.
executorch::runtime::Error registration_result();
// "" when registration succeeded, else one line saying why it did not.
std::string registration_problem();
// Whether the registry's `TensorRTBackend` is ours.
bool owns_registration();
// Path of the shared object whose backend owns the name, or "" if none.
std::string registration_owner_path();

// "" when a program's TensorRTBackend delegates can load here, else why not,
// one clause: the registry's TensorRTBackend is not this library's, or no
// engine provider is registered. For a failed method load's message.
std::string backend_unavailable_reason();

}  // namespace tte
