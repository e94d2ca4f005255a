// tte-run: runs a method of a .pte through the plugin's C API and prints
// output shapes, dtypes, checksums and latency percentiles.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "npy_reader.h"
#include "npy_writer.h"
#include "torch_tensorrt_executorch/c_api.h"

namespace {

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

const char kUsage[] =
    "usage: tte-run MODEL.pte [--data F.ptd ...] [--method M] [--input F.npy|VALUE ...]\n"
    "               [--num-runs N] [--warmup N] [--provider LIB ...]\n"
    "               [--option BACKEND.KEY=VALUE ...] [--save-outputs DIR] [--json]\n"
    "\n"
    "Runs method M (default: forward, else the first) of MODEL.pte through the\n"
    "TensorRTBackend plugin and prints each output's dtype, shape and checksum (the\n"
    "sum of its elements as double) and latency percentiles over N runs (default 10,\n"
    "after 1 warmup run).\n"
    "\n"
    "  --data F.ptd        external data file; repeat for several\n"
    "  --input F.npy       one per method input, in order: a little-endian C-order\n"
    "                      .npy for tensors, a number or true/false for scalars;\n"
    "                      default: ones of the declared shape (upper bounds) and dtype\n"
    "  --provider LIB      load an engine-provider library (tte_engine_provider_entry)\n"
    "  --option B.K=V      load-time backend option; V is true/false, an integer that\n"
    "                      fits 32 bits, or else a string\n"
    "                      (e.g. TensorRTBackend.provider=test-host)\n"
    "  --save-outputs DIR  write DIR/output_<i>.npy per tensor output and\n"
    "                      DIR/outputs.json describing them\n"
    "  --json              print one JSON document instead of text\n"
    "\n"
    "Exit status: 0 ok, 1 failure, 2 usage error.\n";

struct Arguments {
  std::string model;
  std::vector<std::string> data_paths;
  std::string method;
  std::vector<std::string> inputs;
  int num_runs = 10;
  int warmup = 1;
  std::vector<std::string> providers;
  std::vector<std::string> options;
  std::string save_dir;
  bool json = false;
};

struct UsageError {
  std::string message;
};

bool parse_count(const std::string& text, int minimum, int* out) {
  if (text.empty() || text.size() > 9 ||
      !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return false;
  }
  *out = std::stoi(text);
  return *out >= minimum;
}

std::optional<UsageError> parse_arguments(int argc, char** argv, Arguments* args) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](std::string* out) -> bool {
      if (i + 1 >= argc) {
        return false;
      }
      *out = argv[++i];
      return true;
    };
    std::string text;
    if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(kExitOk);
    } else if (arg == "--json") {
      args->json = true;
    } else if (arg == "--data" || arg == "--input" || arg == "--provider" || arg == "--option" ||
               arg == "--method" || arg == "--save-outputs" || arg == "--num-runs" ||
               arg == "--warmup") {
      if (!value(&text)) {
        return UsageError{arg + " needs a value"};
      }
      if (arg == "--data") {
        args->data_paths.push_back(text);
      } else if (arg == "--input") {
        args->inputs.push_back(text);
      } else if (arg == "--provider") {
        args->providers.push_back(text);
      } else if (arg == "--option") {
        args->options.push_back(text);
      } else if (arg == "--method") {
        args->method = text;
      } else if (arg == "--save-outputs") {
        args->save_dir = text;
      } else if (arg == "--num-runs" && !parse_count(text, 1, &args->num_runs)) {
        return UsageError{"--num-runs takes a positive integer, got '" + text + "'"};
      } else if (arg == "--warmup" && !parse_count(text, 0, &args->warmup)) {
        return UsageError{"--warmup takes a non-negative integer, got '" + text + "'"};
      }
    } else if (!arg.empty() && arg[0] == '-') {
      return UsageError{"unknown option '" + arg + "'"};
    } else if (args->model.empty()) {
      args->model = arg;
    } else {
      return UsageError{"more than one model given ('" + args->model + "', '" + arg + "')"};
    }
  }
  if (args->model.empty()) {
    return UsageError{"no model given"};
  }
  return std::nullopt;
}

// Owned strings behind a TteBackendOption.
struct OptionText {
  std::string backend;
  std::string key;
  std::string value;
  TteBackendOption option{};
};

std::optional<UsageError> parse_option(const std::string& text, OptionText* out) {
  const size_t dot = text.find('.');
  const size_t equals = text.find('=');
  if (dot == std::string::npos || equals == std::string::npos || dot == 0 || equals < dot + 2) {
    return UsageError{"--option takes BACKEND.KEY=VALUE, got '" + text + "'"};
  }
  out->backend = text.substr(0, dot);
  out->key = text.substr(dot + 1, equals - dot - 1);
  out->value = text.substr(equals + 1);
  out->option.backend = out->backend.c_str();
  out->option.key = out->key.c_str();
  if (out->value == "true" || out->value == "false") {
    out->option.type = TTE_OPTION_BOOL;
    out->option.int_value = out->value == "true" ? 1 : 0;
    return std::nullopt;
  }
  char* end = nullptr;
  errno = 0;
  const long long number = std::strtoll(out->value.c_str(), &end, 10);
  if (!out->value.empty() && *end == '\0' && errno == 0 &&
      number >= std::numeric_limits<int32_t>::min() &&
      number <= std::numeric_limits<int32_t>::max()) {
    out->option.type = TTE_OPTION_INT;
    out->option.int_value = number;
    return std::nullopt;
  }
  out->option.type = TTE_OPTION_STRING;
  out->option.string_value = out->value.c_str();
  return std::nullopt;
}

// ExecuTorch ScalarType values (c_api.h reports these) and their DLPack
// dtypes, for the types tte-run can make, read and sum.
struct ScalarTypeEntry {
  int32_t scalar_type;
  DLDataType dtype;
  const char* name;
};
constexpr ScalarTypeEntry kScalarTypes[] = {
    {0, {kDLUInt, 8, 1}, "uint8"},        {1, {kDLInt, 8, 1}, "int8"},
    {2, {kDLInt, 16, 1}, "int16"},        {3, {kDLInt, 32, 1}, "int32"},
    {4, {kDLInt, 64, 1}, "int64"},        {5, {kDLFloat, 16, 1}, "float16"},
    {6, {kDLFloat, 32, 1}, "float32"},    {7, {kDLFloat, 64, 1}, "float64"},
    {9, {kDLComplex, 64, 1}, "complex64"}, {10, {kDLComplex, 128, 1}, "complex128"},
    {11, {kDLBool, 8, 1}, "bool"},        {15, {kDLBfloat, 16, 1}, "bfloat16"},
    {27, {kDLUInt, 16, 1}, "uint16"},     {28, {kDLUInt, 32, 1}, "uint32"},
    {29, {kDLUInt, 64, 1}, "uint64"},
};

const ScalarTypeEntry* entry_for_scalar_type(int32_t scalar_type) {
  for (const ScalarTypeEntry& entry : kScalarTypes) {
    if (entry.scalar_type == scalar_type) {
      return &entry;
    }
  }
  return nullptr;
}

const ScalarTypeEntry* entry_for_dtype(DLDataType dtype) {
  for (const ScalarTypeEntry& entry : kScalarTypes) {
    if (entry.dtype.code == dtype.code && entry.dtype.bits == dtype.bits &&
        entry.dtype.lanes == dtype.lanes) {
      return &entry;
    }
  }
  return nullptr;
}

double half_to_double(uint16_t bits) {
  const int sign = bits >> 15;
  const int exponent = (bits >> 10) & 0x1f;
  const int mantissa = bits & 0x3ff;
  double value;
  if (exponent == 0) {
    value = std::ldexp(mantissa, -24);
  } else if (exponent == 31) {
    value = mantissa == 0 ? std::numeric_limits<double>::infinity()
                          : std::numeric_limits<double>::quiet_NaN();
  } else {
    value = std::ldexp(mantissa + 1024, exponent - 25);
  }
  return sign ? -value : value;
}

double bfloat16_to_double(uint16_t bits) {
  const uint32_t widened = static_cast<uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &widened, sizeof(value));
  return value;
}

template <typename T>
T load(const uint8_t* p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}

// Sum of one element (real plus imaginary part for complex types).
double element_value(DLDataType dtype, const uint8_t* p) {
  switch (dtype.code) {
    case kDLBool: return *p != 0 ? 1.0 : 0.0;
    case kDLInt:
      switch (dtype.bits) {
        case 8: return load<int8_t>(p);
        case 16: return load<int16_t>(p);
        case 32: return load<int32_t>(p);
        default: return static_cast<double>(load<int64_t>(p));
      }
    case kDLUInt:
      switch (dtype.bits) {
        case 8: return load<uint8_t>(p);
        case 16: return load<uint16_t>(p);
        case 32: return load<uint32_t>(p);
        default: return static_cast<double>(load<uint64_t>(p));
      }
    case kDLFloat:
      switch (dtype.bits) {
        case 16: return half_to_double(load<uint16_t>(p));
        case 32: return load<float>(p);
        default: return load<double>(p);
      }
    case kDLBfloat: return bfloat16_to_double(load<uint16_t>(p));
    case kDLComplex:
      return dtype.bits == 64 ? static_cast<double>(load<float>(p)) + load<float>(p + 4)
                              : load<double>(p) + load<double>(p + 8);
    default: return std::numeric_limits<double>::quiet_NaN();
  }
}

void write_one(DLDataType dtype, uint8_t* p) {
  switch (dtype.code) {
    case kDLBool: *p = 1; return;
    case kDLInt:
    case kDLUInt: {
      const uint64_t one = 1;
      std::memcpy(p, &one, dtype.bits / 8);  // little-endian
      return;
    }
    case kDLFloat:
      if (dtype.bits == 16) {
        const uint16_t one = 0x3c00;
        std::memcpy(p, &one, 2);
      } else if (dtype.bits == 32) {
        const float one = 1.0f;
        std::memcpy(p, &one, 4);
      } else {
        const double one = 1.0;
        std::memcpy(p, &one, 8);
      }
      return;
    case kDLBfloat: {
      const uint16_t one = 0x3f80;
      std::memcpy(p, &one, 2);
      return;
    }
    case kDLComplex:
      std::memset(p, 0, dtype.bits / 8);
      if (dtype.bits == 64) {
        const float one = 1.0f;
        std::memcpy(p, &one, 4);
      } else {
        const double one = 1.0;
        std::memcpy(p, &one, 8);
      }
      return;
    default: return;
  }
}

// One method input, owning what its TteInput points to.
struct InputValue {
  TteInput input{};
  DLTensor tensor{};
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;
  std::string description;
  // Device copy of `data` for inputs the program keeps on a GPU, so the run
  // measures device-resident I/O rather than host staging.
  void* device_data = nullptr;

  InputValue() = default;
  InputValue(const InputValue&) = delete;
  InputValue& operator=(const InputValue&) = delete;
  ~InputValue() {
    if (device_data != nullptr) {
      cudaFree(device_data);
    }
  }
};

std::string dims_text(const std::vector<int64_t>& dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    text += (i ? ", " : "") + std::to_string(dims[i]);
  }
  return text + "]";
}

std::optional<std::string> make_input(const TteValueInfo& info, size_t index,
                                      const std::string* source, InputValue* value) {
  const std::string label = "input " + std::to_string(index);
  if (info.tag == TTE_VALUE_TENSOR) {
    value->input.tag = TTE_VALUE_TENSOR;
    if (source != nullptr) {
      tte::tools::NpyArray array;
      std::string error;
      if (!tte::tools::read_npy(*source, &array, &error)) {
        return label + ": " + error;
      }
      value->shape = array.shape;
      value->data = std::move(array.data);
      value->tensor.dtype = array.dtype;
      value->description = *source;
    } else {
      const ScalarTypeEntry* entry = entry_for_scalar_type(info.scalar_type);
      if (entry == nullptr) {
        return label + " has ScalarType " + std::to_string(info.scalar_type) +
               ", for which tte-run cannot make default values; pass --input";
      }
      value->shape.assign(info.sizes, info.sizes + info.rank);
      size_t count = 1;
      for (int64_t dim : value->shape) {
        count *= static_cast<size_t>(dim);
      }
      const size_t element = tte::tools::dtype_size(entry->dtype);
      value->data.assign(count * element, 0);
      for (size_t i = 0; i < count; ++i) {
        write_one(entry->dtype, value->data.data() + i * element);
      }
      value->tensor.dtype = entry->dtype;
      value->description = std::string("ones ") + entry->name + " " + dims_text(value->shape);
    }
    value->tensor.data = value->data.empty() ? nullptr : value->data.data();
    value->tensor.device = DLDevice{kDLCPU, 0};
    if (info.device_type == TTE_DEVICE_CUDA && !info.is_memory_planned && !value->data.empty()) {
      const int device = info.device_index;
      cudaError_t status = cudaSetDevice(device);
      if (status == cudaSuccess) {
        status = cudaMalloc(&value->device_data, value->data.size());
      }
      if (status == cudaSuccess) {
        status = cudaMemcpy(value->device_data, value->data.data(), value->data.size(),
                            cudaMemcpyHostToDevice);
      }
      if (status != cudaSuccess) {
        return label + " lives on cuda:" + std::to_string(device) +
               " in this program, but placing it there failed: " + cudaGetErrorString(status);
      }
      value->tensor.data = value->device_data;
      value->tensor.device = DLDevice{kDLCUDA, device};
      value->description += " (on cuda:" + std::to_string(device) + ")";
    }
    value->tensor.ndim = static_cast<int32_t>(value->shape.size());
    value->tensor.shape = value->shape.data();
    value->tensor.strides = nullptr;
    value->tensor.byte_offset = 0;
    value->input.tensor = &value->tensor;
    return std::nullopt;
  }
  const std::string text = source != nullptr ? *source : "1";
  value->description = text;
  value->input.tag = info.tag;
  char* end = nullptr;
  switch (info.tag) {
    case TTE_VALUE_NONE:
      return std::nullopt;
    case TTE_VALUE_BOOL:
      if (text != "true" && text != "false" && text != "1" && text != "0") {
        return label + " is a bool: pass true or false, got '" + text + "'";
      }
      value->input.bool_value = text == "true" || text == "1";
      return std::nullopt;
    case TTE_VALUE_INT:
      value->input.int_value = std::strtoll(text.c_str(), &end, 10);
      if (text.empty() || *end != '\0') {
        return label + " is an int, got '" + text + "'";
      }
      return std::nullopt;
    case TTE_VALUE_DOUBLE:
      value->input.double_value = std::strtod(text.c_str(), &end);
      if (text.empty() || *end != '\0') {
        return label + " is a double, got '" + text + "'";
      }
      return std::nullopt;
    default:
      return label + " has a type tte-run cannot pass";
  }
}

// An output copied to host memory in C order, for checksums and .npy files.
struct HostOutput {
  TteValueTag tag = TTE_VALUE_NONE;
  DLDataType dtype{};
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;
  std::string device;
  double checksum = 0;
  std::string scalar_text;
};

std::optional<std::string> to_host(const TteOutput& output, size_t index, HostOutput* host) {
  host->tag = output.tag;
  switch (output.tag) {
    case TTE_VALUE_INT:
      host->checksum = static_cast<double>(output.int_value);
      host->scalar_text = std::to_string(output.int_value);
      return std::nullopt;
    case TTE_VALUE_DOUBLE:
      host->checksum = output.double_value;
      host->scalar_text = std::to_string(output.double_value);
      return std::nullopt;
    case TTE_VALUE_BOOL:
      host->checksum = output.bool_value ? 1 : 0;
      host->scalar_text = output.bool_value ? "true" : "false";
      return std::nullopt;
    case TTE_VALUE_TENSOR:
      break;
    default:
      return std::nullopt;
  }
  const DLTensor& tensor = output.tensor->dl_tensor;
  host->dtype = tensor.dtype;
  host->shape.assign(tensor.shape, tensor.shape + tensor.ndim);
  const size_t element = tte::tools::dtype_size(tensor.dtype);
  size_t count = 1;
  for (int64_t dim : host->shape) {
    count *= static_cast<size_t>(dim);
  }
  // Elements the tensor spans in memory: one past the largest offset.
  size_t span = count;
  if (tensor.strides != nullptr && count > 0) {
    span = 1;
    for (int32_t d = 0; d < tensor.ndim; ++d) {
      span += static_cast<size_t>(tensor.shape[d] - 1) * static_cast<size_t>(tensor.strides[d]);
    }
  }
  std::vector<uint8_t> raw(span * element);
  const auto* source = static_cast<const uint8_t*>(tensor.data) + tensor.byte_offset;
  switch (tensor.device.device_type) {
    case kDLCPU:
    case kDLCUDAHost:
      host->device = tensor.device.device_type == kDLCPU ? "cpu" : "cuda_host";
      if (!raw.empty()) {
        std::memcpy(raw.data(), source, raw.size());
      }
      break;
    case kDLCUDA:
    case kDLCUDAManaged: {
      host->device = "cuda:" + std::to_string(tensor.device.device_id);
      if (!raw.empty()) {
        const cudaError_t error =
            cudaMemcpy(raw.data(), source, raw.size(), cudaMemcpyDefault);
        if (error != cudaSuccess) {
          return "copying output " + std::to_string(index) + " to the host failed: " +
                 cudaGetErrorString(error);
        }
      }
      break;
    }
    default:
      return "output " + std::to_string(index) + " is on an unsupported device type " +
             std::to_string(static_cast<int>(tensor.device.device_type));
  }
  // Gather into C order (outputs may carry a non-default dim order).
  host->data.resize(count * element);
  std::vector<int64_t> position(tensor.ndim, 0);
  for (size_t i = 0; i < count; ++i) {
    size_t offset = i;
    if (tensor.strides != nullptr) {
      offset = 0;
      for (int32_t d = 0; d < tensor.ndim; ++d) {
        offset += static_cast<size_t>(position[d] * tensor.strides[d]);
      }
      for (int32_t d = tensor.ndim - 1; d >= 0; --d) {
        if (++position[d] < tensor.shape[d]) {
          break;
        }
        position[d] = 0;
      }
    }
    std::memcpy(host->data.data() + i * element, raw.data() + offset * element, element);
    host->checksum += element_value(tensor.dtype, host->data.data() + i * element);
  }
  return std::nullopt;
}

double percentile(std::vector<double> sorted, double fraction) {
  const size_t rank = static_cast<size_t>(std::ceil(fraction * sorted.size()));
  return sorted[std::min(sorted.size() - 1, rank == 0 ? 0 : rank - 1)];
}

std::string dtype_name(DLDataType dtype) {
  const ScalarTypeEntry* entry = entry_for_dtype(dtype);
  return entry != nullptr ? entry->name
                          : "dtype(code " + std::to_string(dtype.code) + ", bits " +
                                std::to_string(dtype.bits) + ")";
}

int fail(const std::string& message) {
  std::fprintf(stderr, "tte-run: error: %s\n", message.c_str());
  return kExitFailure;
}

// `mkdir -p` with POSIX calls: std::filesystem needs a newer libstdc++ than
// manylinux_2_28 allows, and stat() a newer glibc (docs/packaging.md).
std::optional<std::string> make_directories(const std::string& path) {
  for (size_t end = path.find('/', 1);; end = path.find('/', end + 1)) {
    const std::string prefix = path.substr(0, end);
    if (mkdir(prefix.c_str(), 0777) != 0) {
      int error = errno;
      const int dir = open(prefix.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (dir < 0) {
        if (error == EEXIST) {
          error = errno;  // there, but not a directory
        }
        return std::string(std::strerror(error));
      }
      close(dir);
    }
    if (end == std::string::npos) {
      return std::nullopt;
    }
  }
}

std::string join_path(const std::string& dir, const std::string& name) {
  return !dir.empty() && dir.back() == '/' ? dir + name : dir + "/" + name;
}

void release_outputs(std::vector<TteOutput>& outputs) {
  for (TteOutput& output : outputs) {
    if (output.tensor != nullptr && output.tensor->deleter != nullptr) {
      output.tensor->deleter(output.tensor);
    }
    output = TteOutput{};
  }
}

const char kNoProvider[] =
    "no engine provider is registered: this build has no native TensorRT provider; pass "
    "--provider LIB";

int run(const Arguments& args) {
  TteError error{};
  for (const std::string& library : args.providers) {
    if (tte_load_engine_provider_library(library.c_str(), TTE_PROVIDER_OTHER, &error) != TTE_OK) {
      return fail("cannot load provider library '" + library + "': " + error.message);
    }
  }

  std::vector<OptionText> option_texts(args.options.size());
  std::vector<TteBackendOption> backend_options;
  for (size_t i = 0; i < args.options.size(); ++i) {
    if (auto usage = parse_option(args.options[i], &option_texts[i])) {
      std::fprintf(stderr, "tte-run: %s\n%s", usage->message.c_str(), kUsage);
      return kExitUsage;
    }
    backend_options.push_back(option_texts[i].option);
  }
  std::vector<const char*> data_paths;
  for (const std::string& path : args.data_paths) {
    data_paths.push_back(path.c_str());
  }
  TteProgramOptions options{};
  options.struct_size = sizeof(options);
  options.data_paths = data_paths.data();
  options.num_data_paths = data_paths.size();
  options.backend_options = backend_options.data();
  options.num_backend_options = backend_options.size();

  TteProgram* program = nullptr;
  if (tte_program_open_file(args.model.c_str(), &options, &program, &error) != TTE_OK) {
    return fail(error.message);
  }
  struct Closer {
    TteProgram* program;
    ~Closer() { tte_program_close(program); }
  } closer{program};

  size_t num_methods = 0;
  tte_program_num_methods(program, &num_methods, nullptr);
  std::string method = args.method;
  if (method.empty()) {
    for (size_t i = 0; i < num_methods; ++i) {
      const char* name = nullptr;
      tte_program_method_name(program, i, &name, nullptr);
      if (i == 0 || std::strcmp(name, "forward") == 0) {
        method = name;
      }
      if (method == "forward") {
        break;
      }
    }
    if (method.empty()) {
      return fail("'" + args.model + "' has no methods");
    }
  }

  // A program with TensorRT delegates cannot load without a provider; say so
  // before ExecuTorch reports a bare init failure.
  char* description = nullptr;
  if (tte_program_describe_json(program, &description, &error) != TTE_OK) {
    return fail(error.message);
  }
  const nlohmann::json described = nlohmann::json::parse(description, nullptr, false);
  tte_free_string(description);
  bool uses_tensorrt = false;
  if (described.is_object()) {
    for (const auto& entry : described["methods"]) {
      if (entry.value("name", "") == method) {
        for (const auto& backend : entry["backends"]) {
          uses_tensorrt = uses_tensorrt || backend == TTE_BACKEND_NAME;
        }
      }
    }
  }
  if (uses_tensorrt && tte_num_engine_providers() == 0) {
    return fail(kNoProvider);
  }

  if (tte_program_load_method(program, method.c_str(), &error) != TTE_OK) {
    return fail(error.message);
  }
  size_t num_inputs = 0;
  size_t num_outputs = 0;
  if (tte_program_method_io_count(program, method.c_str(), &num_inputs, &num_outputs, &error) !=
      TTE_OK) {
    return fail(error.message);
  }
  if (!args.inputs.empty() && args.inputs.size() != num_inputs) {
    std::fprintf(stderr, "tte-run: method '%s' takes %zu inputs, got %zu --input\n%s",
                 method.c_str(), num_inputs, args.inputs.size(), kUsage);
    return kExitUsage;
  }
  std::vector<InputValue> values(num_inputs);
  std::vector<TteInput> inputs(num_inputs);
  for (size_t i = 0; i < num_inputs; ++i) {
    TteValueInfo info{};
    if (tte_program_input_info(program, method.c_str(), i, &info, &error) != TTE_OK) {
      return fail(error.message);
    }
    const std::string* source = args.inputs.empty() ? nullptr : &args.inputs[i];
    if (auto message = make_input(info, i, source, &values[i])) {
      return fail(*message);
    }
    inputs[i] = values[i].input;
  }

  std::vector<TteOutput> outputs(num_outputs);
  std::vector<double> latencies_ms;
  const int total_runs = args.warmup + args.num_runs;
  for (int run_index = 0; run_index < total_runs; ++run_index) {
    release_outputs(outputs);
    const auto start = std::chrono::steady_clock::now();
    const TteStatus status = tte_program_run(program, method.c_str(), inputs.data(),
                                             inputs.size(), 0, outputs.data(), outputs.size(),
                                             &error);
    const auto end = std::chrono::steady_clock::now();
    if (status != TTE_OK) {
      return fail(error.message);
    }
    if (run_index >= args.warmup) {
      latencies_ms.push_back(std::chrono::duration<double, std::milli>(end - start).count());
    }
  }

  std::vector<HostOutput> host(num_outputs);
  for (size_t i = 0; i < num_outputs; ++i) {
    if (auto message = to_host(outputs[i], i, &host[i])) {
      release_outputs(outputs);
      return fail(*message);
    }
  }
  release_outputs(outputs);

  nlohmann::json saved = nlohmann::json::array();
  if (!args.save_dir.empty()) {
    if (auto error = make_directories(args.save_dir)) {
      return fail("cannot create '" + args.save_dir + "': " + *error);
    }
    for (size_t i = 0; i < num_outputs; ++i) {
      nlohmann::json entry;
      entry["index"] = i;
      if (host[i].tag != TTE_VALUE_TENSOR) {
        entry["file"] = nullptr;
        saved.push_back(entry);
        continue;
      }
      const std::string file = "output_" + std::to_string(i) + ".npy";
      std::string message;
      if (!tte::tools::write_npy(join_path(args.save_dir, file),
                                 host[i].dtype, host[i].shape, host[i].data.data(),
                                 host[i].data.size(), &message)) {
        return fail("output " + std::to_string(i) + ": " + message);
      }
      entry["file"] = file;
      entry["dtype"] = dtype_name(host[i].dtype);
      entry["shape"] = host[i].shape;
      saved.push_back(entry);
    }
    nlohmann::json manifest;
    manifest["model"] = args.model;
    manifest["method"] = method;
    manifest["inputs"] = nlohmann::json::array();
    for (const InputValue& value : values) {
      manifest["inputs"].push_back(value.description);
    }
    manifest["outputs"] = saved;
    FILE* file = std::fopen(join_path(args.save_dir, "outputs.json").c_str(), "w");
    if (file == nullptr) {
      return fail("cannot write outputs.json in '" + args.save_dir + "'");
    }
    std::fputs((manifest.dump(2) + "\n").c_str(), file);
    std::fclose(file);
  }

  std::vector<double> sorted = latencies_ms;
  std::sort(sorted.begin(), sorted.end());
  double mean = 0;
  for (double latency : sorted) {
    mean += latency / static_cast<double>(sorted.size());
  }
  const double p50 = percentile(sorted, 0.50);
  const double p90 = percentile(sorted, 0.90);
  const double p99 = percentile(sorted, 0.99);

  if (args.json) {
    nlohmann::json doc;
    doc["model"] = args.model;
    doc["method"] = method;
    doc["providers"] = nlohmann::json::array();
    for (size_t i = 0; i < tte_num_engine_providers(); ++i) {
      doc["providers"].push_back(tte_engine_provider_name(i));
    }
    doc["inputs"] = nlohmann::json::array();
    for (const InputValue& value : values) {
      doc["inputs"].push_back(value.description);
    }
    doc["outputs"] = nlohmann::json::array();
    for (size_t i = 0; i < num_outputs; ++i) {
      nlohmann::json entry;
      entry["index"] = i;
      switch (host[i].tag) {
        case TTE_VALUE_TENSOR:
          entry["tag"] = "tensor";
          entry["dtype"] = dtype_name(host[i].dtype);
          entry["shape"] = host[i].shape;
          entry["device"] = host[i].device;
          entry["checksum"] = host[i].checksum;
          break;
        case TTE_VALUE_INT:
        case TTE_VALUE_DOUBLE:
        case TTE_VALUE_BOOL:
          entry["tag"] = "scalar";
          entry["value"] = host[i].checksum;
          break;
        default:
          entry["tag"] = host[i].tag == TTE_VALUE_NONE ? "none" : "other";
      }
      doc["outputs"].push_back(entry);
    }
    doc["runs"] = args.num_runs;
    doc["warmup"] = args.warmup;
    doc["latency_ms"] = {{"p50", p50}, {"p90", p90}, {"p99", p99}, {"mean", mean},
                         {"min", sorted.front()}, {"max", sorted.back()}};
    if (!args.save_dir.empty()) {
      doc["saved_outputs"] = args.save_dir;
    }
    std::printf("%s\n", doc.dump(2).c_str());
    return kExitOk;
  }

  std::printf("model: %s\nmethod: %s (%zu inputs, %zu outputs)\n", args.model.c_str(),
              method.c_str(), num_inputs, num_outputs);
  for (size_t i = 0; i < num_inputs; ++i) {
    std::printf("input %zu: %s\n", i, values[i].description.c_str());
  }
  for (size_t i = 0; i < num_outputs; ++i) {
    switch (host[i].tag) {
      case TTE_VALUE_TENSOR:
        std::printf("output %zu: %s %s on %s, checksum %.6f\n", i,
                    dtype_name(host[i].dtype).c_str(), dims_text(host[i].shape).c_str(),
                    host[i].device.c_str(), host[i].checksum);
        break;
      case TTE_VALUE_INT:
      case TTE_VALUE_DOUBLE:
      case TTE_VALUE_BOOL:
        std::printf("output %zu: scalar %s\n", i, host[i].scalar_text.c_str());
        break;
      default:
        std::printf("output %zu: %s\n", i, host[i].tag == TTE_VALUE_NONE ? "none" : "other");
    }
  }
  std::printf("latency over %d runs (%d warmup): p50 %.3f ms, p90 %.3f ms, p99 %.3f ms, mean %.3f ms\n",
              args.num_runs, args.warmup, p50, p90, p99, mean);
  if (!args.save_dir.empty()) {
    std::printf("outputs saved to %s\n", args.save_dir.c_str());
  }
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  Arguments args;
  if (auto usage = parse_arguments(argc, argv, &args)) {
    std::fprintf(stderr, "tte-run: %s\n%s", usage->message.c_str(), kUsage);
    return kExitUsage;
  }
  return run(args);
}
