#include "backend/tensorrt_backend.h"

#include <dlfcn.h>

#include "backend/provider_registry.h"
#include "backend/tensorrt_delegate.h"
#include "common/call_context.h"
#include "common/executorch_log.h"
#include "common/logging.h"
#include "cuda/cuda_allocator.h"
#include "torch_tensorrt_executorch/c_api.h"

namespace tte {
namespace {

using executorch::runtime::ArrayRef;
using executorch::runtime::Backend;
using executorch::runtime::BackendExecutionContext;
using executorch::runtime::BackendInitContext;
using executorch::runtime::CompileSpec;
using executorch::runtime::DelegateHandle;
using executorch::runtime::Error;
using executorch::runtime::EValue;
using executorch::runtime::FreeableBuffer;
using executorch::runtime::Result;
using executorch::runtime::Span;

// Both must outlive every use: the registry stores the pointers.
TensorRTBackend g_backend;
const Backend g_registration{TTE_BACKEND_NAME, &g_backend};

Error register_at_load() {
  Error result = executorch::runtime::register_backend(g_registration);
  // After our registration, so that a failed one is already known to the
  // allocator policy's log lines.
  install_cuda_allocator();
  // The native TensorRT provider, when installed beside the plugin, so that
  // every process that loads the plugin (the stock runtime, the Program API,
  // tte-run) has it. It starts TensorRT only at its first deserialize.
  ProviderRegistry::instance().load_bundled_providers();
  return result;
}

const Error g_registration_result = register_at_load();

std::string path_of(const void* address) {
  Dl_info info{};
  if (address == nullptr || dladdr(address, &info) == 0 || info.dli_fname == nullptr) {
    return "";
  }
  return info.dli_fname;
}

// Logs the registration problem once per process, then returns it each time.
Error check_registration() {
  if (g_registration_result == Error::Ok) {
    return Error::Ok;
  }
  static const bool logged = [] {
    TTE_LOG(ERROR, "%s", registration_problem().c_str());
    return true;
  }();
  (void)logged;
  return g_registration_result;
}

}  // namespace

const TensorRTBackend& tensorrt_backend() { return g_backend; }

Error registration_result() { return g_registration_result; }

bool owns_registration() {
  return executorch::runtime::get_backend_class(TTE_BACKEND_NAME) == &g_backend;
}

std::string registration_owner_path() {
  auto* owner = executorch::runtime::get_backend_class(TTE_BACKEND_NAME);
  if (owner == nullptr) {
    return "";
  }
  // The vtable lives in the library that defines the backend, wherever the
  // instance itself was allocated.
  std::string path = path_of(*reinterpret_cast<void* const*>(owner));
  return path.empty() ? path_of(owner) : path;
}

std::string registration_problem() {
  switch (g_registration_result) {
    case Error::Ok:
      return "";
    case Error::InvalidArgument: {
      std::string owner = registration_owner_path();
      return "TensorRTBackend registration failed: another library registered the name "
             "'" TTE_BACKEND_NAME "' first" +
             (owner.empty() ? std::string() : " (" + owner + ")") +
             "; load only one TensorRT delegate (is Torch-TensorRT's own ExecuTorch runtime "
             "imported too?)";
    }
    case Error::Internal:
      return "TensorRTBackend registration failed: ExecuTorch's backend registry is full";
    default:
      return "TensorRTBackend registration failed with ExecuTorch error " +
             std::to_string(static_cast<int>(g_registration_result));
  }
}

bool TensorRTBackend::is_available() const {
  // ExecuTorch asks before each init: the route (see init) is in place for
  // every line it logs about this delegate.
  route_executorch_log();
  return check_registration() == Error::Ok;
}

Result<DelegateHandle*> TensorRTBackend::init(BackendInitContext& context,
                                              FreeableBuffer* processed,
                                              ArrayRef<CompileSpec> compile_specs) const {
  // ExecuTorch logs why an init or execute failed after it returns; a
  // printer installed since the library loaded (executorch.runtime's, when
  // imported after this package) would print it raw. One atomic load when
  // the route is in place.
  route_executorch_log();
  // Reached only through our own instance, but the check keeps direct
  // callers (tests, another registry) honest too.
  Error registered = check_registration();
  if (registered != Error::Ok) {
    return registered;
  }
  // The Program API's load in progress, or none (the stock runtime).
  CallContext* call = CallInProgress::current();
  std::unique_ptr<TensorRTDelegate> delegate;
  const Status status =
      TensorRTDelegate::create(call, context, processed, compile_specs, &delegate);
  if (!status.ok()) {
    return report_to_executorch(call, status);
  }
  return static_cast<DelegateHandle*>(delegate.release());
}

Error TensorRTBackend::execute(BackendExecutionContext& /*context*/, DelegateHandle* handle,
                               Span<EValue*> args) const {
  route_executorch_log();
  // The Program API's run in progress; under the stock runtime, the call
  // begins here (with the thread's stream setting) and ends with this one
  // delegate.
  CallContext* call = CallInProgress::current();
  if (handle == nullptr) {
    report_to_executorch(
        call, Status(TTE_ERROR_INVALID_ARGUMENT, "TensorRTBackend execute got no delegate handle"));
    return Error::DelegateInvalidHandle;
  }
  auto* delegate = static_cast<TensorRTDelegate*>(handle);
  if (call != nullptr) {
    return report_to_executorch(call, delegate->execute(*call, args));
  }
  CallContext own_call;
  return report_to_executorch(&own_call, delegate->execute(own_call, args));
}

void TensorRTBackend::destroy(DelegateHandle* handle) const {
  delete static_cast<TensorRTDelegate*>(handle);
}

std::string backend_unavailable_reason() {
  if (executorch::runtime::get_backend_class(TTE_BACKEND_NAME) == nullptr) {
    return "backend " TTE_BACKEND_NAME " is not registered";
  }
  if (ProviderRegistry::instance().size() == 0) {
    return "no engine provider is registered (load one with tte_load_engine_provider_library, "
           "then open the program again)";
  }
  return "";
}

}  // namespace tte
