// An engine's I/O table as the delegate uses it: the provider's tensors
// matched to the delegate's arguments by name (never by position: engine
// order is the builder's choice), each with its dtype, rank and every
// profile's shape range, and the outputs written in place into an input.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <executorch/runtime/core/portable_type/scalar_type.h>

#include "backend/provider_registry.h"
#include "blob/blob_reader.h"
#include "common/status.h"

namespace tte {

struct EngineTensor {
  std::string name;
  int32_t index = -1;  // the engine's I/O index
  bool is_input = false;
  executorch::runtime::etensor::ScalarType dtype = executorch::runtime::etensor::ScalarType::Float;
  int32_t rank = 0;
  // Inputs: [profile] -> min and max dims.
  std::vector<std::vector<int64_t>> min_dims;
  std::vector<std::vector<int64_t>> max_dims;
  // Outputs written in place into an input: that input's position among the
  // delegate's inputs, else -1. `check_alias_shape`: the engine did not
  // declare the alias (kind "user"), so shapes are compared at execute.
  int32_t aliased_input = -1;
  bool check_alias_shape = false;
};

struct EngineIo {
  std::vector<EngineTensor> inputs;   // delegate-argument order
  std::vector<EngineTensor> outputs;  // delegate-argument order
  int32_t num_profiles = 1;

  size_t num_arguments() const { return inputs.size() + outputs.size(); }
  // Delegate argument `a`: inputs first, then outputs.
  const EngineTensor& argument(size_t a) const {
    return a < inputs.size() ? inputs[a] : outputs[a - inputs.size()];
  }
};

// Reads the engine's tensors and profiles through `provider` and binds them
// to the blob's io_bindings (or, when the blob lists none, to the order the
// engine's own names give) and aliased_io.
Status describe_engine_io(const EngineProvider& provider, TteEngine* engine,
                          const BlobMetadata& metadata, EngineIo* out);

}  // namespace tte
