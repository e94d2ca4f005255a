#include "program/program.h"

#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>

#include <executorch/devtools/etdump/etdump_flatcc.h>
#include <executorch/extension/data_loader/buffer_data_loader.h>
#include <executorch/extension/data_loader/mmap_data_loader.h>
#include <executorch/extension/module/module.h>
#include <executorch/runtime/backend/interface.h>
#include <executorch/runtime/core/device_allocator.h>
#include <executorch/runtime/core/exec_aten/util/scalar_type_util.h>
#include <executorch/runtime/core/exec_aten/util/tensor_util.h>
#include <nlohmann/json.hpp>

#include "backend/delegate_recorder.h"
#include "program/dlpack_convert.h"
#include "common/logging.h"

namespace tte {

namespace et = executorch::runtime;
using executorch::aten::SizesType;
using executorch::aten::StridesType;
using executorch::aten::Tensor;
using executorch::aten::TensorImpl;
using executorch::extension::Module;
using et::etensor::DeviceType;

// Module keeps its loaded methods in a map it leaves to subclasses; the raw
// Method is what device-aware input copies and output buffers need.
class ProgramModule final : public Module {
 public:
  using Module::Module;

  et::Method* loaded_method(const std::string& name) {
    auto it = methods_.find(name);
    return it == methods_.end() ? nullptr : it->second.method.get();
  }
};

namespace {

constexpr size_t kBufferAlignment = 128;
// LoadBackendOptionsMap's limits (private constants there).
constexpr size_t kMaxOptionBackends = 8;
constexpr size_t kMaxBackendIdLength = 64;

std::string et_error_text(et::Error error) {
  char code[16];
  std::snprintf(code, sizeof(code), "0x%x", static_cast<unsigned>(error));
  return std::string(et::to_string(error)) + " (" + code + ")";
}

TteStatus status_from_et(et::Error error) {
  switch (error) {
    case et::Error::Ok: return TTE_OK;
    case et::Error::InvalidArgument:
    case et::Error::InvalidType: return TTE_ERROR_INVALID_ARGUMENT;
    case et::Error::NotFound:
    case et::Error::AccessFailed: return TTE_ERROR_NOT_FOUND;
    case et::Error::InvalidProgram:
    case et::Error::InvalidExternalData: return TTE_ERROR_INVALID_PROGRAM;
    case et::Error::MemoryAllocationFailed:
    case et::Error::OutOfResources:
    case et::Error::DelegateMemoryAllocationFailed: return TTE_ERROR_OUT_OF_MEMORY;
    case et::Error::NotSupported:
    case et::Error::NotImplemented:
    case et::Error::OperatorMissing:
    case et::Error::DelegateInvalidCompatibility: return TTE_ERROR_NOT_SUPPORTED;
    case et::Error::InvalidState: return TTE_ERROR_INVALID_STATE;
    default: return TTE_ERROR_RUNTIME;
  }
}

std::string cuda_error_text(cudaError_t error) {
  return std::string(cudaGetErrorName(error)) + ": " + cudaGetErrorString(error);
}

int cuda_device_count() {
  static const int count = tte_cuda_device_count();
  return count;
}

void* caller_stream() {
  void* stream = nullptr;
  return tte_get_thread_stream(&stream) ? stream : nullptr;
}

// Makes `device` current for a scope and restores the previous one.
class CurrentDevice {
 public:
  explicit CurrentDevice(int device) {
    if (cudaGetDevice(&previous_) == cudaSuccess && previous_ != device) {
      changed_ = cudaSetDevice(device) == cudaSuccess;
    }
  }
  ~CurrentDevice() {
    if (changed_) {
      cudaSetDevice(previous_);
    }
  }
  CurrentDevice(const CurrentDevice&) = delete;
  CurrentDevice& operator=(const CurrentDevice&) = delete;

 private:
  int previous_ = 0;
  bool changed_ = false;
};

// Where a pointer the method handed back lives: the tensor's device tag, or
// for CPU-tagged tensors what the CUDA runtime says about the address.
DLDevice output_device(const Tensor& tensor) {
  if (tensor.device_type() == DeviceType::CUDA) {
    return DLDevice{kDLCUDA, tensor.device_index()};
  }
  const void* data = tensor.const_data_ptr();
  if (data == nullptr || cuda_device_count() == 0) {
    return DLDevice{kDLCPU, 0};
  }
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, data) != cudaSuccess) {
    cudaGetLastError();
    return DLDevice{kDLCPU, 0};
  }
  switch (attributes.type) {
    case cudaMemoryTypeDevice: return DLDevice{kDLCUDA, attributes.device};
    case cudaMemoryTypeManaged: return DLDevice{kDLCUDAManaged, attributes.device};
    default: return DLDevice{kDLCPU, 0};
  }
}

// Host or device memory the program owns; grows, never shrinks.
class Allocation {
 public:
  Allocation() = default;
  ~Allocation() { release(); }
  Allocation(const Allocation&) = delete;
  Allocation& operator=(const Allocation&) = delete;
  Allocation(Allocation&& other) noexcept { *this = std::move(other); }
  Allocation& operator=(Allocation&& other) noexcept {
    if (this != &other) {
      release();
      std::swap(data_, other.data_);
      std::swap(capacity_, other.capacity_);
      std::swap(on_device_, other.on_device_);
      std::swap(device_, other.device_);
    }
    return *this;
  }

  // At least `size` bytes (at least one) on the host or on CUDA `device`.
  ProgramStatus reserve(size_t size, bool on_device, int device, const std::string& what) {
    size = size == 0 ? 1 : size;
    if (data_ != nullptr && capacity_ >= size && on_device_ == on_device &&
        (!on_device || device_ == device)) {
      return ProgramStatus::Ok();
    }
    release();
    if (on_device) {
      if (cuda_device_count() == 0) {
        return ProgramStatus::Fail(
            TTE_ERROR_NO_DEVICE, what + " lives on cuda:" + std::to_string(device) +
                                     " but this process sees no CUDA device");
      }
      CurrentDevice guard(device);
      const cudaError_t error = cudaMalloc(&data_, size);
      if (error != cudaSuccess) {
        data_ = nullptr;
        return ProgramStatus::Fail(TTE_ERROR_OUT_OF_MEMORY,
                                   "cannot allocate " + std::to_string(size) + " bytes on cuda:" +
                                       std::to_string(device) + " for " + what + " (" +
                                       cuda_error_text(error) + ")");
      }
    } else if (posix_memalign(&data_, kBufferAlignment, size) != 0) {
      data_ = nullptr;
      return ProgramStatus::Fail(TTE_ERROR_OUT_OF_MEMORY, "cannot allocate " +
                                                              std::to_string(size) +
                                                              " host bytes for " + what);
    }
    capacity_ = size;
    on_device_ = on_device;
    device_ = device;
    return ProgramStatus::Ok();
  }

  void* data() const { return data_; }
  size_t capacity() const { return capacity_; }

 private:
  void release() {
    if (data_ != nullptr) {
      if (on_device_) {
        CurrentDevice guard(device_);
        cudaFree(data_);
      } else {
        std::free(data_);
      }
    }
    data_ = nullptr;
    capacity_ = 0;
  }

  void* data_ = nullptr;
  size_t capacity_ = 0;
  bool on_device_ = false;
  int device_ = 0;
};

// ExecuTorch hands out inputs only through accessors it has deprecated in
// favour of set_input; resizing a planned input before a device-to-host copy
// into its arena needs the tensor itself.
const et::EValue& method_input(et::Method& method, size_t index) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  return method.get_input(index);
#pragma GCC diagnostic pop
}

std::string io_label(bool is_input, size_t index, const std::string& name) {
  std::string label = std::string(is_input ? "input " : "output ") + std::to_string(index);
  if (!name.empty()) {
    label += " ('" + name + "')";
  }
  return label;
}

const char* tag_name(et::Tag tag) {
  switch (tag) {
    case et::Tag::None: return "none";
    case et::Tag::Tensor: return "tensor";
    case et::Tag::String: return "string";
    case et::Tag::Double: return "double";
    case et::Tag::Int: return "int";
    case et::Tag::Bool: return "bool";
    default: return "list";
  }
}

const char* input_tag_name(TteValueTag tag) {
  switch (tag) {
    case TTE_VALUE_NONE: return "none";
    case TTE_VALUE_TENSOR: return "tensor";
    case TTE_VALUE_INT: return "int";
    case TTE_VALUE_DOUBLE: return "double";
    case TTE_VALUE_BOOL: return "bool";
    default: return "other";
  }
}

TteValueTag value_tag(et::Tag tag) {
  switch (tag) {
    case et::Tag::None: return TTE_VALUE_NONE;
    case et::Tag::Tensor: return TTE_VALUE_TENSOR;
    case et::Tag::Int: return TTE_VALUE_INT;
    case et::Tag::Double: return TTE_VALUE_DOUBLE;
    case et::Tag::Bool: return TTE_VALUE_BOOL;
    default: return TTE_VALUE_OTHER;
  }
}

bool file_readable(const std::string& path, std::string* reason) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *reason = std::strerror(errno);
    return false;
  }
  ::close(fd);
  return true;
}

// A DLManagedTensorVersioned with the arrays and memory it points to.
struct OutputTensor {
  DLManagedTensorVersioned managed{};
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  void* owned = nullptr;
  bool owned_on_device = false;
  int device = 0;

  static void destroy(DLManagedTensorVersioned* self) {
    auto* output = static_cast<OutputTensor*>(self->manager_ctx);
    if (output->owned != nullptr) {
      if (output->owned_on_device) {
        CurrentDevice guard(output->device);
        cudaFree(output->owned);
      } else {
        std::free(output->owned);
      }
    }
    delete output;
  }
};

void release_outputs(TteOutput* outputs, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    if (outputs[i].tensor != nullptr && outputs[i].tensor->deleter != nullptr) {
      outputs[i].tensor->deleter(outputs[i].tensor);
    }
    outputs[i] = TteOutput{};
  }
}

std::string hex_bytes(const std::string& bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string text;
  text.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    text += kDigits[c >> 4];
    text += kDigits[c & 15];
  }
  return text;
}

bool printable_utf8(const std::string& bytes) {
  for (unsigned char c : bytes) {
    if (c < 0x20 || c == 0x7f) {
      return false;
    }
  }
  return nlohmann::json::accept("\"" + bytes + "\"");
}

}  // namespace

struct Program::AlignedBytes {
  AlignedBytes(const void* source, size_t size) : size(size) {
    if (posix_memalign(&data, kBufferAlignment, size == 0 ? 1 : size) != 0) {
      data = nullptr;
    } else if (size > 0) {
      std::memcpy(data, source, size);
    }
  }
  ~AlignedBytes() { std::free(data); }
  AlignedBytes(const AlignedBytes&) = delete;
  AlignedBytes& operator=(const AlignedBytes&) = delete;

  void* data = nullptr;
  size_t size = 0;
};

struct MethodState {
  std::vector<DelegateRecord> records;
  bool info_load_tried = false;
  // Per output: memory the program gives a non-planned output.
  std::vector<bool> output_needs_buffer;
  std::vector<Allocation> output_buffers;
  // Per input: device copies of host tensors for device-tagged, non-planned
  // inputs.
  std::vector<Allocation> input_staging;
};

Program::Program() = default;
Program::~Program() {
  std::lock_guard<std::mutex> lock(mutex_);
  // The methods point into the buffers kept in methods_: drop them first.
  module_.reset();
  methods_.clear();
}

namespace {

ProgramStatus make_options_map(const std::vector<BackendOptionValue>& values,
                               std::vector<std::vector<et::BackendOption>>* storage,
                               std::vector<std::string>* backends, et::LoadBackendOptionsMap* map) {
  for (const BackendOptionValue& value : values) {
    const std::string label = value.backend + "." + value.key;
    if (value.backend.empty() || value.backend.size() >= kMaxBackendIdLength) {
      return ProgramStatus::Fail(TTE_ERROR_INVALID_ARGUMENT,
                                 "backend option '" + label + "': the backend name must have 1 to " +
                                     std::to_string(kMaxBackendIdLength - 1) + " characters");
    }
    if (value.key.empty() || value.key.size() >= et::kMaxOptionKeyLength) {
      return ProgramStatus::Fail(TTE_ERROR_INVALID_ARGUMENT,
                                 "backend option '" + label + "': the key must have 1 to " +
                                     std::to_string(et::kMaxOptionKeyLength - 1) + " characters");
    }
    et::BackendOption option;
    std::memcpy(option.key, value.key.data(), value.key.size());
    switch (value.type) {
      case TTE_OPTION_BOOL:
        option.value = value.int_value != 0;
        break;
      case TTE_OPTION_INT:
        if (value.int_value < std::numeric_limits<int>::min() ||
            value.int_value > std::numeric_limits<int>::max()) {
          return ProgramStatus::Fail(
              TTE_ERROR_INVALID_ARGUMENT,
              "backend option '" + label + "': " + std::to_string(value.int_value) +
                  " does not fit a 32-bit int (ExecuTorch's option type); pass it as a decimal "
                  "string");
        }
        option.value = static_cast<int>(value.int_value);
        break;
      case TTE_OPTION_STRING: {
        if (value.string_value.size() >= et::kMaxOptionValueLength) {
          return ProgramStatus::Fail(TTE_ERROR_INVALID_ARGUMENT,
                                     "backend option '" + label + "': string values hold at most " +
                                         std::to_string(et::kMaxOptionValueLength - 1) +
                                         " bytes, got " +
                                         std::to_string(value.string_value.size()));
        }
        std::array<char, et::kMaxOptionValueLength> text{};
        std::memcpy(text.data(), value.string_value.data(), value.string_value.size());
        option.value = text;
        break;
      }
      default:
        return ProgramStatus::Fail(TTE_ERROR_INVALID_ARGUMENT,
                                   "backend option '" + label + "': unknown type " +
                                       std::to_string(value.type) +
                                       " (expected TTE_OPTION_BOOL, _INT or _STRING)");
    }
    size_t slot = 0;
    while (slot < backends->size() && (*backends)[slot] != value.backend) {
      ++slot;
    }
    if (slot == backends->size()) {
      if (backends->size() == kMaxOptionBackends) {
        return ProgramStatus::Fail(TTE_ERROR_INVALID_ARGUMENT,
                                   "backend options name more than " +
                                       std::to_string(kMaxOptionBackends) +
                                       " backends (ExecuTorch's limit)");
      }
      backends->push_back(value.backend);
      storage->emplace_back();
    }
    std::vector<et::BackendOption>& options = (*storage)[slot];
    bool replaced = false;
    for (et::BackendOption& existing : options) {
      if (std::strcmp(existing.key, option.key) == 0) {
        existing = option;
        replaced = true;
      }
    }
    if (!replaced) {
      options.push_back(option);
    }
  }
  for (size_t i = 0; i < backends->size(); ++i) {
    const et::Error error = map->set_options(
        (*backends)[i].c_str(), et::Span<et::BackendOption>((*storage)[i].data(), (*storage)[i].size()));
    if (error != et::Error::Ok) {
      return ProgramStatus::Fail(TTE_ERROR_INVALID_ARGUMENT, "backend options for '" +
                                                                 (*backends)[i] + "' refused: " +
                                                                 et_error_text(error));
    }
  }
  return ProgramStatus::Ok();
}

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

// ExecuTorch 1.5.1 verifies the flatbuffer, whose schema makes every field
// optional, then dereferences them (MethodMeta::num_inputs, uses_backend,
// BackendDelegate::Init) and aborts on an unknown tensor dtype
// (MethodMeta::input_tensor_meta): a damaged file crashed the process.
// Refuse it here; exir writes all of these.
ProgramStatus check_required_fields(const uint8_t* data, size_t size, const std::string& label) {
  const auto damaged = [&](const std::string& what) {
    return ProgramStatus::Fail(TTE_ERROR_INVALID_PROGRAM,
                               "cannot load " + label + ": not a valid ExecuTorch program, or a "
                               "truncated or damaged one (" + what + ")");
  };
  const auto program = FlatTable::root(data, size);
  const auto plans = program ? program->field(1) : std::nullopt;
  if (!plans) return ProgramStatus::Ok();  // ExecuTorch has judged the rest
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
      const std::string where = "execution plan " + std::to_string(p) + ", delegate " + std::to_string(d);
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
  return ProgramStatus::Ok();
}

}  // namespace

ProgramStatus Program::open_file(const std::string& path, ProgramOptions options,
                                 std::unique_ptr<Program>* out) {
  std::string reason;
  if (!file_readable(path, &reason)) {
    return ProgramStatus::Fail(TTE_ERROR_NOT_FOUND,
                               "cannot open program '" + path + "': " + reason);
  }
  for (const std::string& data_path : options.data_paths) {
    if (!file_readable(data_path, &reason)) {
      return ProgramStatus::Fail(TTE_ERROR_NOT_FOUND,
                                 "cannot open data file '" + data_path + "': " + reason);
    }
  }
  std::unique_ptr<Program> program(new Program());
  program->options_ = std::move(options);
  const ProgramOptions& opts = program->options_;
  auto tracer = [&]() -> std::unique_ptr<et::EventTracer> {
    if (!opts.enable_etdump) {
      return nullptr;
    }
    return std::make_unique<executorch::etdump::ETDumpGen>();
  };
  constexpr auto kMode = Module::LoadMode::MmapUseMlockIgnoreErrors;
  if (opts.data_buffers.empty()) {
    program->module_ = std::make_unique<ProgramModule>(path, opts.data_paths, kMode, tracer());
  } else {
    if (opts.data_buffers.size() + opts.data_paths.size() > 1) {
      return ProgramStatus::Fail(
          TTE_ERROR_NOT_SUPPORTED,
          "several .ptd sources with at least one buffer: ExecuTorch's Module takes one data "
          "loader here; pass every .ptd as a path, or a single buffer");
    }
    auto loader = executorch::extension::MmapDataLoader::from(
        path.c_str(), executorch::extension::MmapDataLoader::MlockConfig::UseMlockIgnoreErrors);
    if (!loader.ok()) {
      return ProgramStatus::Fail(status_from_et(loader.error()),
                                 "cannot map program '" + path + "': " +
                                     et_error_text(loader.error()));
    }
    const std::vector<uint8_t>& data = opts.data_buffers[0];
    program->owned_bytes_.push_back(std::make_unique<AlignedBytes>(data.data(), data.size()));
    const AlignedBytes& bytes = *program->owned_bytes_.back();
    if (bytes.data == nullptr) {
      return ProgramStatus::Fail(TTE_ERROR_OUT_OF_MEMORY, "cannot copy the .ptd buffer (" +
                                                              std::to_string(data.size()) +
                                                              " bytes)");
    }
    program->module_ = std::make_unique<ProgramModule>(
        std::make_unique<executorch::extension::MmapDataLoader>(std::move(*loader)), nullptr,
        nullptr, tracer(),
        std::make_unique<executorch::extension::BufferDataLoader>(bytes.data, bytes.size));
  }
  ProgramStatus status = program->finish_open("program '" + path + "'");
  if (status.ok()) {
    auto mapped = executorch::extension::MmapDataLoader::from(
        path.c_str(), executorch::extension::MmapDataLoader::MlockConfig::NoMlock);
    auto size = mapped.ok() ? mapped->size() : et::Result<size_t>(mapped.error());
    if (size.ok()) {
      auto bytes = mapped->load(
          0, *size, et::DataLoader::SegmentInfo(et::DataLoader::SegmentInfo::Type::Program));
      if (bytes.ok()) {
        status = check_required_fields(static_cast<const uint8_t*>(bytes->data()), bytes->size(),
                                       "program '" + path + "'");
      }
    }
  }
  if (!status.ok()) {
    return status;
  }
  *out = std::move(program);
  return ProgramStatus::Ok();
}

ProgramStatus Program::open_buffer(const void* data, size_t size, ProgramOptions options,
                                   std::unique_ptr<Program>* out) {
  if (data == nullptr && size > 0) {
    return ProgramStatus::Fail(TTE_ERROR_INVALID_ARGUMENT, "program buffer is NULL");
  }
  std::string reason;
  for (const std::string& data_path : options.data_paths) {
    if (!file_readable(data_path, &reason)) {
      return ProgramStatus::Fail(TTE_ERROR_NOT_FOUND,
                                 "cannot open data file '" + data_path + "': " + reason);
    }
  }
  if (options.data_buffers.size() + options.data_paths.size() > 1) {
    return ProgramStatus::Fail(
        TTE_ERROR_NOT_SUPPORTED,
        "a program opened from a buffer takes at most one .ptd (ExecuTorch's Module takes one "
        "data loader here); open the program from a path to use several");
  }
  std::unique_ptr<Program> program(new Program());
  program->options_ = std::move(options);
  const ProgramOptions& opts = program->options_;

  program->owned_bytes_.push_back(std::make_unique<AlignedBytes>(data, size));
  const AlignedBytes& program_bytes = *program->owned_bytes_.back();
  if (program_bytes.data == nullptr) {
    return ProgramStatus::Fail(TTE_ERROR_OUT_OF_MEMORY,
                               "cannot copy the program buffer (" + std::to_string(size) + " bytes)");
  }
  auto program_loader =
      std::make_unique<executorch::extension::BufferDataLoader>(program_bytes.data, program_bytes.size);

  std::unique_ptr<et::DataLoader> data_loader;
  if (!opts.data_paths.empty()) {
    auto loader = executorch::extension::MmapDataLoader::from(
        opts.data_paths[0].c_str(),
        executorch::extension::MmapDataLoader::MlockConfig::UseMlockIgnoreErrors);
    if (!loader.ok()) {
      return ProgramStatus::Fail(status_from_et(loader.error()),
                                 "cannot map data file '" + opts.data_paths[0] + "': " +
                                     et_error_text(loader.error()));
    }
    data_loader = std::make_unique<executorch::extension::MmapDataLoader>(std::move(*loader));
  } else if (!opts.data_buffers.empty()) {
    const std::vector<uint8_t>& bytes = opts.data_buffers[0];
    program->owned_bytes_.push_back(std::make_unique<AlignedBytes>(bytes.data(), bytes.size()));
    const AlignedBytes& copy = *program->owned_bytes_.back();
    if (copy.data == nullptr) {
      return ProgramStatus::Fail(TTE_ERROR_OUT_OF_MEMORY, "cannot copy the .ptd buffer (" +
                                                              std::to_string(bytes.size()) +
                                                              " bytes)");
    }
    data_loader = std::make_unique<executorch::extension::BufferDataLoader>(copy.data, copy.size);
  }
  std::unique_ptr<et::EventTracer> tracer;
  if (opts.enable_etdump) {
    tracer = std::make_unique<executorch::etdump::ETDumpGen>();
  }
  program->module_ = std::make_unique<ProgramModule>(std::move(program_loader), nullptr, nullptr,
                                                     std::move(tracer), std::move(data_loader));
  ProgramStatus status = program->finish_open("program buffer");
  if (status.ok()) {
    status = check_required_fields(static_cast<const uint8_t*>(program_bytes.data),
                                   program_bytes.size, "program buffer");
  }
  if (!status.ok()) {
    return status;
  }
  *out = std::move(program);
  return ProgramStatus::Ok();
}

ProgramStatus Program::finish_open(const std::string& label) {
  std::vector<std::vector<et::BackendOption>> storage;
  std::vector<std::string> backends;
  et::LoadBackendOptionsMap map;
  ProgramStatus status = make_options_map(options_.backend_options, &storage, &backends, &map);
  if (!status.ok()) {
    return status;
  }
  // Module deep-copies the map; InternalConsistency makes a damaged file an
  // error instead of undefined behaviour.
  const et::Error error = module_->load(map, et::Program::Verification::InternalConsistency);
  if (error != et::Error::Ok) {
    std::string hint;
    if (error == et::Error::InvalidProgram || error == et::Error::InvalidArgument ||
        error == et::Error::InvalidExternalData) {
      hint = ": not a valid ExecuTorch program, or a truncated or damaged one";
      if (!options_.data_paths.empty() || !options_.data_buffers.empty()) {
        hint += " (or a damaged .ptd)";
      }
    } else if (error == et::Error::NotSupported) {
      hint = ": written by an ExecuTorch this runtime cannot read";
    }
    return ProgramStatus::Fail(error == et::Error::InvalidArgument ? TTE_ERROR_INVALID_PROGRAM
                                                                   : status_from_et(error),
                               "cannot load " + label + hint + " (" + et_error_text(error) + ")");
  }
  const std::shared_ptr<et::Program> program = module_->program();
  const size_t count = program->num_methods();
  for (size_t i = 0; i < count; ++i) {
    auto name = program->get_method_name(i);
    if (!name.ok()) {
      return ProgramStatus::Fail(TTE_ERROR_INVALID_PROGRAM,
                                 label + ": cannot read the name of method " + std::to_string(i) +
                                     " (" + et_error_text(name.error()) + ")");
    }
    method_names_.emplace_back(*name);
  }
  return ProgramStatus::Ok();
}

ProgramStatus Program::check_method(const std::string& method) const {
  for (const std::string& name : method_names_) {
    if (name == method) {
      return ProgramStatus::Ok();
    }
  }
  std::string known;
  for (const std::string& name : method_names_) {
    known += (known.empty() ? "'" : ", '") + name + "'";
  }
  return ProgramStatus::Fail(TTE_ERROR_NOT_FOUND, "the program has no method '" + method +
                                                      "' (it has " +
                                                      (known.empty() ? "none" : known) + ")");
}

ProgramStatus Program::ensure_loaded(const std::string& method, MethodState** state) {
  ProgramStatus status = check_method(method);
  if (!status.ok()) {
    return status;
  }
  std::unique_ptr<MethodState>& slot = methods_[method];
  if (!slot) {
    slot = std::make_unique<MethodState>();
  }
  *state = slot.get();
  if (module_->loaded_method(method) != nullptr) {
    return ProgramStatus::Ok();
  }

  auto meta = module_->method_meta(method);
  if (!meta.ok()) {
    return ProgramStatus::Fail(status_from_et(meta.error()),
                               "cannot read method '" + method + "': " + et_error_text(meta.error()));
  }
  // Method aborts the process on an I/O entry that points past its value
  // table; MethodMeta checks the same indices and returns an error.
  for (const bool is_input : {true, false}) {
    const size_t count = is_input ? meta->num_inputs() : meta->num_outputs();
    for (size_t i = 0; i < count; ++i) {
      auto tag = is_input ? meta->input_tag(i) : meta->output_tag(i);
      et::Error error = tag.error();
      if (tag.ok() && *tag == et::Tag::Tensor) {
        error = (is_input ? meta->input_tensor_meta(i) : meta->output_tensor_meta(i)).error();
      }
      if (error != et::Error::Ok) {
        return ProgramStatus::Fail(TTE_ERROR_INVALID_PROGRAM,
                                   "method '" + method + "' is damaged: " +
                                       (is_input ? "input " : "output ") + std::to_string(i) +
                                       " cannot be read (" + et_error_text(error) + ")");
      }
    }
  }
  // Module allocates (and zero-fills) the host arenas the program asks for;
  // refuse sizes no machine here could hold, e.g. from a damaged file.
  uint64_t host_bytes = 0;
  for (size_t i = 0; i < meta->num_memory_planned_buffers(); ++i) {
    auto size = meta->memory_planned_buffer_size(i);
    auto device = meta->memory_planned_buffer_device(i);
    if (!size.ok() || *size < 0) {
      return ProgramStatus::Fail(TTE_ERROR_INVALID_PROGRAM,
                                 "method '" + method + "' is damaged: planned buffer " +
                                     std::to_string(i) + " has no valid size");
    }
    if (!device.ok() || device->is_cpu()) {
      host_bytes += static_cast<uint64_t>(*size);
    }
  }
  const uint64_t physical = static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) *
                            static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  if (physical > 0 && host_bytes > physical) {
    return ProgramStatus::Fail(TTE_ERROR_OUT_OF_MEMORY,
                               "method '" + method + "' plans " + std::to_string(host_bytes) +
                                   " bytes of host memory, more than this machine has (" +
                                   std::to_string(physical) + ")");
  }
  // Device-planned arenas come from ExecuTorch's DeviceAllocator registry;
  // say why before Module fails with a bare NotFound.
  for (size_t i = 0; i < meta->num_memory_planned_buffers(); ++i) {
    auto device = meta->memory_planned_buffer_device(i);
    if (!device.ok() || device->is_cpu()) {
      continue;
    }
    auto size = meta->memory_planned_buffer_size(i);
    const std::string where = "method '" + method + "' plans " +
                              std::to_string(size.ok() ? *size : 0) + " bytes on cuda:" +
                              std::to_string(device->index()) +
                              " (exported with target_device=cuda:" +
                              std::to_string(device->index()) + ")";
    if (device->type() != DeviceType::CUDA) {
      return ProgramStatus::Fail(TTE_ERROR_NOT_SUPPORTED,
                                 "method '" + method + "' plans memory on device type " +
                                     std::to_string(static_cast<int>(device->type())) +
                                     ", which this runtime does not know");
    }
    if (cuda_device_count() == 0) {
      return ProgramStatus::Fail(
          TTE_ERROR_NO_DEVICE,
          where + ", but this process sees no CUDA device: run it on a machine with an NVIDIA "
                  "GPU, or export the program with host I/O");
    }
    if (device->index() >= cuda_device_count()) {
      return ProgramStatus::Fail(TTE_ERROR_NO_DEVICE,
                                 where + ", but this process sees only " +
                                     std::to_string(cuda_device_count()) + " CUDA device(s)");
    }
    if (et::get_device_allocator(DeviceType::CUDA) == nullptr) {
      return ProgramStatus::Fail(TTE_ERROR_INVALID_STATE,
                                 where + ", but no CUDA DeviceAllocator is registered with "
                                         "ExecuTorch");
    }
  }

  DelegateRecorder recorder;
  et::Error error;
  clear_thread_last_error();
  {
    DelegateRecorder::Scope scope(&recorder);
    error = module_->load_method(method);
  }
  slot->records = recorder.records();
  if (error != et::Error::Ok) {
    std::string message = "cannot load method '" + method + "': " + et_error_text(error);
    bool explained = false;
    for (const DelegateRecord& record : slot->records) {
      if (!record.error.empty()) {
        message += "; TensorRTBackend delegate: " + record.error;
        explained = true;
      }
    }
    if (!explained && !thread_last_error().empty()) {
      message += "; " + thread_last_error();
    }
    if (meta->uses_backend(TTE_BACKEND_NAME)) {
      if (et::get_backend_class(TTE_BACKEND_NAME) == nullptr) {
        message += "; backend " TTE_BACKEND_NAME " is not registered";
      } else if (tte_num_engine_providers() == 0) {
        message +=
            "; no engine provider is registered (load one with "
            "tte_load_engine_provider_library)";
      }
    }
    return ProgramStatus::Fail(status_from_et(error), message);
  }

  et::Method* loaded = module_->loaded_method(method);
  slot->output_needs_buffer.assign(loaded->outputs_size(), false);
  slot->output_buffers.clear();
  slot->output_buffers.resize(loaded->outputs_size());
  slot->input_staging.clear();
  slot->input_staging.resize(loaded->inputs_size());
  for (size_t i = 0; i < loaded->outputs_size(); ++i) {
    const et::EValue& value = loaded->get_output(i);
    auto info = meta->output_tensor_meta(i);
    slot->output_needs_buffer[i] = value.isTensor() && info.ok() && !info->is_memory_planned() &&
                                   value.toTensor().const_data_ptr() == nullptr;
  }
  return ProgramStatus::Ok();
}

ProgramStatus Program::load_method(const std::string& method) {
  std::lock_guard<std::mutex> lock(mutex_);
  MethodState* state = nullptr;
  return ensure_loaded(method, &state);
}

ProgramStatus Program::io_count(const std::string& method, size_t* num_inputs,
                                size_t* num_outputs) {
  std::lock_guard<std::mutex> lock(mutex_);
  ProgramStatus status = check_method(method);
  if (!status.ok()) {
    return status;
  }
  auto meta = module_->method_meta(method);
  if (!meta.ok()) {
    return ProgramStatus::Fail(status_from_et(meta.error()),
                               "cannot read method '" + method + "': " + et_error_text(meta.error()));
  }
  *num_inputs = meta->num_inputs();
  *num_outputs = meta->num_outputs();
  return ProgramStatus::Ok();
}

namespace {

ProgramStatus fill_value_info(const et::MethodMeta& meta, et::Method* loaded, bool is_input,
                              size_t index, TteValueInfo* info) {
  *info = TteValueInfo{};
  info->device_type = -1;
  info->device_index = -1;
  const size_t count = is_input ? meta.num_inputs() : meta.num_outputs();
  const std::string label = std::string(is_input ? "input " : "output ") + std::to_string(index);
  if (index >= count) {
    return ProgramStatus::Fail(TTE_ERROR_INVALID_ARGUMENT,
                               label + " does not exist: method '" + meta.name() + "' has " +
                                   std::to_string(count) + (is_input ? " inputs" : " outputs"));
  }
  auto tag = is_input ? meta.input_tag(index) : meta.output_tag(index);
  if (!tag.ok()) {
    return ProgramStatus::Fail(TTE_ERROR_INVALID_PROGRAM,
                               "cannot read the type of " + label + ": " + et_error_text(tag.error()));
  }
  info->tag = value_tag(*tag);
  if (*tag != et::Tag::Tensor) {
    return ProgramStatus::Ok();
  }
  auto tensor = is_input ? meta.input_tensor_meta(index) : meta.output_tensor_meta(index);
  if (!tensor.ok()) {
    return ProgramStatus::Fail(TTE_ERROR_INVALID_PROGRAM, "cannot read the metadata of " + label +
                                                              ": " + et_error_text(tensor.error()));
  }
  const auto sizes = tensor->sizes();
  if (sizes.size() > TTE_MAX_RANK) {
    return ProgramStatus::Fail(TTE_ERROR_NOT_SUPPORTED,
                               label + " has rank " + std::to_string(sizes.size()) +
                                   ", above TTE_MAX_RANK (" + std::to_string(TTE_MAX_RANK) + ")");
  }
  info->scalar_type = static_cast<int32_t>(tensor->scalar_type());
  info->rank = static_cast<int32_t>(sizes.size());
  for (size_t d = 0; d < sizes.size(); ++d) {
    info->sizes[d] = sizes[d];
  }
  info->is_memory_planned = tensor->is_memory_planned() ? 1 : 0;
  info->nbytes = tensor->nbytes();
  if (loaded != nullptr) {
    const et::EValue& value = is_input ? method_input(*loaded, index) : loaded->get_output(index);
    if (value.isTensor()) {
      info->device_type = value.toTensor().device_type() == DeviceType::CUDA ? TTE_DEVICE_CUDA
                                                                             : TTE_DEVICE_CPU;
      info->device_index = value.toTensor().device_index();
    }
  }
  return ProgramStatus::Ok();
}

nlohmann::json value_info_json(const TteValueInfo& info, const std::string& name) {
  nlohmann::json value;
  switch (info.tag) {
    case TTE_VALUE_NONE: value["tag"] = "none"; break;
    case TTE_VALUE_TENSOR: value["tag"] = "tensor"; break;
    case TTE_VALUE_INT: value["tag"] = "int"; break;
    case TTE_VALUE_DOUBLE: value["tag"] = "double"; break;
    case TTE_VALUE_BOOL: value["tag"] = "bool"; break;
    default: value["tag"] = "other"; break;
  }
  if (info.tag != TTE_VALUE_TENSOR) {
    return value;
  }
  if (!name.empty()) {
    value["name"] = name;
  }
  value["dtype"] = scalar_type_name(static_cast<ScalarType>(info.scalar_type));
  value["scalar_type"] = info.scalar_type;
  value["shape"] = std::vector<int64_t>(info.sizes, info.sizes + info.rank);
  value["memory_planned"] = info.is_memory_planned != 0;
  value["nbytes"] = info.nbytes;
  if (info.device_type == TTE_DEVICE_CUDA) {
    value["device"] = "cuda:" + std::to_string(info.device_index);
  } else if (info.device_type == TTE_DEVICE_CPU) {
    value["device"] = "cpu";
  } else {
    value["device"] = nullptr;
  }
  return value;
}

}  // namespace

ProgramStatus Program::value_info(const std::string& method, size_t index, bool is_input,
                                  TteValueInfo* info) {
  std::lock_guard<std::mutex> lock(mutex_);
  ProgramStatus status = check_method(method);
  if (!status.ok()) {
    return status;
  }
  auto meta = module_->method_meta(method);
  if (!meta.ok()) {
    return ProgramStatus::Fail(status_from_et(meta.error()),
                               "cannot read method '" + method + "': " + et_error_text(meta.error()));
  }
  // Devices are known only once the method is loaded; try that once here and
  // report -1 if it fails (run reports why).
  std::unique_ptr<MethodState>& slot = methods_[method];
  if (!slot) {
    slot = std::make_unique<MethodState>();
  }
  if (module_->loaded_method(method) == nullptr && !slot->info_load_tried) {
    slot->info_load_tried = true;
    MethodState* state = nullptr;
    ensure_loaded(method, &state);
  }
  return fill_value_info(*meta, module_->loaded_method(method), is_input, index, info);
}

ProgramStatus Program::input_info(const std::string& method, size_t index, TteValueInfo* info) {
  return value_info(method, index, true, info);
}

ProgramStatus Program::output_info(const std::string& method, size_t index, TteValueInfo* info) {
  return value_info(method, index, false, info);
}

ProgramStatus Program::describe_json(std::string* json) {
  std::lock_guard<std::mutex> lock(mutex_);
  nlohmann::json methods = nlohmann::json::array();
  for (const std::string& name : method_names_) {
    auto meta = module_->method_meta(name);
    if (!meta.ok()) {
      return ProgramStatus::Fail(status_from_et(meta.error()),
                                 "cannot read method '" + name + "': " + et_error_text(meta.error()));
    }
    et::Method* loaded = module_->loaded_method(name);
    nlohmann::json method;
    method["name"] = name;
    method["loaded"] = loaded != nullptr;
    for (const bool is_input : {true, false}) {
      nlohmann::json values = nlohmann::json::array();
      const size_t count = is_input ? meta->num_inputs() : meta->num_outputs();
      for (size_t i = 0; i < count; ++i) {
        TteValueInfo info;
        ProgramStatus status = fill_value_info(*meta, loaded, is_input, i, &info);
        if (!status.ok()) {
          return status;
        }
        std::string tensor_name;
        if (info.tag == TTE_VALUE_TENSOR) {
          auto tensor = is_input ? meta->input_tensor_meta(i) : meta->output_tensor_meta(i);
          tensor_name = std::string(tensor->name());
        }
        values.push_back(value_info_json(info, tensor_name));
      }
      method[is_input ? "inputs" : "outputs"] = std::move(values);
    }
    nlohmann::json backends = nlohmann::json::array();
    for (size_t i = 0; i < meta->num_backends(); ++i) {
      // One entry per delegate there; list each backend once.
      auto backend = meta->get_backend_name(i);
      if (backend.ok() &&
          std::find(backends.begin(), backends.end(), std::string(*backend)) == backends.end()) {
        backends.push_back(*backend);
      }
    }
    method["backends"] = std::move(backends);
    nlohmann::json delegates = nlohmann::json::array();
    auto state = methods_.find(name);
    if (state != methods_.end()) {
      for (const DelegateRecord& record : state->second->records) {
        nlohmann::json delegate;
        delegate["backend"] = TTE_BACKEND_NAME;
        delegate["provider"] = record.provider;
        nlohmann::json blob = nlohmann::json::parse(record.blob_json, nullptr, false);
        delegate["blob"] = blob.is_discarded() ? nlohmann::json(record.blob_json) : blob;
        nlohmann::json specs = nlohmann::json::array();
        for (const auto& spec : record.compile_specs) {
          nlohmann::json entry;
          entry["key"] = spec.first;
          entry["value"] = printable_utf8(spec.second) ? nlohmann::json(spec.second)
                                                       : nlohmann::json(nullptr);
          entry["value_hex"] = hex_bytes(spec.second);
          specs.push_back(std::move(entry));
        }
        delegate["compile_specs"] = std::move(specs);
        if (!record.error.empty()) {
          delegate["error"] = record.error;
        }
        delegates.push_back(std::move(delegate));
      }
    }
    method["delegates"] = std::move(delegates);
    methods.push_back(std::move(method));
  }
  nlohmann::json doc;
  doc["methods"] = std::move(methods);
  doc["etdump"] = options_.enable_etdump;
  *json = doc.dump();
  return ProgramStatus::Ok();
}

namespace {

struct InputContext {
  et::Method* method;
  MethodState* state;
  void* stream;
  bool stream_used = false;
};

ProgramStatus copy_async(void* dst, const void* src, size_t nbytes, InputContext& context,
                         const std::string& label) {
  if (nbytes == 0) {
    return ProgramStatus::Ok();
  }
  if (cuda_device_count() == 0) {
    return ProgramStatus::Fail(TTE_ERROR_NO_DEVICE,
                               label + " needs a CUDA copy, but this process sees no CUDA device");
  }
  const cudaError_t error = cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDefault,
                                            static_cast<cudaStream_t>(context.stream));
  if (error != cudaSuccess) {
    return ProgramStatus::Fail(TTE_ERROR_RUNTIME,
                               "copying " + label + " (" + std::to_string(nbytes) +
                                   " bytes) failed: " + cuda_error_text(error));
  }
  context.stream_used = true;
  return ProgramStatus::Ok();
}

ProgramStatus set_tensor_input(InputContext& context, const et::TensorInfo& meta, size_t index,
                               const DLTensor* tensor) {
  const std::string label = io_label(true, index, std::string(meta.name()));
  if (tensor == nullptr) {
    return ProgramStatus::Fail(TTE_ERROR_INVALID_ARGUMENT, label + " is a tensor but got NULL");
  }
  const MemorySpace space = memory_space(tensor->device.device_type);
  if (space == MemorySpace::kUnsupported) {
    return ProgramStatus::Fail(TTE_ERROR_NOT_SUPPORTED,
                               label + " is on " + device_name(tensor->device) +
                                   "; expected cpu, cuda, cuda_host or cuda_managed memory");
  }
  const std::optional<ScalarType> type = scalar_type_from_dlpack(tensor->dtype);
  if (!type || *type != meta.scalar_type()) {
    return ProgramStatus::Fail(TTE_ERROR_INVALID_ARGUMENT,
                               label + ": expected " + scalar_type_name(meta.scalar_type()) +
                                   ", got " + dlpack_dtype_name(tensor->dtype));
  }
  const auto bounds = meta.sizes();
  std::vector<int64_t> bound_dims(bounds.begin(), bounds.end());
  if (tensor->ndim < 0 || static_cast<size_t>(tensor->ndim) != bounds.size()) {
    return ProgramStatus::Fail(TTE_ERROR_INVALID_ARGUMENT,
                               label + ": expected rank " + std::to_string(bounds.size()) +
                                   " (shape " + format_dims(bound_dims) + "), got rank " +
                                   std::to_string(tensor->ndim));
  }
  if (tensor->ndim > 0 && tensor->shape == nullptr) {
    return ProgramStatus::Fail(TTE_ERROR_INVALID_ARGUMENT, label + " has a NULL shape array");
  }
  std::vector<int64_t> dims(tensor->shape, tensor->shape + tensor->ndim);

  const et::EValue& target_value = method_input(*context.method, index);
  const Tensor target = target_value.toTensor();
  const bool is_static =
      target.shape_dynamism() == executorch::aten::TensorShapeDynamism::STATIC;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] < 0 || dims[d] > std::numeric_limits<SizesType>::max()) {
      return ProgramStatus::Fail(TTE_ERROR_INVALID_ARGUMENT,
                                 label + " has an invalid shape " + format_dims(dims));
    }
    if (is_static && dims[d] != bound_dims[d]) {
      return ProgramStatus::Fail(TTE_ERROR_INVALID_ARGUMENT,
                                 label + ": expected shape " + format_dims(bound_dims) + ", got " +
                                     format_dims(dims) + " (the program's shape is static)");
    }
    if (!is_static && dims[d] > bound_dims[d]) {
      return ProgramStatus::Fail(TTE_ERROR_INVALID_ARGUMENT,
                                 label + ": shape " + format_dims(dims) +
                                     " exceeds the upper bounds " + format_dims(bound_dims) +
                                     " in dim " + std::to_string(d));
    }
  }
  const auto order = meta.dim_order();
  const std::vector<uint8_t> dim_order(order.begin(), order.end());
  const std::vector<int64_t> expected_strides = dense_strides(dims, dim_order);
  if (!strides_match(*tensor, expected_strides)) {
    const std::string strides =
        tensor->strides == nullptr
            ? std::string("row-major")
            : format_dims(tensor->strides, static_cast<size_t>(tensor->ndim));
    return ProgramStatus::Fail(TTE_ERROR_INVALID_ARGUMENT,
                               label + " is not contiguous (strides " + strides +
                                   ", expected " + format_dims(expected_strides) + " for shape " +
                                   format_dims(dims) + "); pass a contiguous copy");
  }
  const std::optional<uint64_t> count = element_count(tensor->shape, tensor->ndim);
  const size_t nbytes = static_cast<size_t>(*count) * et::elementSize(*type);
  if (tensor->data == nullptr && nbytes > 0) {
    return ProgramStatus::Fail(TTE_ERROR_INVALID_ARGUMENT,
                               label + " has NULL data but shape " + format_dims(dims));
  }
  char* source = tensor->data == nullptr
                     ? nullptr
                     : static_cast<char*>(tensor->data) + tensor->byte_offset;

  std::vector<SizesType> sizes(dims.begin(), dims.end());
  std::vector<StridesType> strides(expected_strides.begin(), expected_strides.end());
  std::vector<uint8_t> order_copy = dim_order;
  if (order_copy.size() != sizes.size()) {
    order_copy.resize(sizes.size());
    for (size_t d = 0; d < order_copy.size(); ++d) {
      order_copy[d] = static_cast<uint8_t>(d);
    }
  }
  const bool target_on_device = target.device_type() == DeviceType::CUDA;
  const int target_device = target.device_index();

  auto share_or_copy = [&](void* data, DeviceType tag) -> ProgramStatus {
    TensorImpl impl(meta.scalar_type(), static_cast<ssize_t>(sizes.size()), sizes.data(), data,
                    order_copy.data(), strides.data(),
                    executorch::aten::TensorShapeDynamism::STATIC, tag,
                    tag == DeviceType::CUDA ? target_device : 0);
    const et::Error error = context.method->set_input(et::EValue(Tensor(&impl)), index);
    if (error != et::Error::Ok) {
      return ProgramStatus::Fail(status_from_et(error),
                                 "setting " + label + " failed: " + et_error_text(error));
    }
    return ProgramStatus::Ok();
  };

  if (meta.is_memory_planned()) {
    if (space == MemorySpace::kHost && !target_on_device) {
      return share_or_copy(source, DeviceType::CPU);
    }
    const et::Error error = et::resize_tensor(target, {sizes.data(), sizes.size()});
    if (error != et::Error::Ok) {
      return ProgramStatus::Fail(status_from_et(error),
                                 "resizing " + label + " to " + format_dims(dims) +
                                     " failed: " + et_error_text(error));
    }
    return copy_async(target.mutable_data_ptr(), source, nbytes, context, label);
  }
  if (!target_on_device) {
    return share_or_copy(source, space == MemorySpace::kDevice ? DeviceType::CUDA : DeviceType::CPU);
  }
  if (space == MemorySpace::kDevice) {
    if (tensor->device.device_type == kDLCUDA && tensor->device.device_id != target_device) {
      return ProgramStatus::Fail(TTE_ERROR_INVALID_ARGUMENT,
                                 label + " is on " + device_name(tensor->device) +
                                     " but the program places it on cuda:" +
                                     std::to_string(target_device));
    }
    return share_or_copy(source, DeviceType::CUDA);
  }
  // A host tensor for an input the program keeps on the device: stage it.
  Allocation& staging = context.state->input_staging[index];
  ProgramStatus status = staging.reserve(nbytes, true, target_device, label);
  if (!status.ok()) {
    return status;
  }
  status = copy_async(staging.data(), source, nbytes, context, label);
  if (!status.ok()) {
    return status;
  }
  return share_or_copy(nbytes == 0 ? nullptr : staging.data(), DeviceType::CUDA);
}

ProgramStatus set_scalar_input(InputContext& context, et::Tag expected, size_t index,
                               const TteInput& input) {
  const std::string label = "input " + std::to_string(index);
  et::EValue value;
  bool matches = false;
  switch (expected) {
    case et::Tag::None:
      matches = input.tag == TTE_VALUE_NONE;
      break;
    case et::Tag::Int:
      matches = input.tag == TTE_VALUE_INT;
      value = et::EValue(input.int_value);
      break;
    case et::Tag::Double:
      matches = input.tag == TTE_VALUE_DOUBLE;
      value = et::EValue(input.double_value);
      break;
    case et::Tag::Bool:
      matches = input.tag == TTE_VALUE_BOOL;
      value = et::EValue(input.bool_value != 0);
      break;
    default:
      return ProgramStatus::Fail(TTE_ERROR_NOT_SUPPORTED,
                                 label + " is a " + tag_name(expected) +
                                     ", which the C API cannot pass");
  }
  if (!matches) {
    return ProgramStatus::Fail(TTE_ERROR_INVALID_ARGUMENT,
                               label + ": expected " + tag_name(expected) + ", got " +
                                   input_tag_name(input.tag));
  }
  const et::Error error = context.method->set_input(value, index);
  if (error != et::Error::Ok) {
    return ProgramStatus::Fail(
        status_from_et(error),
        "setting " + label + " failed: " + et_error_text(error) +
            (expected == et::Tag::None
                 ? std::string()
                 : std::string(" (ExecuTorch requires a ") + tag_name(expected) +
                       " input to equal the value the program was exported with)"));
  }
  return ProgramStatus::Ok();
}

ProgramStatus make_output(const et::EValue& value, size_t index, bool copy, void* stream,
                          TteOutput* output) {
  *output = TteOutput{};
  switch (value.tag) {
    case et::Tag::None:
      output->tag = TTE_VALUE_NONE;
      return ProgramStatus::Ok();
    case et::Tag::Int:
      output->tag = TTE_VALUE_INT;
      output->int_value = value.toInt();
      return ProgramStatus::Ok();
    case et::Tag::Double:
      output->tag = TTE_VALUE_DOUBLE;
      output->double_value = value.toDouble();
      return ProgramStatus::Ok();
    case et::Tag::Bool:
      output->tag = TTE_VALUE_BOOL;
      output->bool_value = value.toBool() ? 1 : 0;
      return ProgramStatus::Ok();
    case et::Tag::Tensor:
      break;
    default:
      output->tag = TTE_VALUE_OTHER;
      return ProgramStatus::Ok();
  }
  const Tensor tensor = value.toTensor();
  const std::optional<DLDataType> dtype = dlpack_from_scalar_type(tensor.scalar_type());
  if (!dtype) {
    return ProgramStatus::Fail(TTE_ERROR_NOT_SUPPORTED,
                               "output " + std::to_string(index) + " has element type " +
                                   scalar_type_name(tensor.scalar_type()) +
                                   ", which DLPack cannot describe");
  }
  auto result = std::make_unique<OutputTensor>();
  result->managed.manager_ctx = result.get();
  result->shape.assign(tensor.sizes().begin(), tensor.sizes().end());
  result->strides.assign(tensor.strides().begin(), tensor.strides().end());
  const DLDevice device = output_device(tensor);
  const size_t nbytes = tensor.nbytes();
  void* data = tensor.mutable_data_ptr();
  uint64_t flags = 0;
  if (copy && data != nullptr && nbytes > 0) {
    if (device.device_type == kDLCPU) {
      if (posix_memalign(&result->owned, kBufferAlignment, nbytes) != 0) {
        result->owned = nullptr;
        return ProgramStatus::Fail(TTE_ERROR_OUT_OF_MEMORY,
                                   "cannot allocate " + std::to_string(nbytes) +
                                       " host bytes for output " + std::to_string(index));
      }
      std::memcpy(result->owned, data, nbytes);
    } else {
      CurrentDevice guard(device.device_id);
      cudaError_t error = cudaMalloc(&result->owned, nbytes);
      if (error != cudaSuccess) {
        result->owned = nullptr;
        return ProgramStatus::Fail(TTE_ERROR_OUT_OF_MEMORY,
                                   "cannot allocate " + std::to_string(nbytes) + " bytes on " +
                                       device_name(device) + " for output " +
                                       std::to_string(index) + " (" + cuda_error_text(error) + ")");
      }
      result->owned_on_device = true;
      result->device = device.device_id;
      error = cudaMemcpyAsync(result->owned, data, nbytes, cudaMemcpyDefault,
                              static_cast<cudaStream_t>(stream));
      if (error == cudaSuccess) {
        error = cudaStreamSynchronize(static_cast<cudaStream_t>(stream));
      }
      if (error != cudaSuccess) {
        OutputTensor::destroy(&result.release()->managed);
        return ProgramStatus::Fail(TTE_ERROR_RUNTIME, "copying output " + std::to_string(index) +
                                                          " failed: " + cuda_error_text(error));
      }
    }
    data = result->owned;
    flags |= DLPACK_FLAG_BITMASK_IS_COPIED;
  } else if (copy) {
    data = nullptr;
    flags |= DLPACK_FLAG_BITMASK_IS_COPIED;
  }
  DLManagedTensorVersioned& managed = result->managed;
  managed.version = DLPackVersion{1, 0};
  managed.deleter = &OutputTensor::destroy;
  managed.flags = flags;
  managed.dl_tensor.data = data;
  managed.dl_tensor.device = device;
  managed.dl_tensor.ndim = static_cast<int32_t>(result->shape.size());
  managed.dl_tensor.dtype = *dtype;
  managed.dl_tensor.shape = result->shape.data();
  managed.dl_tensor.strides = result->strides.data();
  managed.dl_tensor.byte_offset = 0;
  output->tag = TTE_VALUE_TENSOR;
  output->tensor = &result.release()->managed;
  return ProgramStatus::Ok();
}

}  // namespace

ProgramStatus Program::run(const std::string& method, const TteInput* inputs, size_t num_inputs,
                           bool copy_outputs, TteOutput* outputs, size_t num_outputs) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (outputs == nullptr && num_outputs > 0) {
    return ProgramStatus::Fail(TTE_ERROR_INVALID_ARGUMENT, "outputs is NULL");
  }
  for (size_t i = 0; i < num_outputs; ++i) {
    outputs[i] = TteOutput{};
  }
  if (inputs == nullptr && num_inputs > 0) {
    return ProgramStatus::Fail(TTE_ERROR_INVALID_ARGUMENT, "inputs is NULL");
  }
  MethodState* state = nullptr;
  ProgramStatus status = ensure_loaded(method, &state);
  if (!status.ok()) {
    return status;
  }
  et::Method* loaded = module_->loaded_method(method);
  const et::MethodMeta meta = loaded->method_meta();
  if (num_inputs != meta.num_inputs()) {
    return ProgramStatus::Fail(TTE_ERROR_INVALID_ARGUMENT,
                               "method '" + method + "' takes " + std::to_string(meta.num_inputs()) +
                                   " inputs, got " + std::to_string(num_inputs));
  }
  if (num_outputs != meta.num_outputs()) {
    return ProgramStatus::Fail(TTE_ERROR_INVALID_ARGUMENT,
                               "method '" + method + "' returns " +
                                   std::to_string(meta.num_outputs()) + " outputs, but room for " +
                                   std::to_string(num_outputs) + " was given");
  }

  InputContext context{loaded, state, caller_stream()};
  for (size_t i = 0; i < num_inputs; ++i) {
    auto tag = meta.input_tag(i);
    if (!tag.ok()) {
      return ProgramStatus::Fail(TTE_ERROR_INVALID_PROGRAM,
                                 "cannot read the type of input " + std::to_string(i));
    }
    if (*tag == et::Tag::Tensor) {
      if (inputs[i].tag != TTE_VALUE_TENSOR) {
        return ProgramStatus::Fail(TTE_ERROR_INVALID_ARGUMENT,
                                   "input " + std::to_string(i) + ": expected a tensor, got " +
                                       input_tag_name(inputs[i].tag));
      }
      auto info = meta.input_tensor_meta(i);
      if (!info.ok()) {
        return ProgramStatus::Fail(TTE_ERROR_INVALID_PROGRAM,
                                   "cannot read the metadata of input " + std::to_string(i));
      }
      status = set_tensor_input(context, *info, i, inputs[i].tensor);
    } else {
      status = set_scalar_input(context, *tag, i, inputs[i]);
    }
    if (!status.ok()) {
      if (context.stream_used) {
        cudaStreamSynchronize(static_cast<cudaStream_t>(context.stream));
      }
      return status;
    }
  }
  if (context.stream_used) {
    const cudaError_t error = cudaStreamSynchronize(static_cast<cudaStream_t>(context.stream));
    if (error != cudaSuccess) {
      return ProgramStatus::Fail(TTE_ERROR_RUNTIME,
                                 "copying inputs failed: " + cuda_error_text(error));
    }
  }

  for (size_t i = 0; i < num_outputs; ++i) {
    if (!state->output_needs_buffer[i]) {
      continue;
    }
    auto info = meta.output_tensor_meta(i);
    const Tensor tensor = loaded->get_output(i).toTensor();
    const bool on_device = tensor.device_type() == DeviceType::CUDA;
    const std::string label = io_label(false, i, std::string(info->name()));
    status = state->output_buffers[i].reserve(info->nbytes(), on_device, tensor.device_index(),
                                              label);
    if (!status.ok()) {
      return status;
    }
    const et::Error error = loaded->set_output_data_ptr(state->output_buffers[i].data(),
                                                        state->output_buffers[i].capacity(), i);
    if (error != et::Error::Ok) {
      return ProgramStatus::Fail(status_from_et(error),
                                 "giving " + label + " its buffer failed: " + et_error_text(error));
    }
  }

  clear_thread_last_error();
  const et::Error error = loaded->execute();
  if (error != et::Error::Ok) {
    // A delegate's reason, when one failed; ExecuTorch's own checks only log.
    const std::string& reason = thread_last_error();
    return ProgramStatus::Fail(status_from_et(error),
                               "executing method '" + method + "' failed: " + et_error_text(error) +
                                   (reason.empty() ? std::string(" (the log says which step)")
                                                   : "; " + reason));
  }
  for (size_t i = 0; i < num_outputs; ++i) {
    status = make_output(loaded->get_output(i), i, copy_outputs, context.stream, &outputs[i]);
    if (!status.ok()) {
      release_outputs(outputs, num_outputs);
      return status;
    }
  }
  return ProgramStatus::Ok();
}

ProgramStatus Program::write_etdump(const std::string& path) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto* etdump = dynamic_cast<executorch::etdump::ETDumpGen*>(module_->event_tracer());
  if (etdump == nullptr) {
    return ProgramStatus::Fail(TTE_ERROR_INVALID_STATE,
                               "ETDump is off for this program: open it with enable_etdump set");
  }
  const executorch::etdump::ETDumpResult result = etdump->get_etdump_data();
  if (result.buf == nullptr || result.size == 0) {
    return ProgramStatus::Fail(TTE_ERROR_INVALID_STATE,
                               "no ETDump events recorded yet: run a method first");
  }
  FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) {
    const std::string reason = std::strerror(errno);
    std::free(result.buf);
    return ProgramStatus::Fail(TTE_ERROR_NOT_FOUND, "cannot write '" + path + "': " + reason);
  }
  const bool written = std::fwrite(result.buf, 1, result.size, file) == result.size;
  const bool closed = std::fclose(file) == 0;
  std::free(result.buf);
  if (!written || !closed) {
    return ProgramStatus::Fail(TTE_ERROR_RUNTIME, "writing '" + path + "' failed");
  }
  return ProgramStatus::Ok();
}

}  // namespace tte
