#include "program/ptd_file_checks.h"

#include <cstring>
#include <optional>

#include <executorch/runtime/core/exec_aten/util/scalar_type_util.h>

#include "common/text.h"
#include "program/flat_table.h"

namespace tte {

namespace et = executorch::runtime;
using executorch::aten::ScalarType;

Status check_data_file_fields(const uint8_t* data, size_t size, const std::string& label,
                              std::vector<std::string>* keys_without_layout) {
  const auto damaged = [&](const std::string& what) {
    return Status(TTE_ERROR_INVALID_PROGRAM,
                  "cannot load " + label +
                      ": not a valid ExecuTorch data file (.ptd), or a truncated or damaged one (" +
                      what + "): pass the .ptd written when the program was exported");
  };
  // flat_tensor.fbs: FlatTensor {version, segments, named_data};
  // DataSegment {offset, size}; NamedData {key, segment_index,
  // tensor_layout}; TensorLayout {scalar_type, sizes, dim_order}.
  if (size < 8) {
    // ExecuTorch reads the identifier at bytes 4..7 of what it loaded.
    return damaged("its flatbuffer is " + std::to_string(size) + " bytes long");
  }
  if (std::memcmp(data + 4, "FT01", 4) != 0) {
    return Status::Ok();  // ExecuTorch refuses it by its identifier
  }
  const auto root = FlatTable::root(data, size);
  if (!root || !root->table_in_bounds() || !root->field_in_bounds(0, 4)) {
    return damaged("its root table lies outside the file");
  }
  const auto segments = root->field(1);
  if (!segments || !segments->vector_in_bounds(4)) {
    return damaged("its segment list is missing or runs past the end");
  }
  for (uint32_t i = 0; i < segments->length(); ++i) {
    const auto segment = segments->element(i);
    if (!segment || !segment->table_in_bounds() || !segment->field_in_bounds(0, 8) ||
        !segment->field_in_bounds(1, 8)) {
      return damaged("segment " + std::to_string(i) + " lies outside the file");
    }
  }
  const auto named = root->field(2);
  if (!named || !named->vector_in_bounds(4)) {
    return damaged("its list of named data is missing or runs past the end");
  }
  for (uint32_t i = 0; i < named->length(); ++i) {
    const std::string where = "named data " + std::to_string(i);
    const auto entry = named->element(i);
    if (!entry || !entry->table_in_bounds() || !entry->field_in_bounds(1, 4)) {
      return damaged(where + " lies outside the file");
    }
    const auto key = entry->field(0);
    if (!key || !key->vector_in_bounds(1, 1)) {
      return damaged(where + " has no key");
    }
    const auto layout = entry->field(2);
    if (!layout) {
      keys_without_layout->push_back(key->text());
      continue;
    }
    const auto sizes = layout->table_in_bounds() ? layout->field(1) : std::nullopt;
    const auto dim_order = layout->table_in_bounds() ? layout->field(2) : std::nullopt;
    if (!layout->table_in_bounds() || !layout->field_in_bounds(0, 1) || !sizes ||
        !sizes->vector_in_bounds(4) || !dim_order || !dim_order->vector_in_bounds(1) ||
        dim_order->length() != sizes->length()) {
      return damaged(where + " has a damaged tensor layout");
    }
    // TensorLayout::create aborts (elementSize) on an unknown dtype.
    const auto dtype = static_cast<ScalarType>(layout->scalar<int8_t>(0, 0));
    if (!et::isValid(dtype)) {
      return damaged(where + " has a tensor of unknown dtype " +
                     std::to_string(static_cast<int>(dtype)));
    }
    // ExecuTorch hands kernels the segment as the tensor's memory without
    // comparing their sizes: a shorter segment would be read past its end.
    uint64_t nbytes = static_cast<uint64_t>(et::elementSize(dtype));
    bool sized = true;
    for (uint32_t d = 0; d < sizes->length() && sized; ++d) {
      const auto dim = sizes->int_at(d);
      sized =
          dim && *dim >= 0 && !__builtin_mul_overflow(nbytes, static_cast<uint64_t>(*dim), &nbytes);
    }
    const uint32_t segment_index = entry->scalar<uint32_t>(1, 0);
    const auto segment =
        segment_index < segments->length() ? segments->element(segment_index) : std::nullopt;
    if (sized && segment && segment->scalar<uint64_t>(1, 0) < nbytes) {
      return damaged(where + " ('" + printable(key->text()) + "') is a tensor of " +
                     std::to_string(nbytes) + " bytes stored in a segment of " +
                     std::to_string(segment->scalar<uint64_t>(1, 0)));
    }
  }
  return Status::Ok();
}
Status check_data_file_head(const uint8_t* head, size_t size, const std::string& label) {
  if (size < 32 || std::memcmp(head + 8, "FH01", 4) != 0) {
    const std::string found =
        size >= 12 ? "'" + printable(std::string(reinterpret_cast<const char*>(head) + 8, 4)) + "'"
                   : "missing (the file has " + std::to_string(size) + " bytes)";
    return Status(TTE_ERROR_INVALID_PROGRAM,
                  "cannot load " + label +
                      ": not an ExecuTorch data file (.ptd): its bytes 8..11 are " + found +
                      ", where a .ptd has 'FH01': pass the .ptd written when the program "
                      "was exported");
  }
  return Status::Ok();
}

uint64_t data_file_flatbuffer_extent(const uint8_t* head, size_t size, uint64_t file_size) {
  // flat_tensor's header: "FH01", u32 length, u64 flatbuffer_offset, u64
  // flatbuffer_size, ..., little-endian, at byte 8. ExecuTorch reads the
  // flatbuffer as bytes [0, flatbuffer_offset + flatbuffer_size).
  if (size < 32 || std::memcmp(head + 8, "FH01", 4) != 0) {
    return 0;
  }
  const uint64_t offset = read_le64(head + 16);
  const uint64_t length = read_le64(head + 24);
  return offset > file_size || length > file_size - offset ? file_size : offset + length;
}
}  // namespace tte
