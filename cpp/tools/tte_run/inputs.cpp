#include "tools/tte_run/inputs.h"

#include <cuda_runtime_api.h>

#include <cstdlib>
#include <cstring>

#include "common/dtypes.h"
#include "common/text.h"
#include "tools/tte_run/npy_reader.h"

namespace tte::tools {

namespace {

// The types whose "one" write_one knows.
bool can_write_one(DLDataType dtype) {
  switch (dtype.code) {
    case kDLBool:
    case kDLInt:
    case kDLUInt:
    case kDLFloat:
    case kDLBfloat:
    case kDLComplex:
      return true;
    default:
      return false;
  }
}

void write_one(DLDataType dtype, uint8_t* p) {
  switch (dtype.code) {
    case kDLBool:
      *p = 1;
      return;
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
    default:
      return;
  }
}

}  // namespace

std::optional<std::string> make_input(const TteValueInfo& info, size_t index,
                                      const std::string* source, InputValue* value) {
  const std::string label = "input " + std::to_string(index);
  if (info.tag == TTE_VALUE_TENSOR) {
    value->input.tag = TTE_VALUE_TENSOR;
    if (source != nullptr) {
      NpyArray array;
      std::string error;
      if (!read_npy(*source, &array, &error)) {
        return label + ": " + error;
      }
      value->shape = array.shape;
      value->data = std::move(array.data);
      value->tensor.dtype = array.dtype;
      value->description = *source;
    } else {
      const DtypeInfo* entry = find_dtype_by_value(info.scalar_type);
      const DLDataType dtype =
          entry != nullptr ? DLDataType{entry->dlpack_code, entry->dlpack_bits, 1} : DLDataType{};
      if (entry == nullptr || !can_write_one(dtype)) {
        return label + " has ScalarType " + std::to_string(info.scalar_type) +
               ", for which tte-run cannot make default values; pass --input";
      }
      value->shape.assign(info.sizes, info.sizes + info.rank);
      size_t count = 1;
      for (int64_t dim : value->shape) {
        count *= static_cast<size_t>(dim);
      }
      const size_t element = dtype_size(dtype);
      value->data.assign(count * element, 0);
      for (size_t i = 0; i < count; ++i) {
        write_one(dtype, value->data.data() + i * element);
      }
      value->tensor.dtype = dtype;
      value->description = std::string("ones ") + entry->name + " " + format_dims(value->shape);
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

}  // namespace tte::tools
