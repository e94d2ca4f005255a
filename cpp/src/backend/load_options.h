// What TensorRTBackend accepts at load time: runtime specs (load options,
// which win) and the weight_streaming_budget compile spec.
//
// The load options are one table (load_option_table(), in load_options.cpp):
// name, the value types taken, what a value must be, the default, one line of
// documentation, and the reader that puts a value into LoadOptions. Everything
// else derives from it: the parser below, the unknown-option message, the C
// API's tte_load_option_info (the Python package's load_options(), the CLI's
// --option parsing and help, tte-run's help), and the documentation's table,
// which a test holds to it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <executorch/runtime/backend/interface.h>

#include "common/status.h"

namespace tte {

// The load option that turns CUDA graphs on (the Program API reads it too:
// a graph's replay needs the same output addresses from call to call).
constexpr const char kCudaGraphsOption[] = "cuda_graphs";
// The Program API's option: runs of one method at once (program/program.h).
constexpr const char kMaxConcurrentRunsOption[] = "max_concurrent_runs";
constexpr int kDefaultMaxConcurrentRuns = 4;
constexpr int kMaxMaxConcurrentRuns = 1024;

struct LoadOptions {
  std::string provider;  // "" = the first that accepts
  bool cuda_graphs = false;
  bool has_weight_streaming_budget = false;
  int64_t weight_streaming_budget = 0;
  bool engine_host_code_allowed = true;
  bool has_dla_core = false;
  int32_t dla_core = 0;
  std::vector<std::string> plugin_libraries;
  std::string runtime_cache_path;  // "" = none
  bool share_device_memory = true;
  bool share_engines = true;
};

// One row of the table.
struct LoadOptionSpec {
  const char* name;
  // The ExecuTorch value types taken: bits 1 << TTE_OPTION_BOOL, _INT, _STRING.
  uint32_t accepted_types;
  const char* type;      // for tables and help: "bool", "int", "str", "int or decimal str"
  const char* must_be;   // the refusal's words: "load option 'NAME' must be <must_be>"
  const char* fallback;  // what applies when the option is not given, for people
  const char* doc;       // one sentence
  // Puts the value into LoadOptions (refusing it in this row's words);
  // nullptr for an option the Program API reads (program_only:
  // TensorRTBackend ignores it).
  Status (*read)(const LoadOptionSpec& row, const executorch::runtime::BackendOption& option,
                 LoadOptions* out);
};

// Every load option, in the documentation's order.
const std::vector<LoadOptionSpec>& load_option_table();
// The row named `name`, nullptr when there is none.
const LoadOptionSpec* find_load_option(const char* name);

// Unknown load options are logged and ignored; malformed ones refused, and
// so is a program with two weight_streaming_budget compile specs.
Status read_load_options(
    const executorch::runtime::BackendInitContext& context,
    executorch::runtime::ArrayRef<executorch::runtime::CompileSpec> compile_specs,
    LoadOptions* out);

}  // namespace tte
