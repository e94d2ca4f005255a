// Checks that keep a damaged or unrunnable .pte from crashing the process or
// failing with a bare ExecuTorch code: the program's required fields, read
// from the flatbuffer before ExecuTorch dereferences them, and a method's
// I/O entries and planned memory, before Module loads the method.
//
// The field check walks the flatbuffer by hand (FlatTable): the executorch
// wheel ships program.fbs and flatc but neither the generated C++ header nor
// the flatbuffers C++ headers it needs, so generated accessors and the
// flatbuffers Verifier would be a new build dependency pinned to flatc's
// version. The walker reads only the fields listed below, each offset checked
// against the buffer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include <executorch/runtime/executor/method_meta.h>

#include "common/status.h"

namespace tte {

// ExecuTorch 1.5.1 verifies the flatbuffer, whose schema makes every field
// optional, then dereferences them (MethodMeta::num_inputs, uses_backend,
// BackendDelegate::Init) and aborts on an unknown tensor dtype
// (MethodMeta::input_tensor_meta). Refuses a program that lacks what exir
// always writes; `label` names it in the message.
Status check_required_fields(const uint8_t* data, size_t size, const std::string& label);

// Before Module::load_method: every I/O entry of `meta` readable (Method
// aborts on one past its value table), host arenas this machine can hold,
// and device-planned arenas with a CUDA device and a registered
// DeviceAllocator to give them.
Status check_method_before_load(const executorch::runtime::MethodMeta& meta,
                                const std::string& method);

}  // namespace tte
