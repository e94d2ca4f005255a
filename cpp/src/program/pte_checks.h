// Checks that keep a damaged or unrunnable .pte or .ptd from crashing the
// process or failing with a bare ExecuTorch code: the program's required
// fields and a data file's structure, read from the flatbuffers before
// ExecuTorch dereferences them, and a method's I/O entries and planned
// memory, before Module loads the method.
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
#include <vector>

#include <executorch/runtime/executor/method_meta.h>

#include "common/status.h"

namespace tte {

// ExecuTorch 1.5.1 verifies the flatbuffer, whose schema makes every field
// optional, then dereferences them (MethodMeta::num_inputs, uses_backend,
// BackendDelegate::Init) and aborts on an unknown tensor dtype
// (MethodMeta::input_tensor_meta); its kernels dereference a tensor that
// has no memory. Refuses a program that lacks what exir always writes, or
// whose kernels would meet such a tensor; `label` names it in the message.
Status check_required_fields(const uint8_t* data, size_t size, const std::string& label);

// Before Module::load_method: every I/O entry of `meta` readable (Method
// aborts on one past its value table); host arenas within
// `max_planned_memory` bytes (0: within available_host_memory()); and
// device-planned arenas with a CUDA device, a registered DeviceAllocator and
// the free device memory to give them.
Status check_method_before_load(const executorch::runtime::MethodMeta& meta,
                                const std::string& method, uint64_t max_planned_memory);

// A .ptd (flat_tensor) file, which ExecuTorch 1.5.1 reads with no flatbuffers
// Verifier at all, dereferencing its lists, keys and tensor layouts: every
// table, field and list it reads must lie inside `data` (the first
// data_file_flatbuffer_extent bytes), and every key and layout be there.
// Keys of entries without a tensor layout (blobs, not tensors) are added to
// `keys_without_layout`, for check_external_tensors.
Status check_data_file_fields(const uint8_t* data, size_t size, const std::string& label,
                              std::vector<std::string>* keys_without_layout);
// The program's tensors that live in a .ptd (ExtraTensorInfo location
// EXTERNAL), by method: ExecuTorch asks the .ptd for their tensor layout.
struct ExternalTensor {
  std::string method;
  std::string key;
};
std::vector<ExternalTensor> external_tensors(const uint8_t* data, size_t size);
// A .ptd's first bytes (`head`, 64 or all of a shorter file): its header
// ("FH01" at byte 8), before more is read.
Status check_data_file_head(const uint8_t* head, size_t size, const std::string& label);
// Where ExecuTorch stops reading a .ptd's flatbuffer ("FH01" header at byte
// 8: flatbuffer_offset + flatbuffer_size), within `file_size`; 0 without the
// header.
uint64_t data_file_flatbuffer_extent(const uint8_t* head, size_t size, uint64_t file_size);

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
