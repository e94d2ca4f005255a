// Checks of a .ptd (flat_tensor) file, which ExecuTorch 1.5.1 reads with no
// flatbuffers Verifier at all: its header before more is read, and every
// table, field and list ExecuTorch reads, walked by hand (flat_table.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace tte {

// A .ptd (flat_tensor) file, which ExecuTorch 1.5.1 reads with no flatbuffers
// Verifier at all, dereferencing its lists, keys and tensor layouts: every
// table, field and list it reads must lie inside `data` (the first
// data_file_flatbuffer_extent bytes), and every key and layout be there.
// Keys of entries without a tensor layout (blobs, not tensors) are added to
// `keys_without_layout`, for check_external_tensors.
Status check_data_file_fields(const uint8_t* data, size_t size, const std::string& label,
                              std::vector<std::string>* keys_without_layout);
// A .ptd's first bytes (`head`, 64 or all of a shorter file): its header
// ("FH01" at byte 8), before more is read.
Status check_data_file_head(const uint8_t* head, size_t size, const std::string& label);
// Where ExecuTorch stops reading a .ptd's flatbuffer ("FH01" header at byte
// 8: flatbuffer_offset + flatbuffer_size), within `file_size`; 0 without the
// header.
uint64_t data_file_flatbuffer_extent(const uint8_t* head, size_t size, uint64_t file_size);

}  // namespace tte
