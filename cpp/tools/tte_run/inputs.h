// tte-run's method inputs: from .npy files and command-line values, or ones
// of each input's declared shape and dtype; placed on the device where the
// program keeps an input there.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "torch_tensorrt_executorch/c_api.h"

namespace tte::tools {

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

// Fills `value` for input `index` described by `info`, from `source` (a
// .npy path or a scalar's text; NULL for the default). The message says
// what is wrong.
std::optional<std::string> make_input(const TteValueInfo& info, size_t index,
                                      const std::string* source, InputValue* value);

}  // namespace tte::tools
