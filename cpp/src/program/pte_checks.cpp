#include "program/pte_checks.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <optional>

#include <executorch/runtime/core/device_allocator.h>
#include <executorch/runtime/core/exec_aten/util/scalar_type_util.h>

#include "common/et_status.h"
#include "common/host_memory.h"
#include "common/text.h"
#include "cuda/cuda_device.h"
#include "program/executorch_step.h"
#include "tte_version.h"

namespace tte {

namespace et = executorch::runtime;
using et::etensor::DeviceType;
using executorch::aten::ScalarType;

namespace {

// Fields of a flatbuffer table, read from raw bytes with every offset checked
// against the buffer (program.fbs: ExecutionPlan.name and .delegates,
// BackendDelegate.id and .processed, CompileSpec.key and .value).
class FlatTable {
 public:
  FlatTable(const uint8_t* data, size_t size, size_t pos) : data_(data), size_(size), pos_(pos) {}
  static std::optional<FlatTable> root(const uint8_t* data, size_t size) {
    FlatTable at(data, size, 0);
    return at.follow(0);
  }
  // The table or vector a reference field points to; nullopt when absent.
  std::optional<FlatTable> field(int index) const {
    const size_t at = field_position(index);
    return at == 0 ? std::nullopt : follow(at);
  }
  // A scalar field, or `fallback` when absent.
  template <typename T>
  T scalar(int index, T fallback) const {
    const size_t at = field_position(index);
    T value = fallback;
    return at != 0 && read(at, &value) ? value : fallback;
  }
  // Element `i` of a vector of tables.
  std::optional<FlatTable> element(uint32_t i) const {
    return follow(pos_ + 4 + static_cast<size_t>(i) * 4);
  }
  uint32_t length() const {
    uint32_t n = 0;
    return read(pos_, &n) ? n : 0;
  }
  // What ExecuTorch's generated accessors read without the flatbuffers
  // Verifier (a .ptd is never verified): the table's vtable and inline part,
  // a field's bytes, a vector's elements (a string's and its NUL).
  bool table_in_bounds() const {
    int32_t back = 0;
    uint16_t vtable_size = 0;
    uint16_t object_size = 0;
    if (!read(pos_, &back)) return false;
    const int64_t vtable = static_cast<int64_t>(pos_) - back;
    return vtable >= 0 && read(static_cast<size_t>(vtable), &vtable_size) &&
           read(static_cast<size_t>(vtable) + 2, &object_size) && vtable_size >= 4 &&
           vtable_size % 2 == 0 && static_cast<size_t>(vtable) + vtable_size <= size_ &&
           object_size >= 4 && pos_ + object_size <= size_;
  }
  bool field_in_bounds(int index, size_t bytes) const {
    const size_t at = field_position(index);
    return at == 0 || (at <= size_ && size_ - at >= bytes);
  }
  bool vector_in_bounds(size_t element_size, size_t trailing = 0) const {
    const uint32_t n = length();
    if (pos_ + 4 > size_) return false;
    const size_t room = size_ - pos_ - 4;
    return room >= trailing && (room - trailing) / element_size >= n;
  }
  // Element `i` of a vector of int32, or nullopt past the buffer.
  std::optional<int32_t> int_at(uint32_t i) const {
    int32_t value = 0;
    if (i >= length() || !read(pos_ + 4 + static_cast<size_t>(i) * 4, &value)) return std::nullopt;
    return value;
  }
  // A string field's bytes (check vector_in_bounds(1, 1) first).
  std::string text() const {
    return std::string(reinterpret_cast<const char*>(data_ + pos_ + 4), length());
  }

 private:
  // Where field `index` is stored; 0 when absent.
  size_t field_position(int index) const {
    int32_t back = 0;
    uint16_t vtable_size = 0;
    uint16_t offset = 0;
    if (!read(pos_, &back)) return 0;
    const int64_t vtable = static_cast<int64_t>(pos_) - back;
    const size_t slot = 4 + 2 * static_cast<size_t>(index);
    if (vtable < 0 || !read(static_cast<size_t>(vtable), &vtable_size) || slot + 2 > vtable_size ||
        !read(static_cast<size_t>(vtable) + slot, &offset)) {
      return 0;
    }
    return offset == 0 ? 0 : pos_ + offset;
  }
  template <typename T>
  bool read(size_t at, T* out) const {
    if (at > size_ || size_ - at < sizeof(T)) return false;
    std::memcpy(out, data_ + at, sizeof(T));
    return true;
  }
  std::optional<FlatTable> follow(size_t at) const {
    uint32_t offset = 0;
    if (!read(at, &offset) || at + offset >= size_) return std::nullopt;
    return FlatTable(data_, size_, at + offset);
  }
  const uint8_t* data_;
  size_t size_;
  size_t pos_;
};

uint64_t read_le64(const uint8_t* at) {
  uint64_t value = 0;
  for (size_t i = 0; i < 8; ++i) {
    value |= static_cast<uint64_t>(at[i]) << (8 * i);
  }
  return value;
}

// float8 and unsigned 16/32/64-bit dtypes: ExecuTorch's kernels abort
// (promoteTypes) when one meets another dtype among their inputs.
bool aborts_when_mixed(ScalarType type) {
  return et::isFloat8Type(type) || et::isBarebonesUnsignedType(type);
}

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
    if (!exotic || std::all_of(types.begin(), types.end(),
                               [&](ScalarType t) { return t == types.front(); })) {
      return Status::Ok();
    }
    std::string mixed;
    for (ScalarType type : types) {
      mixed += (mixed.empty() ? "" : ", ") + std::string(et::toString(type));
    }
    return damaged("execution plan " + std::to_string(p) + ", chain " + std::to_string(c) +
                   ", instruction " + std::to_string(i) + " calls " +
                   operator_name(plan, call->scalar<int32_t>(0, -1)) +
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
      if (index && *index >= 0 && static_cast<uint32_t>(*index) < given.size()) given[*index] = true;
    }
  }
  for_each_instruction(plan, [&](uint32_t, uint32_t, const FlatTable& instruction) {
    const auto move = instruction.scalar<uint8_t>(0, 0) == kMoveCall ? instruction.field(1)
                                                                      : std::nullopt;
    const int32_t to = move ? move->scalar<int32_t>(1, -1) : -1;
    if (to >= 0 && static_cast<uint32_t>(to) < given.size()) given[to] = true;
    return Status::Ok();
  });
  const auto unbacked = [&](int32_t index) {
    if (index < 0 || static_cast<uint32_t>(index) >= values.length() || given[index]) return false;
    const auto value = values.element(static_cast<uint32_t>(index));
    const auto tensor = value && value->scalar<uint8_t>(0, 0) == kTensorValue ? value->field(1)
                                                                             : std::nullopt;
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
                       operator_name(plan, call->scalar<int32_t>(0, -1)) + " with value " +
                       std::to_string(tensor) +
                       ", a tensor with no memory: neither constant data, planned memory, a "
                       "data-file entry, nor a method input or output");
      }
    }
    return Status::Ok();
  });
}

Status check_device_arenas(const et::MethodMeta& meta, const std::string& method) {
  // Module aborts the process when a device arena cannot be allocated
  // (ET_CHECK on DeviceMemoryBuffer::create): refuse what a device cannot
  // hold now. Racy against other users of the device, but it turns the
  // common case (a damaged or oversized plan) into an error.
  std::map<int, uint64_t> device_bytes;
  for (size_t i = 0; i < meta.num_memory_planned_buffers(); ++i) {
    auto device = meta.memory_planned_buffer_device(i);
    auto size = meta.memory_planned_buffer_size(i);
    if (device.ok() && !device->is_cpu() && size.ok()) {
      device_bytes[device->index()] += static_cast<uint64_t>(*size);
    }
  }
  for (const auto& [index, bytes] : device_bytes) {
    DeviceGuard guard(index);
    size_t free_bytes = 0;
    size_t total_bytes = 0;
    const cudaError_t error =
        guard.status() == cudaSuccess ? cudaMemGetInfo(&free_bytes, &total_bytes) : guard.status();
    if (error != cudaSuccess) {
      return cuda_failure(error, "reading the free memory of cuda:" + std::to_string(index) +
                                     " for method '" + method + "'");
    }
    if (bytes > free_bytes) {
      return Status(TTE_ERROR_OUT_OF_MEMORY,
                    "method '" + method + "' plans " + byte_count_text(bytes) + " on cuda:" +
                        std::to_string(index) + ", more than the device has free (" +
                        byte_count_text(free_bytes) + " of " + byte_count_text(total_bytes) +
                        "): free device memory, or run it on a larger device");
    }
  }
  return Status::Ok();
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

Status check_method_before_load(const et::MethodMeta& meta, const std::string& method,
                                uint64_t max_planned_memory) {
  // Method aborts the process on an I/O entry that points past its value
  // table; MethodMeta checks the same indices and returns an error.
  for (const bool is_input : {true, false}) {
    const size_t count = is_input ? meta.num_inputs() : meta.num_outputs();
    for (size_t i = 0; i < count; ++i) {
      auto tag = is_input ? meta.input_tag(i) : meta.output_tag(i);
      et::Error error = tag.error();
      if (tag.ok() && *tag == et::Tag::Tensor) {
        error = (is_input ? meta.input_tensor_meta(i) : meta.output_tensor_meta(i)).error();
      }
      if (error != et::Error::Ok) {
        return damaged_method_meta(error, std::string("method '") + method + "': " +
                                              (is_input ? "input " : "output ") +
                                              std::to_string(i) + " cannot be read");
      }
    }
  }
  // Module allocates and zero-fills the host arenas before anything else of
  // the method runs (a damaged 2 KB file can ask for gigabytes): bound them.
  uint64_t host_bytes = 0;
  for (size_t i = 0; i < meta.num_memory_planned_buffers(); ++i) {
    auto size = meta.memory_planned_buffer_size(i);
    auto device = meta.memory_planned_buffer_device(i);
    if (!size.ok() || *size < 0) {
      return Status(TTE_ERROR_INVALID_PROGRAM, "method '" + method +
                                                   "' is damaged: planned buffer " +
                                                   std::to_string(i) + " has no valid size");
    }
    if (!device.ok() || device->is_cpu()) {
      host_bytes = saturating_add(host_bytes, static_cast<uint64_t>(*size));
    }
  }
  const uint64_t limit = max_planned_memory > 0 ? max_planned_memory : available_host_memory();
  if (host_bytes > limit) {
    const std::string plans =
        "method '" + method + "' plans " + byte_count_text(host_bytes) + " of host memory";
    if (max_planned_memory > 0) {
      return Status(TTE_ERROR_OUT_OF_MEMORY,
                    plans + ", more than max_planned_memory allows (" + byte_count_text(limit) +
                        "): raise max_planned_memory if that size is right");
    }
    return Status(TTE_ERROR_OUT_OF_MEMORY,
                  plans + ", more than is available to this process now (" +
                      byte_count_text(limit) +
                      "): free memory, or, if that size is right, open the program with "
                      "max_planned_memory set to at least " +
                      std::to_string(host_bytes) + " (bytes)");
  }
  // Device-planned arenas come from ExecuTorch's DeviceAllocator registry;
  // say why before Module fails with a bare NotFound (or aborts).
  for (size_t i = 0; i < meta.num_memory_planned_buffers(); ++i) {
    auto device = meta.memory_planned_buffer_device(i);
    if (!device.ok() || device->is_cpu()) {
      continue;
    }
    auto size = meta.memory_planned_buffer_size(i);
    const std::string where =
        "method '" + method + "' plans " + std::to_string(size.ok() ? *size : 0) +
        " bytes on cuda:" + std::to_string(device->index()) +
        " (exported with target_device=cuda:" + std::to_string(device->index()) + ")";
    if (device->type() != DeviceType::CUDA) {
      return Status(TTE_ERROR_NOT_SUPPORTED, "method '" + method +
                                                 "' plans memory on device type " +
                                                 std::to_string(static_cast<int>(device->type())) +
                                                 ", which this runtime does not know");
    }
    if (cuda_device_count() == 0) {
      return Status(
          TTE_ERROR_NO_DEVICE,
          where +
              ", but this process sees no CUDA device: run it on a machine with an NVIDIA "
              "GPU, or export the program with host I/O");
    }
    if (device->index() >= cuda_device_count()) {
      return Status(TTE_ERROR_NO_DEVICE, where + ", but this process sees only " +
                                             std::to_string(cuda_device_count()) +
                                             " CUDA device(s)");
    }
    if (et::get_device_allocator(DeviceType::CUDA) == nullptr) {
      return Status(TTE_ERROR_INVALID_STATE, where +
                                                 ", but no CUDA DeviceAllocator is registered with "
                                                 "ExecuTorch");
    }
  }
  return check_device_arenas(meta, method);
}

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
      sized = dim && *dim >= 0 &&
              !__builtin_mul_overflow(nbytes, static_cast<uint64_t>(*dim), &nbytes);
    }
    const uint32_t segment_index = entry->scalar<uint32_t>(1, 0);
    const auto segment =
        segment_index < segments->length() ? segments->element(segment_index) : std::nullopt;
    if (sized && segment && segment->scalar<uint64_t>(1, 0) < nbytes) {
      return damaged(where + " ('" + printable(key->text()) + "') is a tensor of " + std::to_string(nbytes) +
                     " bytes stored in a segment of " +
                     std::to_string(segment->scalar<uint64_t>(1, 0)));
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

Status check_data_file_head(const uint8_t* head, size_t size, const std::string& label) {
  if (size < 32 || std::memcmp(head + 8, "FH01", 4) != 0) {
    const std::string found =
        size >= 12 ? "'" + printable(std::string(reinterpret_cast<const char*>(head) + 8, 4)) + "'"
                   : "missing (the file has " + std::to_string(size) + " bytes)";
    return Status(TTE_ERROR_INVALID_PROGRAM,
                  "cannot load " + label + ": not an ExecuTorch data file (.ptd): its bytes 8..11 are " +
                      found + ", where a .ptd has 'FH01': pass the .ptd written when the program "
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
    const bool other_version = found[0] == 'E' && found[1] == 'T' && std::isdigit(found[2]) &&
                               std::isdigit(found[3]);
    if (other_version) {
      return Status(TTE_ERROR_NOT_SUPPORTED,
                    "cannot load " + label + ": it is an ExecuTorch program in format " + found +
                        ", and this runtime (ExecuTorch " TTE_EXECUTORCH_VERSION_STRING
                        ") reads " + kIdentifier + ": export it again with that version");
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
                      std::to_string(file_size) +
                      " bytes (truncated?): copy or export it again");
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
