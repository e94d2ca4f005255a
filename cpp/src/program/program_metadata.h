// What a program's methods take and return, as the C API reports it
// (TteValueInfo, tte_program_describe_json), and the labels messages use.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <executorch/runtime/executor/method.h>
#include <executorch/runtime/executor/method_meta.h>

#include "common/status.h"
#include "program/program_module.h"
#include "torch_tensorrt_executorch/c_api.h"

namespace tte {

// "input 0", "output 1 ('y')".
std::string io_label(bool is_input, size_t index, const std::string& name);
// "tensor", "int", ... for ExecuTorch's value tags and the C API's.
const char* tag_name(executorch::runtime::Tag tag);
const char* value_tag_name(TteValueTag tag);
TteValueTag value_tag(executorch::runtime::Tag tag);

// Metadata from the program; device type and index from `loaded` when the
// method is loaded (else -1).
Status fill_value_info(const executorch::runtime::MethodMeta& meta,
                       executorch::runtime::Method* loaded, bool is_input, size_t index,
                       TteValueInfo* info);

// tte_program_describe_json's document: every method's I/O, backends and
// the TensorRTBackend delegates recorded when it loaded.
Status describe_program_json(ProgramModule& module, const std::vector<std::string>& method_names,
                             const std::map<std::string, std::unique_ptr<MethodState>>& methods,
                             bool etdump_enabled, std::string* json);

}  // namespace tte
