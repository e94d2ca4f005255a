#include "backend/engine_io.h"

#include <algorithm>
#include <limits>
#include <unordered_map>
#include <utility>

#include <executorch/runtime/core/exec_aten/util/scalar_type_util.h>

#include "blob/binding_names.h"
#include "common/dtypes.h"
#include "common/logging.h"
#include "common/text.h"

namespace tte {

namespace {

// The engine's tensors in its own order.
Status read_engine_tensors(const EngineProvider& provider, TteEngine* engine,
                           std::vector<EngineTensor>* out) {
  const TteEngineProvider& abi = provider.abi();
  TteError error{};
  int32_t count = 0;
  if (TteStatus s = abi.num_io_tensors(engine, &count, &error); s != TTE_OK) {
    return provider.call_failed(s, error, "num_io_tensors");
  }
  out->assign(static_cast<size_t>(std::max(count, 0)), EngineTensor{});
  std::unordered_map<std::string, int32_t> seen;
  for (int32_t i = 0; i < count; ++i) {
    TteIoTensorDesc desc{};
    if (TteStatus s = abi.describe_io_tensor(engine, i, &desc, &error); s != TTE_OK) {
      return provider.call_failed(s, error, "describe_io_tensor");
    }
    if (desc.name == nullptr || desc.name[0] == '\0') {
      return Status(TTE_ERROR_INVALID_PROGRAM,
                    "engine I/O tensor " + std::to_string(i) + " has no name");
    }
    EngineTensor& tensor = (*out)[i];
    tensor.name = desc.name;
    tensor.index = i;
    tensor.is_input = desc.is_input != 0;
    tensor.rank = desc.rank;
    tensor.aliased_input = desc.aliased_input;
    if (desc.is_shape_tensor != 0) {
      return Status(TTE_ERROR_NOT_SUPPORTED,
                    "engine tensor '" + tensor.name +
                        "' is a shape tensor; TensorRTBackend does not support shape tensors "
                        "(export the engine without shape-tensor inputs)");
    }
    if (desc.rank < 0 || desc.rank > TTE_MAX_RANK) {
      return Status(TTE_ERROR_INVALID_PROGRAM, "engine tensor '" + tensor.name + "' has rank " +
                                                   std::to_string(desc.rank) + "; expected 0.." +
                                                   std::to_string(TTE_MAX_RANK));
    }
    const auto dtype = static_cast<ScalarType>(desc.scalar_type);
    if (desc.scalar_type < 0 || desc.scalar_type > std::numeric_limits<int8_t>::max() ||
        !executorch::runtime::isValid(dtype)) {
      return Status(TTE_ERROR_INVALID_PROGRAM, "engine tensor '" + tensor.name +
                                                   "' has unknown scalar type " +
                                                   std::to_string(desc.scalar_type));
    }
    tensor.dtype = dtype;
    if (!seen.emplace(tensor.name, i).second) {
      return Status(TTE_ERROR_INVALID_PROGRAM,
                    "the engine has two I/O tensors named '" + tensor.name + "'");
    }
  }
  return Status::Ok();
}

// Binds the blob's input and output names to the engine's tensors.
Status match_names(const std::vector<EngineTensor>& engine_io, const BlobMetadata& metadata,
                   EngineIo* out) {
  std::vector<std::string> input_names;
  std::vector<std::string> output_names;
  if (metadata.io_bindings.empty()) {
    std::vector<EngineIoName> io_names;
    for (const EngineTensor& tensor : engine_io) {
      io_names.push_back(EngineIoName{tensor.name, tensor.is_input});
    }
    auto ordered = order_binding_names(io_names);
    if (!ordered) {
      return Status(
          TTE_ERROR_INVALID_PROGRAM,
          "the blob lists no io_bindings and the engine's names give no order: " + ordered.error());
    }
    input_names = ordered.value().inputs;
    output_names = ordered.value().outputs;
  } else {
    input_names = metadata.input_names();
    output_names = metadata.output_names();
  }
  std::unordered_map<std::string, size_t> by_name;
  for (size_t i = 0; i < engine_io.size(); ++i) {
    by_name.emplace(engine_io[i].name, i);
  }
  std::vector<std::string> missing;
  std::vector<std::string> wrong_direction;
  std::vector<bool> used(engine_io.size(), false);
  auto bind = [&](const std::vector<std::string>& names, bool is_input,
                  std::vector<EngineTensor>* bound) {
    for (const auto& name : names) {
      auto it = by_name.find(name);
      if (it == by_name.end()) {
        missing.push_back(name);
        continue;
      }
      used[it->second] = true;
      const EngineTensor& tensor = engine_io[it->second];
      if (tensor.is_input != is_input) {
        wrong_direction.push_back("'" + name + "' is an " + (is_input ? "input" : "output") +
                                  " in the blob but an " + (is_input ? "output" : "input") +
                                  " of the engine");
        continue;
      }
      bound->push_back(tensor);
    }
  };
  bind(input_names, true, &out->inputs);
  bind(output_names, false, &out->outputs);
  std::vector<std::string> extra;
  for (size_t i = 0; i < engine_io.size(); ++i) {
    if (!used[i]) {
      extra.push_back(engine_io[i].name);
    }
  }
  if (missing.empty() && extra.empty() && wrong_direction.empty()) {
    return Status::Ok();
  }
  std::string problem;
  if (!missing.empty()) {
    problem += "not in the engine: " + join_quoted(missing);
  }
  if (!extra.empty()) {
    problem +=
        (problem.empty() ? "" : "; ") + std::string("not in the blob: ") + join_quoted(extra);
  }
  for (const auto& text : wrong_direction) {
    problem += (problem.empty() ? "" : "; ") + text;
  }
  return Status(TTE_ERROR_INVALID_PROGRAM,
                "the blob's I/O bindings do not match the engine's tensors: " + problem);
}

Status read_profiles(const EngineProvider& provider, TteEngine* engine, EngineIo* io) {
  const TteEngineProvider& abi = provider.abi();
  TteError error{};
  if (TteStatus s = abi.num_profiles(engine, &io->num_profiles, &error); s != TTE_OK) {
    return provider.call_failed(s, error, "num_profiles");
  }
  if (io->num_profiles < 1) {
    return Status(TTE_ERROR_INVALID_PROGRAM, "the engine reports " +
                                                 std::to_string(io->num_profiles) +
                                                 " optimization profiles; expected at least 1");
  }
  for (EngineTensor& input : io->inputs) {
    for (int32_t p = 0; p < io->num_profiles; ++p) {
      std::vector<int64_t> min(input.rank), opt(input.rank), max(input.rank);
      TteStatus s =
          abi.profile_shape(engine, p, input.index, min.data(), opt.data(), max.data(), &error);
      if (s != TTE_OK) {
        return provider.call_failed(s, error, "profile_shape");
      }
      for (int32_t d = 0; d < input.rank; ++d) {
        if (min[d] < 0 || min[d] > max[d]) {
          return Status(TTE_ERROR_INVALID_PROGRAM,
                        "engine input '" + input.name + "' has an invalid range in profile " +
                            std::to_string(p) + ": min " + format_dims(min) + ", max " +
                            format_dims(max));
        }
      }
      input.min_dims.push_back(std::move(min));
      input.max_dims.push_back(std::move(max));
    }
  }
  return Status::Ok();
}

int32_t position_of(const std::vector<EngineTensor>& list, const std::string& name) {
  for (size_t i = 0; i < list.size(); ++i) {
    if (list[i].name == name) {
      return static_cast<int32_t>(i);
    }
  }
  return -1;
}

// Outputs written in place: the blob's aliased_io, checked against what the
// engine itself declares, plus the engine's undeclared ones.
Status bind_aliases(const BlobMetadata& metadata, const std::vector<EngineTensor>& engine_io,
                    EngineIo* io) {
  std::vector<EngineTensor>& inputs = io->inputs;
  std::vector<EngineTensor>& outputs = io->outputs;
  // The engine's own aliasing, by delegate positions.
  std::vector<int32_t> engine_alias(outputs.size(), -1);
  for (size_t o = 0; o < outputs.size(); ++o) {
    const int32_t aliased = outputs[o].aliased_input;
    if (aliased >= 0) {
      if (aliased >= static_cast<int32_t>(engine_io.size()) || !engine_io[aliased].is_input) {
        return Status(TTE_ERROR_INVALID_PROGRAM,
                      "engine output '" + outputs[o].name + "' claims to alias I/O tensor " +
                          std::to_string(aliased) + ", which is not an input");
      }
      engine_alias[o] = position_of(inputs, engine_io[aliased].name);
    }
    outputs[o].aliased_input = -1;
  }
  for (const AliasedIo& alias : metadata.aliased_io) {
    const int32_t o = position_of(outputs, alias.output);
    const int32_t i = position_of(inputs, alias.input);
    if (o < 0 || i < 0) {
      return Status(TTE_ERROR_INVALID_PROGRAM,
                    "aliased_io entry (output '" + alias.output + "', input '" + alias.input +
                        "'): " + (o < 0 ? "'" + alias.output + "'" : "'" + alias.input + "'") +
                        " is not a" + (o < 0 ? "n output" : "n input") + " of the engine");
    }
    EngineTensor& output = outputs[o];
    const EngineTensor& input = inputs[i];
    if (output.aliased_input >= 0) {
      return Status(TTE_ERROR_INVALID_PROGRAM,
                    "aliased_io lists output '" + output.name + "' twice");
    }
    if (output.dtype != input.dtype || output.rank != input.rank) {
      return Status(TTE_ERROR_INVALID_PROGRAM, "aliased_io: output '" + output.name + "' (" +
                                                   scalar_type_name(output.dtype) + ", rank " +
                                                   std::to_string(output.rank) +
                                                   ") cannot be written into input '" + input.name +
                                                   "' (" + scalar_type_name(input.dtype) +
                                                   ", rank " + std::to_string(input.rank) + ")");
    }
    if (alias.kind == AliasKind::kKvCacheUpdate && engine_alias[o] != i) {
      return Status(
          TTE_ERROR_INVALID_PROGRAM,
          "aliased_io says output '" + output.name + "' updates input '" + input.name +
              "' in place (kv_cache_update), but the engine " +
              (engine_alias[o] < 0 ? std::string("does not alias that output")
                                   : "aliases it to input '" + inputs[engine_alias[o]].name + "'"));
    }
    output.aliased_input = i;
    output.check_alias_shape = alias.kind == AliasKind::kUser;
  }
  // Outputs the engine writes in place but the blob does not declare (TR01
  // blobs): still bound to their input, or the engine would write elsewhere.
  for (size_t o = 0; o < outputs.size(); ++o) {
    if (outputs[o].aliased_input < 0 && engine_alias[o] >= 0) {
      TTE_LOG(DEBUG, "engine output '%s' is written into input '%s' in place",
              outputs[o].name.c_str(), inputs[engine_alias[o]].name.c_str());
      outputs[o].aliased_input = engine_alias[o];
    }
  }
  return Status::Ok();
}

}  // namespace

Status describe_engine_io(const EngineProvider& provider, TteEngine* engine,
                          const BlobMetadata& metadata, EngineIo* out) {
  std::vector<EngineTensor> engine_io;
  Status status = read_engine_tensors(provider, engine, &engine_io);
  if (status.ok()) {
    status = match_names(engine_io, metadata, out);
  }
  if (status.ok()) {
    status = read_profiles(provider, engine, out);
  }
  if (status.ok()) {
    status = bind_aliases(metadata, engine_io, out);
  }
  return status;
}

}  // namespace tte
