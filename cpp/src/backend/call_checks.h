// What the delegate checks on every call before the engine sees it: each
// argument against the engine tensor it is bound to (ExecuTorch's Method
// passes whatever the program holds, and the stock runtime reaches the
// delegate without the Program API's own checks), which optimization
// profile holds the input shapes, and that each output can take the shape
// the engine reports.
#pragma once

#include <cstdint>
#include <vector>

#include <executorch/runtime/core/evalue.h>
#include <executorch/runtime/core/span.h>

#include "backend/engine_io.h"
#include "common/status.h"

namespace tte {

using DelegateArgs = executorch::runtime::Span<executorch::runtime::EValue*>;

// One tensor per engine tensor, inputs then outputs: dtype, rank (an
// ExecuTorch 0-d tensor is a TensorRT [1]), default dim order, input data.
Status check_arguments(const EngineIo& io, DelegateArgs args);

// A tensor's dims as the engine sees them (`engine_rank` values).
void engine_dims(const executorch::aten::Tensor& tensor, int32_t engine_rank, int64_t* dims);

// The first profile whose ranges hold every input's shape; the failure
// lists, per profile, the input that does not fit.
Status choose_profile(const EngineIo& io, DelegateArgs args, int32_t* profile);

// Output `o` takes the shape `dims` (`rank` values) the engine computed:
// checks it (known dims, same shape as the input an undeclared alias writes
// into, the rank ExecuTorch planned) and resizes the tensor.
Status fit_output_shape(const EngineIo& io, size_t o, const int64_t* dims, int32_t rank,
                        DelegateArgs args);

// Whether the engine reports a dim of `dims` only after it runs
// (TTE_DATA_DEPENDENT_DIM: TensorRT's -1 for a data-dependent output).
bool has_data_dependent_dim(const int64_t* dims, int32_t rank);

// A data-dependent output before the run: its tensor takes `bound`, the
// shape ExecuTorch planned for it (its upper bound), so the engine gets all
// of its memory; the failure says when the engine's rank differs.
Status fit_bound_shape(const EngineIo& io, size_t o, int32_t rank,
                       const std::vector<executorch::aten::SizesType>& bound, DelegateArgs args);

}  // namespace tte
