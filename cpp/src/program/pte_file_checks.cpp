#include "program/pte_file_checks.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>

#include <executorch/runtime/core/exec_aten/util/scalar_type_util.h>

#include "common/text.h"
#include "program/flat_table.h"
#include "tte_version.h"

namespace tte {

namespace et = executorch::runtime;
using executorch::aten::ScalarType;

namespace {

// float8 and unsigned 16/32/64-bit dtypes: ExecuTorch's kernels abort
// (promoteTypes) when one meets another dtype among their inputs.
bool aborts_when_mixed(ScalarType type) {
  return et::isFloat8Type(type) || et::isBarebonesUnsignedType(type);
}

// KernelCall.op_index's flatbuffer default: an index of 0 is left out of the
// file, so a call without the field calls the plan's first operator.
constexpr int32_t kDefaultOpIndex = 0;

// "'aten::mul'": operator `index` of a plan, quoted, or "a kernel".
std::string operator_name(const FlatTable& plan, int32_t index) {
  const auto operators = plan.field(6);
  if (!operators || index < 0 || static_cast<uint32_t>(index) >= operators->length()) {
    return "a kernel";
  }
  const auto op = operators->element(static_cast<uint32_t>(index));
  const auto name = op ? op->field(0) : std::nullopt;
  if (!name || !name->vector_in_bounds(1)) {
    return "a kernel";
  }
  return "'" + printable(name->text()) + "'";
}

// Calls `visit(chain, index, instruction)` for every instruction of a plan
// (ExecutionPlan.chains -> Chain.instructions), in order, until it returns a
// failed status, which is returned.
template <typename Visit>
Status for_each_instruction(const FlatTable& plan, const Visit& visit) {
  const auto chains = plan.field(5);
  for (uint32_t c = 0; chains && c < chains->length(); ++c) {
    const auto chain = chains->element(c);
    const auto instructions = chain ? chain->field(2) : std::nullopt;
    for (uint32_t i = 0; instructions && i < instructions->length(); ++i) {
      const auto instruction = instructions->element(i);
      if (!instruction) continue;
      Status status = visit(c, i, *instruction);
      if (!status.ok()) return status;
    }
  }
  return Status::Ok();
}

// The kernel calls of a plan whose input tensors mix such a dtype with
// another: ExecuTorch would abort the process running them. A kernel's
// output is its last argument (a cast from float8 is not refused).
template <typename Damaged>
Status check_kernel_dtypes(const FlatTable& plan, const FlatTable& values, uint32_t p,
                           const Damaged& damaged) {
  // Chain.instructions -> Instruction.instr_args (KernelCall = 1) ->
  // KernelCall {op_index, args}; ExecutionPlan.operators -> Operator.name.
  constexpr uint8_t kKernelCall = 1;
  constexpr uint8_t kTensorValue = 5;
  return for_each_instruction(plan, [&](uint32_t c, uint32_t i, const FlatTable& instruction) {
    if (instruction.scalar<uint8_t>(0, 0) != kKernelCall) return Status::Ok();
    const auto call = instruction.field(1);
    const auto args = call ? call->field(1) : std::nullopt;
    std::vector<ScalarType> types;
    bool exotic = false;
    for (uint32_t a = 0; args && a + 1 < args->length(); ++a) {
      const auto index = args->int_at(a);
      if (!index || *index < 0 || static_cast<uint32_t>(*index) >= values.length()) continue;
      const auto value = values.element(static_cast<uint32_t>(*index));
      if (!value || value->scalar<uint8_t>(0, 0) != kTensorValue) continue;
      const auto tensor = value->field(1);
      const auto type = static_cast<ScalarType>(tensor ? tensor->scalar<int8_t>(0, 0) : 0);
      exotic = exotic || aborts_when_mixed(type);
      types.push_back(type);
    }
    if (!exotic ||
        std::all_of(types.begin(), types.end(), [&](ScalarType t) { return t == types.front(); })) {
      return Status::Ok();
    }
    std::string mixed;
    for (ScalarType type : types) {
      mixed += (mixed.empty() ? "" : ", ") + std::string(et::toString(type));
    }
    return damaged("execution plan " + std::to_string(p) + ", chain " + std::to_string(c) +
                   ", instruction " + std::to_string(i) + " calls " +
                   operator_name(plan, call->scalar<int32_t>(0, kDefaultOpIndex)) +
                   " with tensors of dtypes " + mixed + ", a mix ExecuTorch's kernels abort on");
  });
}

// Whether a tensor value gets memory when ExecuTorch loads its method
// (tensor_parser's getTensorDataPtr): constant data (data_buffer_idx > 0),
// planned memory (allocation_info), or a .ptd entry (extra_tensor_info,
// location EXTERNAL); or holds no bytes. Anything else is a null pointer
// until the caller sets it, as for method inputs and unplanned outputs.
bool tensor_has_memory(const FlatTable& tensor) {
  // Tensor {scalar_type, storage_offset, sizes, dim_order, requires_grad,
  // data_buffer_idx, allocation_info, layout, shape_dynamism,
  // extra_tensor_info}; ExtraTensorInfo {mutable_data_segments_idx,
  // fully_qualified_name, location (1: EXTERNAL)}.
  if (tensor.scalar<uint32_t>(5, 0) > 0 || tensor.field(6)) return true;
  const auto extra = tensor.field(9);
  if (extra && extra->scalar<int8_t>(2, 0) == 1) return true;
  const auto sizes = tensor.field(2);
  for (uint32_t d = 0; sizes && d < sizes->length(); ++d) {
    if (sizes->int_at(d).value_or(1) == 0) return true;
  }
  return false;
}

// The kernel calls of a plan that read or write a tensor with no memory
// (ExecuTorch's kernels dereference its null pointer): method inputs and
// outputs are given memory by the caller, and a MoveCall's destination takes
// its source's tensor, so neither is judged.
template <typename Damaged>
Status check_kernel_tensor_memory(const FlatTable& plan, const FlatTable& values, uint32_t p,
                                  const Damaged& damaged) {
  // Instruction.instr_args: KernelCall = 1 {op_index, args}, MoveCall = 3
  // {move_from, move_to}; KernelTypes: Tensor = 5, TensorList = 10,
  // OptionalTensorList = 11 (each {items: [int]}).
  constexpr uint8_t kKernelCall = 1;
  constexpr uint8_t kMoveCall = 3;
  constexpr uint8_t kTensorValue = 5;
  constexpr uint8_t kTensorList = 10;
  constexpr uint8_t kOptionalTensorList = 11;
  std::vector<bool> given(values.length(), false);
  for (const int io : {3, 4}) {  // ExecutionPlan.inputs, .outputs
    const auto indices = plan.field(io);
    for (uint32_t i = 0; indices && i < indices->length(); ++i) {
      const auto index = indices->int_at(i);
      if (index && *index >= 0 && static_cast<uint32_t>(*index) < given.size())
        given[*index] = true;
    }
  }
  for_each_instruction(plan, [&](uint32_t, uint32_t, const FlatTable& instruction) {
    const auto move =
        instruction.scalar<uint8_t>(0, 0) == kMoveCall ? instruction.field(1) : std::nullopt;
    const int32_t to = move ? move->scalar<int32_t>(1, -1) : -1;
    if (to >= 0 && static_cast<uint32_t>(to) < given.size()) given[to] = true;
    return Status::Ok();
  });
  const auto unbacked = [&](int32_t index) {
    if (index < 0 || static_cast<uint32_t>(index) >= values.length() || given[index]) return false;
    const auto value = values.element(static_cast<uint32_t>(index));
    const auto tensor =
        value && value->scalar<uint8_t>(0, 0) == kTensorValue ? value->field(1) : std::nullopt;
    return tensor && !tensor_has_memory(*tensor);
  };
  return for_each_instruction(plan, [&](uint32_t c, uint32_t i, const FlatTable& instruction) {
    if (instruction.scalar<uint8_t>(0, 0) != kKernelCall) return Status::Ok();
    const auto call = instruction.field(1);
    const auto args = call ? call->field(1) : std::nullopt;
    for (uint32_t a = 0; args && a < args->length(); ++a) {
      const int32_t index = args->int_at(a).value_or(-1);
      std::vector<int32_t> tensors{index};
      const auto value = index >= 0 && static_cast<uint32_t>(index) < values.length()
                             ? values.element(static_cast<uint32_t>(index))
                             : std::nullopt;
      const uint8_t kind = value ? value->scalar<uint8_t>(0, 0) : 0;
      if (kind == kTensorList || kind == kOptionalTensorList) {
        const auto list = value->field(1);
        const auto items = list ? list->field(0) : std::nullopt;
        for (uint32_t k = 0; items && k < items->length(); ++k) {
          tensors.push_back(items->int_at(k).value_or(-1));
        }
      }
      for (const int32_t tensor : tensors) {
        if (!unbacked(tensor)) continue;
        return damaged("execution plan " + std::to_string(p) + ", chain " + std::to_string(c) +
                       ", instruction " + std::to_string(i) + " calls " +
                       operator_name(plan, call->scalar<int32_t>(0, kDefaultOpIndex)) +
                       " with value " + std::to_string(tensor) +
                       ", a tensor with no memory: neither constant data, planned memory, a "
                       "data-file entry, nor a method input or output");
      }
    }
    return Status::Ok();
  });
}
// Where a memory-planned tensor lies, if it lies outside the arena the plan
// declares for it; "" when it fits or is not planned. Tensor.allocation_info
// {memory_id, memory_offset_low, memory_offset_high} places it in
// ExecutionPlan.non_const_buffer_sizes[memory_id] (entry 0 is reserved:
// ExecuTorch's getMemPlannedPtr asks its allocator for arena memory_id - 1)
// with its full size (sizes, the upper bounds of dynamic dims, times the
// element size). ExecuTorch reports such a tensor as MemoryAllocationFailed
// when the method loads, which reads as a shortage of memory; it is a
// damaged plan.
std::string planned_tensor_outside_arena(const FlatTable& tensor, ScalarType type,
                                         const std::optional<FlatTable>& arenas) {
  const auto info = tensor.field(6);
  if (!info) return "";
  const uint32_t memory_id = info->scalar<uint32_t>(0, 0);
  const uint64_t offset =
      static_cast<uint64_t>(info->scalar<uint32_t>(2, 0)) << 32 | info->scalar<uint32_t>(1, 0);
  const uint32_t declared = arenas ? arenas->length() : 0;
  if (memory_id == 0 || memory_id >= declared) {
    return "a memory-planned tensor is placed in memory id " + std::to_string(memory_id) +
           ", for which the plan declares no arena (it declares ids 1 to " +
           std::to_string(declared == 0 ? 0 : declared - 1) + ")";
  }
  const auto sizes = tensor.field(2);
  uint64_t bytes = et::elementSize(type);
  for (uint32_t k = 0; sizes && k < sizes->length(); ++k) {
    const int64_t dim = sizes->int_at(k).value_or(-1);
    if (dim < 0) return "";  // ExecuTorch refuses it on its own, as a bad size
    if (dim != 0 && bytes > UINT64_MAX / static_cast<uint64_t>(dim)) {
      return "a memory-planned tensor's size overflows 64 bits";
    }
    bytes *= static_cast<uint64_t>(dim);
  }
  const int64_t arena = arenas->int64_at(memory_id).value_or(-1);
  if (arena < 0 || offset > static_cast<uint64_t>(arena) ||
      bytes > static_cast<uint64_t>(arena) - offset) {
    return "a memory-planned tensor of " + std::to_string(bytes) + " bytes at offset " +
           std::to_string(offset) + " lies outside its arena (memory id " +
           std::to_string(memory_id) + ", " + std::to_string(arena) + " bytes)";
  }
  return "";
}
}  // namespace

Status check_required_fields(const uint8_t* data, size_t size, const std::string& label) {
  const auto damaged = [&](const std::string& what) {
    return Status(TTE_ERROR_INVALID_PROGRAM, "cannot load " + label +
                                                 ": not a valid ExecuTorch program, or a "
                                                 "truncated or damaged one (" +
                                                 what + ")");
  };
  const auto program = FlatTable::root(data, size);
  const auto plans = program ? program->field(1) : std::nullopt;
  if (!plans) return Status::Ok();  // ExecuTorch has judged the rest
  for (uint32_t p = 0; p < plans->length(); ++p) {
    const auto plan = plans->element(p);
    if (!plan) return damaged("execution plan " + std::to_string(p) + " is missing");
    // name, values, inputs, outputs, chains, operators, delegates, non_const_buffer_sizes
    for (const int required : {0, 2, 3, 4, 5, 6, 7, 8}) {
      if (!plan->field(required)) {
        return damaged("execution plan " + std::to_string(p) + " lacks field " +
                       std::to_string(required));
      }
    }
    const auto values = plan->field(2);
    for (uint32_t v = 0; v < values->length(); ++v) {
      const auto value = values->element(v);
      constexpr uint8_t kTensorValue = 5;  // KernelTypes.Tensor
      if (!value || value->scalar<uint8_t>(0, 0) != kTensorValue) continue;
      const auto tensor = value->field(1);
      const auto dtype = tensor ? tensor->scalar<int8_t>(0, 0) : int8_t{0};
      const auto type = static_cast<ScalarType>(dtype);
      if (!tensor || !et::isValid(type)) {
        return damaged("execution plan " + std::to_string(p) + ", value " + std::to_string(v) +
                       " is a tensor of unknown dtype " + std::to_string(dtype));
      }
      // Quantized and bits dtypes: exir writes neither, and ExecuTorch's
      // kernels abort on them (promoteTypes).
      if (et::isQIntType(type) || et::isBitsType(type)) {
        return damaged("execution plan " + std::to_string(p) + ", value " + std::to_string(v) +
                       " is a tensor of dtype " + et::toString(type) +
                       ", which no ExecuTorch program carries");
      }
      const std::string outside = planned_tensor_outside_arena(*tensor, type, plan->field(8));
      if (!outside.empty()) {
        return damaged("execution plan " + std::to_string(p) + ", value " + std::to_string(v) +
                       ": " + outside);
      }
    }
    Status status = check_kernel_dtypes(*plan, *values, p, damaged);
    if (status.ok()) status = check_kernel_tensor_memory(*plan, *values, p, damaged);
    if (!status.ok()) {
      return status;
    }
    const auto delegates = plan->field(7);
    for (uint32_t d = 0; delegates && d < delegates->length(); ++d) {
      const std::string where =
          "execution plan " + std::to_string(p) + ", delegate " + std::to_string(d);
      const auto delegate = delegates->element(d);
      if (!delegate || !delegate->field(0)) return damaged(where + " has no backend id");
      if (!delegate->field(1)) return damaged(where + " has no processed data");
      const auto specs = delegate->field(2);
      for (uint32_t c = 0; specs && c < specs->length(); ++c) {
        const auto spec = specs->element(c);
        if (!spec || !spec->field(0) || !spec->field(1)) {
          return damaged(where + ", compile spec " + std::to_string(c) + " has no key or value");
        }
      }
    }
  }
  return Status::Ok();
}
std::vector<ExternalTensor> external_tensors(const uint8_t* data, size_t size) {
  // ExecutionPlan.values -> EValue.val (Tensor) -> Tensor.extra_tensor_info
  // -> ExtraTensorInfo {fully_qualified_name, location (1: EXTERNAL)}.
  std::vector<ExternalTensor> found;
  const auto program = FlatTable::root(data, size);
  const auto plans = program ? program->field(1) : std::nullopt;
  for (uint32_t p = 0; plans && p < plans->length(); ++p) {
    const auto plan = plans->element(p);
    const auto name = plan ? plan->field(0) : std::nullopt;
    const auto values = plan ? plan->field(2) : std::nullopt;
    if (!name || !name->vector_in_bounds(1)) continue;
    for (uint32_t v = 0; values && v < values->length(); ++v) {
      const auto value = values->element(v);
      constexpr uint8_t kTensorValue = 5;
      if (!value || value->scalar<uint8_t>(0, 0) != kTensorValue) continue;
      const auto tensor = value->field(1);
      const auto info = tensor ? tensor->field(9) : std::nullopt;
      const auto key = info ? info->field(1) : std::nullopt;
      constexpr int8_t kExternal = 1;
      if (!key || info->scalar<int8_t>(2, 0) != kExternal || !key->vector_in_bounds(1)) continue;
      found.push_back(ExternalTensor{name->text(), key->text()});
    }
  }
  return found;
}
Status check_program_head(const uint8_t* head, size_t size, uint64_t file_size,
                          const std::string& label) {
  // program.fbs's file_identifier; ExecuTorch 1.5 reads no other.
  constexpr char kIdentifier[] = "ET12";
  if (size < 8) {
    return Status(TTE_ERROR_INVALID_PROGRAM,
                  "cannot load " + label + ": not a valid ExecuTorch program: it is " +
                      std::to_string(file_size) + " bytes long (truncated?)");
  }
  const std::string found(reinterpret_cast<const char*>(head) + 4, 4);
  if (found != kIdentifier) {
    const bool other_version =
        found[0] == 'E' && found[1] == 'T' && std::isdigit(found[2]) && std::isdigit(found[3]);
    if (other_version) {
      return Status(TTE_ERROR_NOT_SUPPORTED,
                    "cannot load " + label + ": it is an ExecuTorch program in format " + found +
                        ", and this runtime (ExecuTorch " TTE_EXECUTORCH_VERSION_STRING ") reads " +
                        kIdentifier + ": export it again with that version");
    }
    return Status(TTE_ERROR_INVALID_PROGRAM,
                  "cannot load " + label +
                      ": not a valid ExecuTorch program: its bytes 4..7 are '" + printable(found) +
                      "', where an ExecuTorch program has '" + kIdentifier +
                      "' (a different kind of file, or a damaged one)");
  }
  if (size >= 24 && std::memcmp(head + 8, "eh00", 4) == 0 && read_le64(head + 16) > file_size) {
    return Status(TTE_ERROR_INVALID_PROGRAM,
                  "cannot load " + label + ": its header gives a " +
                      std::to_string(read_le64(head + 16)) + "-byte program, but it has " +
                      std::to_string(file_size) + " bytes (truncated?): copy or export it again");
  }
  return Status::Ok();
}

uint64_t flatbuffer_extent(const uint8_t* head, size_t size, uint64_t file_size) {
  // ExecuTorch's extended header: "eh00", u32 length, u64 program_size,
  // u64 segment_base_offset, little-endian, at byte 8.
  constexpr size_t kAt = 8;
  constexpr size_t kProgramSizeAt = kAt + 8;
  if (size < kProgramSizeAt + 8 || std::memcmp(head + kAt, "eh00", 4) != 0) {
    return file_size;
  }
  return std::min(read_le64(head + kProgramSizeAt), file_size);
}

}  // namespace tte
