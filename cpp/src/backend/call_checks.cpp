#include "backend/call_checks.h"

#include <algorithm>
#include <limits>
#include <string>

#include <executorch/runtime/core/exec_aten/util/tensor_util.h>

#include "common/dtypes.h"
#include "common/et_status.h"
#include "common/text.h"

namespace tte {

using executorch::aten::SizesType;
using executorch::aten::Tensor;
using executorch::runtime::ArrayRef;

namespace {

bool rank_matches(const Tensor& tensor, int32_t engine_rank) {
  return tensor.dim() == engine_rank || (tensor.dim() == 0 && engine_rank == 1);
}

bool has_default_dim_order(const Tensor& tensor) {
  const auto order = tensor.dim_order();
  for (size_t d = 0; d < order.size(); ++d) {
    if (order[d] != d) {
      return false;
    }
  }
  return true;
}

// "[1..8, 4]"
std::string range_text(const std::vector<int64_t>& min, const std::vector<int64_t>& max) {
  std::string text = "[";
  for (size_t i = 0; i < min.size(); ++i) {
    text += i == 0 ? "" : ", ";
    text += min[i] == max[i] ? std::to_string(min[i])
                             : std::to_string(min[i]) + ".." + std::to_string(max[i]);
  }
  return text + "]";
}

Status invalid(const std::string& message) { return Status(TTE_ERROR_INVALID_ARGUMENT, message); }

}  // namespace

void engine_dims(const Tensor& tensor, int32_t engine_rank, int64_t* dims) {
  if (tensor.dim() == 0) {
    dims[0] = 1;
    return;
  }
  for (int32_t d = 0; d < engine_rank; ++d) {
    dims[d] = tensor.size(d);
  }
}

Status check_arguments(const EngineIo& io, DelegateArgs args) {
  if (args.size() != io.num_arguments()) {
    return invalid("TensorRTBackend delegate expected " + std::to_string(io.num_arguments()) +
                   " arguments (" + std::to_string(io.inputs.size()) + " inputs + " +
                   std::to_string(io.outputs.size()) + " outputs), got " +
                   std::to_string(args.size()));
  }
  for (size_t a = 0; a < args.size(); ++a) {
    const bool is_input = a < io.inputs.size();
    const EngineTensor& spec = io.argument(a);
    // Messages are built only on failure.
    auto role = [is_input] { return std::string(is_input ? "input" : "output"); };
    if (args[a] == nullptr || !args[a]->isTensor()) {
      return invalid("delegate argument " + std::to_string(a) + " (" + role() + " '" + spec.name +
                     "') is not a tensor");
    }
    const Tensor& tensor = args[a]->toTensor();
    if (tensor.scalar_type() != spec.dtype) {
      return invalid(role() + " '" + spec.name + "': expected " + scalar_type_name(spec.dtype) +
                     ", got " + scalar_type_name(tensor.scalar_type()));
    }
    if (!rank_matches(tensor, spec.rank)) {
      return invalid(role() + " '" + spec.name + "': expected rank " + std::to_string(spec.rank) +
                     ", got rank " + std::to_string(tensor.dim()) + " (shape " +
                     format_dims(tensor.sizes()) + ")");
    }
    if (!has_default_dim_order(tensor)) {
      return invalid(role() + " '" + spec.name +
                     "': expected a contiguous tensor (default dim order), got dim order " +
                     format_dims(tensor.dim_order()));
    }
    if (is_input && tensor.nbytes() > 0 && tensor.const_data_ptr() == nullptr) {
      return invalid("input '" + spec.name + "' has no data");
    }
  }
  return Status::Ok();
}

Status choose_profile(const EngineIo& io, DelegateArgs args, int32_t* profile) {
  int64_t dims[TTE_MAX_RANK];
  std::string reasons;
  for (int32_t p = 0; p < io.num_profiles; ++p) {
    bool fits = true;
    for (size_t i = 0; i < io.inputs.size() && fits; ++i) {
      const EngineTensor& input = io.inputs[i];
      engine_dims(args[i]->toTensor(), input.rank, dims);
      for (int32_t d = 0; d < input.rank && fits; ++d) {
        fits = dims[d] >= input.min_dims[p][d] && dims[d] <= input.max_dims[p][d];
      }
      if (!fits) {
        reasons += (reasons.empty() ? "" : "; ");
        if (io.num_profiles > 1) {
          reasons += "profile " + std::to_string(p) + ": ";
        }
        reasons += "input '" + input.name + "' has shape " + format_dims(dims, input.rank) +
                   ", allowed " + range_text(input.min_dims[p], input.max_dims[p]);
      }
    }
    if (fits) {
      *profile = p;
      return Status::Ok();
    }
  }
  return invalid("the inputs fit no optimization profile of the engine: " + reasons);
}

Status fit_output_shape(const EngineIo& io, size_t o, const int64_t* dims, int32_t rank,
                        DelegateArgs args) {
  const EngineTensor& output = io.outputs[o];
  Tensor& tensor = args[io.inputs.size() + o]->toTensor();
  for (int32_t d = 0; d < rank; ++d) {
    if (dims[d] < 0 || dims[d] > std::numeric_limits<SizesType>::max()) {
      return Status(TTE_ERROR_INVALID_STATE, "the engine could not infer the shape of output '" +
                                                 output.name + "' (got " + format_dims(dims, rank) +
                                                 ")");
    }
  }
  if (output.aliased_input >= 0 && output.check_alias_shape) {
    const EngineTensor& input = io.inputs[output.aliased_input];
    int64_t input_dims[TTE_MAX_RANK];
    engine_dims(args[output.aliased_input]->toTensor(), input.rank, input_dims);
    if (rank != input.rank || !std::equal(dims, dims + rank, input_dims)) {
      return invalid("aliased output '" + output.name + "' has shape " + format_dims(dims, rank) +
                     " but the input '" + input.name + "' it is written into has " +
                     format_dims(input_dims, input.rank));
    }
  }
  if (tensor.dim() != rank) {
    // TensorRT has no 0-d tensors: an ExecuTorch scalar output is [1].
    if (tensor.dim() == 0 && rank == 1 && dims[0] == 1) {
      return Status::Ok();
    }
    return invalid("output '" + output.name + "': the engine gives shape " +
                   format_dims(dims, rank) + " but the delegate's output has rank " +
                   std::to_string(tensor.dim()));
  }
  SizesType sizes[TTE_MAX_RANK];
  bool same = true;
  for (int32_t d = 0; d < rank; ++d) {
    sizes[d] = static_cast<SizesType>(dims[d]);
    same = same && tensor.size(d) == sizes[d];
  }
  if (same) {
    return Status::Ok();
  }
  const executorch::runtime::Error resized =
      executorch::runtime::resize_tensor(tensor, ArrayRef<SizesType>(sizes, rank));
  if (resized != executorch::runtime::Error::Ok) {
    return Status(status_code_of(resized),
                  "output '" + output.name + "': cannot resize from " +
                      format_dims(tensor.sizes()) + " to the engine's " + format_dims(dims, rank) +
                      " (export the output with a dynamic shape whose upper bound holds it)");
  }
  return Status::Ok();
}

bool has_data_dependent_dim(const int64_t* dims, int32_t rank) {
  return std::find(dims, dims + rank, static_cast<int64_t>(TTE_DATA_DEPENDENT_DIM)) != dims + rank;
}

Status fit_bound_shape(const EngineIo& io, size_t o, int32_t rank,
                       const std::vector<SizesType>& bound, DelegateArgs args) {
  const EngineTensor& output = io.outputs[o];
  Tensor& tensor = args[io.inputs.size() + o]->toTensor();
  if (static_cast<int32_t>(bound.size()) != rank) {
    return invalid("output '" + output.name +
                   "': the engine gives a data-dependent shape of rank " + std::to_string(rank) +
                   " but the delegate's output has rank " + std::to_string(bound.size()));
  }
  const executorch::runtime::Error resized =
      executorch::runtime::resize_tensor(tensor, ArrayRef<SizesType>(bound.data(), bound.size()));
  if (resized != executorch::runtime::Error::Ok) {
    return Status(status_code_of(resized), "output '" + output.name +
                                               "': cannot give it back its planned upper bound " +
                                               format_dims(bound.data(), bound.size()));
  }
  return Status::Ok();
}

}  // namespace tte
