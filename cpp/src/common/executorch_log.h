// ExecuTorch's log, routed through this library: its emitter in ExecuTorch's
// platform table (PalImpl::emit_log_message, one per process, shared by the
// Program API and the stock executorch.runtime) is replaced by one that
//  - keeps the error lines logged inside a call the Program API made into
//    ExecuTorch (the call in progress, call_context.h), so their reason
//    reaches the caller's Status (executorch_failure.h);
//  - forwards every line to the plugin's log (logging.h, origin
//    "ExecuTorch"): debug and info lines at debug and info, error lines at
//    info when the call kept them (the Status says it), at error
//    otherwise (the stock runtime reports only a code), fatal lines at error.
// ExecuTorch's default printer and its Python extension's printer (which
// registers itself when executorch.runtime is imported) are replaced; an
// emitter anyone else installed is kept and called after the error lines are
// kept, instead of the plugin's log.
#pragma once

namespace tte {

// Installs the route, or installs it again where something replaced it
// since. Cheap when it is in place (one atomic load; a mutex only to
// install). Runs when the library loads; the Program API calls it before
// each call into ExecuTorch, the backend at each is_available, init and
// execute (so that the stock runtime's lines are routed whatever the import
// order).
void route_executorch_log();

}  // namespace tte
