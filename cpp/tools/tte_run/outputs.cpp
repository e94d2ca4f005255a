#include "tools/tte_run/outputs.h"

#include <cuda_runtime_api.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include <nlohmann/json.hpp>

#include "common/dtypes.h"
#include "tools/tte_run/npy_reader.h"
#include "tools/tte_run/npy_writer.h"

namespace tte::tools {

namespace {

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

double element_value(DLDataType dtype, const uint8_t* p) {
  switch (dtype.code) {
    case kDLBool:
      return *p != 0 ? 1.0 : 0.0;
    case kDLInt:
      switch (dtype.bits) {
        case 8:
          return load<int8_t>(p);
        case 16:
          return load<int16_t>(p);
        case 32:
          return load<int32_t>(p);
        default:
          return static_cast<double>(load<int64_t>(p));
      }
    case kDLUInt:
      switch (dtype.bits) {
        case 8:
          return load<uint8_t>(p);
        case 16:
          return load<uint16_t>(p);
        case 32:
          return load<uint32_t>(p);
        default:
          return static_cast<double>(load<uint64_t>(p));
      }
    case kDLFloat:
      switch (dtype.bits) {
        case 16:
          return half_to_double(load<uint16_t>(p));
        case 32:
          return load<float>(p);
        default:
          return load<double>(p);
      }
    case kDLBfloat:
      return bfloat16_to_double(load<uint16_t>(p));
    case kDLComplex:
      return dtype.bits == 64 ? static_cast<double>(load<float>(p)) + load<float>(p + 4)
                              : load<double>(p) + load<double>(p + 8);
    default:
      return std::numeric_limits<double>::quiet_NaN();
  }
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

}  // namespace

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
  const size_t element = dtype_size(tensor.dtype);
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
        const cudaError_t error = cudaMemcpy(raw.data(), source, raw.size(), cudaMemcpyDefault);
        if (error != cudaSuccess) {
          return "copying output " + std::to_string(index) +
                 " to the host failed: " + cudaGetErrorString(error);
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

std::string output_dtype_name(DLDataType dtype) { return dlpack_dtype_name(dtype); }

std::optional<std::string> save_outputs(const std::string& dir, const std::string& model,
                                        const std::string& method,
                                        const std::vector<InputValue>& inputs,
                                        const std::vector<HostOutput>& outputs) {
  if (auto error = make_directories(dir)) {
    return "cannot create '" + dir + "': " + *error;
  }
  nlohmann::json saved = nlohmann::json::array();
  for (size_t i = 0; i < outputs.size(); ++i) {
    nlohmann::json entry;
    entry["index"] = i;
    if (outputs[i].tag != TTE_VALUE_TENSOR) {
      entry["file"] = nullptr;
      saved.push_back(entry);
      continue;
    }
    const std::string file = "output_" + std::to_string(i) + ".npy";
    std::string message;
    if (!write_npy(join_path(dir, file), outputs[i].dtype, outputs[i].shape, outputs[i].data.data(),
                   outputs[i].data.size(), &message)) {
      return "output " + std::to_string(i) + ": " + message;
    }
    entry["file"] = file;
    entry["dtype"] = output_dtype_name(outputs[i].dtype);
    entry["shape"] = outputs[i].shape;
    saved.push_back(entry);
  }
  nlohmann::json manifest;
  manifest["model"] = model;
  manifest["method"] = method;
  manifest["inputs"] = nlohmann::json::array();
  for (const InputValue& value : inputs) {
    manifest["inputs"].push_back(value.description);
  }
  manifest["outputs"] = saved;
  FILE* file = std::fopen(join_path(dir, "outputs.json").c_str(), "w");
  if (file == nullptr) {
    return "cannot write outputs.json in '" + dir + "'";
  }
  std::fputs((manifest.dump(2) + "\n").c_str(), file);
  std::fclose(file);
  return std::nullopt;
}

void release_outputs(std::vector<TteOutput>& outputs) {
  for (TteOutput& output : outputs) {
    if (output.tensor != nullptr && output.tensor->deleter != nullptr) {
      output.tensor->deleter(output.tensor);
    }
    output = TteOutput{};
  }
}

}  // namespace tte::tools
