// Checks of a .pte's bytes that keep a damaged program from crashing the
// process or failing with a bare ExecuTorch code: its first bytes before
// anything larger is read, and the fields ExecuTorch dereferences (and the
// kernel calls that would abort or read a null tensor) before ExecuTorch
// reads them. The flatbuffer is walked by hand (flat_table.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace tte {

// ExecuTorch 1.5.1 verifies the flatbuffer, whose schema makes every field
// optional, then dereferences them (MethodMeta::num_inputs, uses_backend,
// BackendDelegate::Init) and aborts on an unknown tensor dtype
// (MethodMeta::input_tensor_meta); its kernels dereference a tensor that
// has no memory. Refuses a program that lacks what exir always writes, or
// whose kernels would meet such a tensor; `label` names it in the message.
Status check_required_fields(const uint8_t* data, size_t size, const std::string& label);

// The program's tensors that live in a .ptd (ExtraTensorInfo location
// EXTERNAL), by method: ExecuTorch asks the .ptd for their tensor layout.
struct ExternalTensor {
  std::string method;
  std::string key;
};
std::vector<ExternalTensor> external_tensors(const uint8_t* data, size_t size);
// The first bytes of a .pte (`head`, `size` of them: 64, or all a shorter
// file has), before anything larger is read or copied: ExecuTorch's
// identifier ("ET12" at byte 4) and an extended header that fits the file.
// A file of another kind is refused here whatever its size (ExecuTorch would
// read all of it first).
Status check_program_head(const uint8_t* head, size_t size, uint64_t file_size,
                          const std::string& label);

// Where the program's flatbuffer ends in a .pte whose first `size` bytes are
// `head` (at least 32 of them, or the whole file): the extended header's
// program_size ("eh00" at byte 8), else `file_size`. Nothing else of the
// header is read; ExecuTorch checks the rest.
uint64_t flatbuffer_extent(const uint8_t* head, size_t size, uint64_t file_size);

}  // namespace tte
