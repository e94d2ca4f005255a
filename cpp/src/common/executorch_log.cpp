#include "common/executorch_log.h"

#include <dlfcn.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <string>

#include <executorch/runtime/platform/platform.h>

#include "common/call_context.h"
#include "common/logging.h"

namespace tte {
namespace {

namespace et = executorch::runtime;

// An emitter someone else installed on purpose, called instead of the
// plugin's log.
std::atomic<pal_emit_log_message_method> g_chained{nullptr};

TteLogLevel forwarded_level(et_pal_log_level_t level, bool kept) {
  switch (level) {
    case kDebug:
      return TTE_LOG_DEBUG;
    case kError:
      return kept ? TTE_LOG_INFO : TTE_LOG_ERROR;
    case kFatal:
      return TTE_LOG_ERROR;
    default:
      return TTE_LOG_INFO;
  }
}

void emit_through_plugin(et_timestamp_t timestamp, et_pal_log_level_t level, const char* filename,
                         const char* function, size_t line, const char* message, size_t length) {
  bool kept = false;
  if (level == kError || level == kFatal) {
    // ExecuTorch logs from inside a call the Program API made into it; the
    // call reaches here only through the slot (call_context.h).
    CallContext* call = CallInProgress::current();
    kept = call != nullptr && call->failure.note_line(message, length);
  }
  const pal_emit_log_message_method chained = g_chained.load(std::memory_order_acquire);
  if (chained != nullptr) {
    chained(timestamp, level, filename, function, line, message, length);
    return;
  }
  const TteLogLevel forwarded = forwarded_level(level, kept);
  if (log_enabled(forwarded) && message != nullptr) {
    log_line(forwarded, "ExecuTorch", filename, line, std::string(message, length).c_str());
  }
}

// ExecuTorch's default printer (in libexecutorch.so) or its Python
// extension's (executorch/extension/pybindings/_C*.so): printers of the
// same lines, which this route replaces rather than calls.
bool is_executorch_printer(pal_emit_log_message_method emitter) {
  if (emitter == nullptr || emitter == &et_pal_emit_log_message) {
    return true;
  }
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(emitter), &info) == 0 || info.dli_fname == nullptr) {
    return false;
  }
  const std::string path = info.dli_fname;
  return path.find("/executorch/extension/pybindings/") != std::string::npos ||
         path.find("/libexecutorch.so") != std::string::npos;
}

// The live table behind get_pal_impl(). Writing its emitter slot, instead of
// calling register_pal, matters: register_pal logs an error line through the
// emitter it replaces whenever any PAL was registered before (ExecuTorch's
// Python extension registers one at import), which is the raw line this
// route exists to prevent. The table is a mutable object; only the accessor
// is const.
pal_emit_log_message_method* emitter_slot() {
  return &const_cast<et::PalImpl*>(et::get_pal_impl())->emit_log_message;
}

const bool kRoutedAtLoad = (route_executorch_log(), true);

}  // namespace

void route_executorch_log() {
  (void)kRoutedAtLoad;
  pal_emit_log_message_method* slot = emitter_slot();
  if (__atomic_load_n(slot, __ATOMIC_ACQUIRE) == &emit_through_plugin) {
    return;
  }
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  const pal_emit_log_message_method current = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
  if (current == &emit_through_plugin) {
    return;
  }
  g_chained.store(is_executorch_printer(current) ? nullptr : current, std::memory_order_release);
  __atomic_store_n(slot, &emit_through_plugin, __ATOMIC_RELEASE);
}

}  // namespace tte
