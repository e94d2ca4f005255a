// The load options of c_api.h's program group: the plugin's table of them
// (backend/load_options.h), row by row.
#include <cstddef>
#include <cstring>
#include <string>

#include "backend/load_options.h"
#include "c_api/c_boundary.h"
#include "common/status.h"
#include "torch_tensorrt_executorch/c_api.h"

extern "C" {

using tte::c_boundary::status_call;
using tte::c_boundary::value_call;

TTE_API size_t tte_num_load_options(void) {
  return value_call("tte_num_load_options", size_t{0},
                    [] { return tte::load_option_table().size(); });
}

TTE_API TteStatus tte_load_option_info(size_t index, TteLoadOptionInfo* out_info, TteError* error) {
  return status_call("tte_load_option_info", error, [&] {
    if (out_info == nullptr || out_info->struct_size < offsetof(TteLoadOptionInfo, name)) {
      return tte::Status(TTE_ERROR_INVALID_ARGUMENT,
                         "tte_load_option_info needs a TteLoadOptionInfo with its struct_size set");
    }
    const auto& table = tte::load_option_table();
    if (index >= table.size()) {
      return tte::Status(TTE_ERROR_INVALID_ARGUMENT, "load option " + std::to_string(index) +
                                                         " does not exist (there are " +
                                                         std::to_string(table.size()) + ")");
    }
    const tte::LoadOptionSpec& row = table[index];
    TteLoadOptionInfo full{};
    full.struct_size = sizeof(TteLoadOptionInfo);
    full.name = row.name;
    full.accepted_types = row.accepted_types;
    full.type = row.type;
    full.must_be = row.must_be;
    full.fallback = row.fallback;
    full.doc = row.doc;
    full.program_only = row.read == nullptr ? 1 : 0;
    // Only what the caller's (possibly older) struct has room for.
    const uint32_t caller_size = out_info->struct_size;
    std::memcpy(out_info, &full, caller_size < sizeof(full) ? caller_size : sizeof(full));
    out_info->struct_size = caller_size;
    return tte::Status::Ok();
  });
}

}  // extern "C"
