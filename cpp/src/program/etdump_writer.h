// tte_program_write_etdump: the events a program's ETDumpGen recorded, to a
// file; the tracer starts a new recording afterwards.
#pragma once

#include <string>

#include <executorch/runtime/core/event_tracer.h>

#include "common/status.h"

namespace tte {

// `tracer` is the module's event tracer (NULL when ETDump is off).
Status write_etdump_file(executorch::runtime::EventTracer* tracer, const std::string& path);

}  // namespace tte
