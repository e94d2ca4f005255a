// tte-run's view of the method's outputs: each copied to host memory in C
// order with its checksum (the sum of its elements), and written as .npy
// files with a manifest.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tools/tte_run/inputs.h"
#include "torch_tensorrt_executorch/c_api.h"

namespace tte::tools {

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

std::optional<std::string> to_host(const TteOutput& output, size_t index, HostOutput* host);

// "float32", ...; for messages and JSON.
std::string output_dtype_name(DLDataType dtype);

// DIR/output_<i>.npy per tensor output and DIR/outputs.json describing them.
std::optional<std::string> save_outputs(const std::string& dir, const std::string& model,
                                        const std::string& method,
                                        const std::vector<InputValue>& inputs,
                                        const std::vector<HostOutput>& outputs);

// Calls each tensor's deleter and resets every entry to NONE.
void release_outputs(std::vector<TteOutput>& outputs);

}  // namespace tte::tools
