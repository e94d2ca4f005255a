#include "program/pte_checks.h"

#include <unistd.h>

#include <cstring>
#include <optional>

#include <executorch/runtime/core/device_allocator.h>
#include <executorch/runtime/core/exec_aten/util/scalar_type_util.h>

#include "common/et_status.h"
#include "cuda/cuda_device.h"

namespace tte {

namespace et = executorch::runtime;
using et::etensor::DeviceType;

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
      if (!tensor || !et::isValid(static_cast<executorch::aten::ScalarType>(dtype))) {
        return damaged("execution plan " + std::to_string(p) + ", value " + std::to_string(v) +
                       " is a tensor of unknown dtype " + std::to_string(dtype));
      }
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

Status check_method_before_load(const et::MethodMeta& meta, const std::string& method) {
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
        return Status(TTE_ERROR_INVALID_PROGRAM,
                      "method '" + method + "' is damaged: " + (is_input ? "input " : "output ") +
                          std::to_string(i) + " cannot be read (" + et_error_text(error) + ")");
      }
    }
  }
  // Module allocates (and zero-fills) the host arenas the program asks for;
  // refuse sizes no machine here could hold, e.g. from a damaged file.
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
      host_bytes += static_cast<uint64_t>(*size);
    }
  }
  const uint64_t physical =
      static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  if (physical > 0 && host_bytes > physical) {
    return Status(TTE_ERROR_OUT_OF_MEMORY,
                  "method '" + method + "' plans " + std::to_string(host_bytes) +
                      " bytes of host memory, more than this machine has (" +
                      std::to_string(physical) + ")");
  }
  // Device-planned arenas come from ExecuTorch's DeviceAllocator registry;
  // say why before Module fails with a bare NotFound.
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

  return Status::Ok();
}

}  // namespace tte
