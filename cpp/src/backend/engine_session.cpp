#include "backend/engine_session.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>
#include <unordered_map>
#include <utility>

#include <cuda_runtime_api.h>
#include <executorch/runtime/core/exec_aten/util/scalar_type_util.h>
#include <executorch/runtime/core/exec_aten/util/tensor_util.h>

#include "blob/binding_names.h"
#include "blob/blob_reader.h"
#include "cuda/caller_stream.h"
#include "cuda/cuda_device.h"
#include "backend/delegate_recorder.h"
#include "common/logging.h"
#include "common/runtime_stats.h"
#include "blob/weight_streaming_budget.h"

namespace tte {

// What TensorRTBackend accepts at load time, from runtime specs (load
// options) and compile specs.
struct LoadOptions {
  std::string provider;  // "" = the first that accepts
  bool cuda_graphs = false;
  bool has_weight_streaming_budget = false;
  int64_t weight_streaming_budget = 0;
};

namespace {

using executorch::aten::ScalarType;
using executorch::aten::SizesType;
using executorch::aten::Tensor;
using executorch::runtime::ArrayRef;
using executorch::runtime::BackendInitContext;
using executorch::runtime::BackendOption;
using executorch::runtime::CompileSpec;
using executorch::runtime::Error;
using executorch::runtime::EValue;
using executorch::runtime::FreeableBuffer;
using executorch::runtime::kMaxOptionValueLength;
using executorch::runtime::Result;
using executorch::runtime::Span;

constexpr const char* kProviderOption = "provider";
constexpr const char* kCudaGraphsOption = "cuda_graphs";
constexpr const char* kWeightStreamingBudget = "weight_streaming_budget";

// torch's dtype names, which is what users see in Python.
const char* dtype_name(ScalarType type) {
  switch (type) {
    case ScalarType::Float:
      return "float32";
    case ScalarType::Half:
      return "float16";
    case ScalarType::BFloat16:
      return "bfloat16";
    case ScalarType::Double:
      return "float64";
    case ScalarType::Long:
      return "int64";
    case ScalarType::Int:
      return "int32";
    case ScalarType::Short:
      return "int16";
    case ScalarType::Char:
      return "int8";
    case ScalarType::Byte:
      return "uint8";
    case ScalarType::Bool:
      return "bool";
    default:
      return executorch::runtime::toString(type);
  }
}

template <typename T>
std::string dims_text(const T* dims, size_t rank) {
  std::string text = "[";
  for (size_t i = 0; i < rank; ++i) {
    text += (i == 0 ? "" : ", ") + std::to_string(dims[i]);
  }
  return text + "]";
}

std::string dims_text(const std::vector<int64_t>& dims) {
  return dims_text(dims.data(), dims.size());
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

std::string join_quoted(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& name : names) {
    text += (text.empty() ? "'" : ", '") + name + "'";
  }
  return text;
}

Error to_error(TteStatus status) {
  switch (status) {
    case TTE_OK:
      return Error::Ok;
    case TTE_ERROR_INVALID_ARGUMENT:
      return Error::InvalidArgument;
    case TTE_ERROR_NOT_ACCEPTED:
      return Error::DelegateInvalidCompatibility;
    case TTE_ERROR_OUT_OF_MEMORY:
      return Error::MemoryAllocationFailed;
    case TTE_ERROR_NO_DEVICE:
    case TTE_ERROR_NOT_SUPPORTED:
      return Error::NotSupported;
    case TTE_ERROR_NOT_FOUND:
      return Error::NotFound;
    case TTE_ERROR_INVALID_PROGRAM:
      return Error::InvalidProgram;
    case TTE_ERROR_INVALID_STATE:
      return Error::InvalidState;
    default:
      return Error::Internal;
  }
}

Error cuda_failure(cudaError_t status, const std::string& what) {
  cudaGetLastError();
  TTE_LOG(ERROR, "%s failed: %s", what.c_str(), cuda_error_text(status));
  return status == cudaErrorMemoryAllocation ? Error::MemoryAllocationFailed : Error::Internal;
}

Result<LoadOptions> read_load_options(const BackendInitContext& context,
                                      ArrayRef<CompileSpec> compile_specs) {
  LoadOptions options;
  for (const CompileSpec& spec : compile_specs) {
    if (spec.key == nullptr || std::strcmp(spec.key, kWeightStreamingBudget) != 0) {
      continue;
    }
    auto budget = parse_weight_streaming_budget(spec.value.buffer, spec.value.nbytes);
    if (!budget) {
      TTE_LOG(ERROR, "compile spec '%s': %s", kWeightStreamingBudget, budget.error().c_str());
      return Error::InvalidProgram;
    }
    options.has_weight_streaming_budget = true;
    options.weight_streaming_budget = budget.value();
  }
  // Load options override compile specs.
  for (const BackendOption& option : context.runtime_specs()) {
    const auto* text = std::get_if<std::array<char, kMaxOptionValueLength>>(&option.value);
    const auto* integer = std::get_if<int>(&option.value);
    const auto* boolean = std::get_if<bool>(&option.value);
    if (std::strcmp(option.key, kProviderOption) == 0) {
      if (text == nullptr) {
        TTE_LOG(ERROR, "load option '%s' must be a string (an engine provider name)",
                kProviderOption);
        return Error::InvalidArgument;
      }
      options.provider = text->data();
    } else if (std::strcmp(option.key, kCudaGraphsOption) == 0) {
      if (boolean != nullptr) {
        options.cuda_graphs = *boolean;
      } else if (integer != nullptr) {
        options.cuda_graphs = *integer != 0;
      } else {
        TTE_LOG(ERROR, "load option '%s' must be a bool", kCudaGraphsOption);
        return Error::InvalidArgument;
      }
    } else if (std::strcmp(option.key, kWeightStreamingBudget) == 0) {
      if (integer != nullptr && *integer >= 0) {
        options.weight_streaming_budget = *integer;
      } else if (text != nullptr) {
        auto budget = parse_weight_streaming_budget(text->data(), std::strlen(text->data()));
        if (!budget) {
          TTE_LOG(ERROR, "load option '%s': %s", kWeightStreamingBudget, budget.error().c_str());
          return Error::InvalidArgument;
        }
        options.weight_streaming_budget = budget.value();
      } else {
        TTE_LOG(ERROR,
                "load option '%s' must be a non-negative int or a decimal string of bytes",
                kWeightStreamingBudget);
        return Error::InvalidArgument;
      }
      options.has_weight_streaming_budget = true;
    } else {
      TTE_LOG(WARNING, "ignoring unknown load option '%s' (known: %s, %s, %s)", option.key,
              kProviderOption, kCudaGraphsOption, kWeightStreamingBudget);
    }
  }
  return options;
}

// Adds the delegate's record to the thread's DelegateRecorder (when one is
// installed) however init ends, with the reason when it failed.
class RecordOnExit {
 public:
  RecordOnExit(const BackendInitContext& context, ArrayRef<CompileSpec> compile_specs)
      : recorder_(DelegateRecorder::current()) {
    if (recorder_ == nullptr) {
      return;
    }
    clear_thread_last_error();
    const char* method = context.get_method_name();
    record_.method = method != nullptr ? method : "";
    for (const CompileSpec& spec : compile_specs) {
      record_.compile_specs.emplace_back(
          spec.key != nullptr ? spec.key : "",
          std::string(static_cast<const char*>(spec.value.buffer), spec.value.nbytes));
    }
  }
  ~RecordOnExit() {
    if (recorder_ != nullptr) {
      if (!succeeded_) {
        record_.error = thread_last_error();
      }
      recorder_->add(std::move(record_));
    }
  }
  RecordOnExit(const RecordOnExit&) = delete;
  RecordOnExit& operator=(const RecordOnExit&) = delete;

  void set_blob(const DelegateBlob& blob) {
    if (recorder_ != nullptr) {
      record_.blob_json = describe_delegate_blob(blob);
    }
  }
  void set_provider(const std::string& name) { record_.provider = name; }
  void set_succeeded() { succeeded_ = true; }

 private:
  DelegateRecorder* recorder_;
  DelegateRecord record_;
  bool succeeded_ = false;
};

void count_copy(CopyKind kind, size_t bytes) {
  RuntimeStats::instance().record_copy(kind, bytes);
}

// A tensor's rank as the engine sees it: ExecuTorch 0-d tensors are [1] in
// TensorRT.
bool rank_matches(const Tensor& tensor, int32_t engine_rank) {
  return tensor.dim() == engine_rank || (tensor.dim() == 0 && engine_rank == 1);
}

void engine_dims(const Tensor& tensor, int32_t engine_rank, int64_t* dims) {
  if (tensor.dim() == 0) {
    dims[0] = 1;
    return;
  }
  for (int32_t d = 0; d < engine_rank; ++d) {
    dims[d] = tensor.size(d);
  }
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

PointerInfo locate(const Tensor& tensor) {
  // ExecuTorch's own device tag is authoritative and free; otherwise ask
  // CUDA (a CPU-tagged tensor may still hold memory the caller shared).
  if (tensor.unsafeGetTensorImpl()->device_type() == executorch::runtime::etensor::DeviceType::CUDA) {
    PointerInfo info;
    info.kind = PointerKind::kDevice;
    info.device = tensor.unsafeGetTensorImpl()->device_index();
    return info;
  }
  return classify_pointer(tensor.const_data_ptr());
}

}  // namespace

struct EngineSession::Binding {
  void* address = nullptr;  // what the engine reads or writes
  void* data = nullptr;     // the ExecuTorch tensor's memory
  size_t nbytes = 0;
  bool staged = false;      // `address` is a staging buffer, not `data`
  PointerKind kind = PointerKind::kUnregistered;
};

Result<EngineSession*> EngineSession::create(BackendInitContext& context,
                                             FreeableBuffer* processed,
                                             ArrayRef<CompileSpec> compile_specs) {
  RecordOnExit record(context, compile_specs);
  if (processed == nullptr) {
    TTE_LOG(ERROR, "TensorRTBackend init got no delegate blob");
    return Error::InvalidArgument;
  }
  auto data = processed->data_safe();
  if (!data.ok() || data.get() == nullptr) {
    TTE_LOG(ERROR, "TensorRTBackend init got an empty delegate blob");
    return Error::InvalidProgram;
  }
  auto parsed = parse_delegate_blob(data.get(), processed->size());
  if (!parsed) {
    TTE_LOG(ERROR, "invalid TensorRTBackend delegate blob: %s", parsed.error().c_str());
    return Error::InvalidProgram;
  }
  const DelegateBlob& blob = parsed.value();
  record.set_blob(blob);

  auto options = read_load_options(context, compile_specs);
  if (!options.ok()) {
    return options.error();
  }
  std::unique_ptr<EngineSession> session(new EngineSession());
  Error error = session->load_engine(blob, options.get());
  if (error != Error::Ok) {
    return error;
  }
  record.set_provider(session->provider_->name());
  // The engine holds its own copy of the plan: drop the blob's memory now
  // rather than at program teardown.
  processed->Free();

  error = session->describe_engine(blob.metadata);
  if (error != Error::Ok) {
    return error;
  }
  if (options.get().cuda_graphs) {
    if (session->provider_->host_memory()) {
      TTE_LOG(INFO, "load option cuda_graphs ignored: provider '%s' runs on the host",
              session->provider_->name().c_str());
    } else if (!session->provider_->enqueue_capturable()) {
      TTE_LOG(INFO,
              "load option cuda_graphs ignored: provider '%s' says its enqueue cannot be "
              "captured into a CUDA graph",
              session->provider_->name().c_str());
    } else {
      session->graphs_ = std::make_unique<CudaGraphCache>();
    }
  }
  TTE_LOG(DEBUG, "delegate of method '%s': provider '%s', %zu inputs, %zu outputs, %d profiles",
          context.get_method_name() != nullptr ? context.get_method_name() : "",
          session->provider_->name().c_str(), session->inputs_.size(), session->outputs_.size(),
          session->num_profiles_);
  record.set_succeeded();
  return session.release();
}

Error EngineSession::load_engine(const DelegateBlob& blob, const LoadOptions& options) {
  const int32_t device_id = blob.metadata.device_id;
  if (device_id < 0) {
    TTE_LOG(ERROR, "delegate blob has device_id %d; expected a CUDA device index >= 0",
            device_id);
    return Error::InvalidProgram;
  }
  ProviderRegistry& registry = ProviderRegistry::instance();
  std::vector<ProviderRef> candidates;
  if (!options.provider.empty()) {
    ProviderRef named = registry.find(options.provider);
    if (named == nullptr) {
      std::vector<std::string> names;
      for (const auto& p : registry.providers()) {
        names.push_back(p->name());
      }
      TTE_LOG(ERROR, "engine provider '%s' (load option 'provider') is not registered; %s",
              options.provider.c_str(),
              names.empty() ? "no provider is registered"
                            : ("registered: " + join_quoted(names)).c_str());
      return Error::NotFound;
    }
    candidates.push_back(std::move(named));
  } else {
    candidates = registry.providers();
    if (candidates.empty()) {
      TTE_LOG(ERROR,
              "no engine provider is registered, so TensorRTBackend cannot load TensorRT "
              "engines: import torch_tensorrt_executorch_runtime in Python (needs "
              "tensorrt-lean-cu13 or tensorrt-cu13), or load a provider library with "
              "tte_load_engine_provider_library (tte-run --provider LIB)");
      return Error::NotFound;
    }
  }

  const int device_count = cuda_device_count();
  std::vector<std::string> refusals;
  bool no_device = false;
  bool bad_device = false;
  for (const ProviderRef& candidate : candidates) {
    const TteEngineProvider& abi = candidate->abi();
    const bool host = candidate->host_memory();
    // Device-memory providers are never asked without the device: some
    // TensorRT runtimes crash deserializing on a machine without a GPU.
    if (!host && device_count == 0) {
      refusals.push_back("'" + candidate->name() + "' needs a CUDA device");
      no_device = true;
      continue;
    }
    if (!host && device_id >= device_count) {
      refusals.push_back("'" + candidate->name() + "' needs cuda:" + std::to_string(device_id));
      bad_device = true;
      continue;
    }
    std::optional<DeviceGuard> guard;
    if (!host) {
      guard.emplace(device_id);
      if (guard->status() != cudaSuccess) {
        return cuda_failure(guard->status(), "selecting cuda:" + std::to_string(device_id));
      }
    }
    TteEngineLoadOptions load_options{};
    load_options.struct_size = sizeof(load_options);
    load_options.device_id = device_id;
    load_options.has_weight_streaming_budget = options.has_weight_streaming_budget ? 1 : 0;
    load_options.weight_streaming_budget = options.weight_streaming_budget;
    TteEngine* engine = nullptr;
    TteError error{};
    TteStatus status = abi.deserialize(abi.user_data, blob.engine, blob.engine_size,
                                       &load_options, &engine, &error);
    if (status == TTE_ERROR_NOT_ACCEPTED && options.provider.empty()) {
      refusals.push_back("'" + candidate->name() + "': " + error.message);
      continue;
    }
    if (status != TTE_OK) {
      TTE_LOG(ERROR, "engine provider '%s' could not load the engine (%llu bytes): %s",
              candidate->name().c_str(), static_cast<unsigned long long>(blob.engine_size),
              error.message);
      return to_error(status);
    }
    if (engine == nullptr) {
      TTE_LOG(ERROR, "engine provider '%s' reported success but returned no engine",
              candidate->name().c_str());
      return Error::Internal;
    }
    provider_ = candidate;
    engine_ = engine;
    device_ = host ? -1 : device_id;
    integrated_ = !host && is_integrated_gpu(device_id);
    return Error::Ok;
  }

  std::string reasons;
  for (const auto& refusal : refusals) {
    reasons += (reasons.empty() ? "" : "; ") + refusal;
  }
  if (no_device) {
    TTE_LOG(ERROR, "no CUDA device: TensorRTBackend needs an NVIDIA GPU (%s)", reasons.c_str());
    return Error::NotSupported;
  }
  if (bad_device) {
    TTE_LOG(ERROR,
            "the engine is for cuda:%d but this process sees %d CUDA device(s) (check "
            "CUDA_VISIBLE_DEVICES) (%s)",
            device_id, device_count, reasons.c_str());
    return Error::DelegateInvalidCompatibility;
  }
  TTE_LOG(ERROR, "no registered engine provider accepts this engine: %s", reasons.c_str());
  return Error::DelegateInvalidCompatibility;
}

Error EngineSession::describe_engine(const BlobMetadata& metadata) {
  const TteEngineProvider& abi = provider_->abi();
  TteError error{};
  int32_t count = 0;
  if (TteStatus s = abi.num_io_tensors(engine_, &count, &error); s != TTE_OK) {
    return provider_call(s, error, "num_io_tensors");
  }
  std::vector<EngineTensor> engine_io(static_cast<size_t>(std::max(count, 0)));
  std::vector<EngineIoName> io_names;
  std::unordered_map<std::string, size_t> by_name;
  for (int32_t i = 0; i < count; ++i) {
    TteIoTensorDesc desc{};
    if (TteStatus s = abi.describe_io_tensor(engine_, i, &desc, &error); s != TTE_OK) {
      return provider_call(s, error, "describe_io_tensor");
    }
    if (desc.name == nullptr || desc.name[0] == '\0') {
      TTE_LOG(ERROR, "engine I/O tensor %d has no name", i);
      return Error::InvalidProgram;
    }
    EngineTensor& tensor = engine_io[i];
    tensor.name = desc.name;
    tensor.index = i;
    tensor.is_input = desc.is_input != 0;
    tensor.rank = desc.rank;
    tensor.aliased_input = desc.aliased_input;
    if (desc.is_shape_tensor != 0) {
      TTE_LOG(ERROR,
              "engine tensor '%s' is a shape tensor; TensorRTBackend does not support shape "
              "tensors (export the engine without shape-tensor inputs)",
              tensor.name.c_str());
      return Error::NotSupported;
    }
    if (desc.rank < 0 || desc.rank > TTE_MAX_RANK) {
      TTE_LOG(ERROR, "engine tensor '%s' has rank %d; expected 0..%d", tensor.name.c_str(),
              desc.rank, TTE_MAX_RANK);
      return Error::InvalidProgram;
    }
    const auto dtype = static_cast<ScalarType>(desc.scalar_type);
    if (desc.scalar_type < 0 || desc.scalar_type > std::numeric_limits<int8_t>::max() ||
        !executorch::runtime::isValid(dtype)) {
      TTE_LOG(ERROR, "engine tensor '%s' has unknown scalar type %d", tensor.name.c_str(),
              desc.scalar_type);
      return Error::InvalidProgram;
    }
    tensor.dtype = dtype;
    if (!by_name.emplace(tensor.name, i).second) {
      TTE_LOG(ERROR, "the engine has two I/O tensors named '%s'", tensor.name.c_str());
      return Error::InvalidProgram;
    }
    io_names.push_back(EngineIoName{tensor.name, tensor.is_input});
  }

  // Delegate arguments are bound to engine tensors by name, never by
  // position: engine order is the builder's choice.
  std::vector<std::string> input_names;
  std::vector<std::string> output_names;
  if (metadata.io_bindings.empty()) {
    auto ordered = order_binding_names(io_names);
    if (!ordered) {
      TTE_LOG(ERROR, "the blob lists no io_bindings and the engine's names give no order: %s",
              ordered.error().c_str());
      return Error::InvalidProgram;
    }
    input_names = ordered.value().inputs;
    output_names = ordered.value().outputs;
  } else {
    input_names = metadata.input_names();
    output_names = metadata.output_names();
  }
  std::vector<std::string> missing;
  std::vector<std::string> wrong_direction;
  std::vector<bool> used(engine_io.size(), false);
  auto bind = [&](const std::vector<std::string>& names, bool is_input,
                  std::vector<EngineTensor>* out) {
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
      out->push_back(tensor);
    }
  };
  bind(input_names, true, &inputs_);
  bind(output_names, false, &outputs_);
  std::vector<std::string> extra;
  for (size_t i = 0; i < engine_io.size(); ++i) {
    if (!used[i]) {
      extra.push_back(engine_io[i].name);
    }
  }
  if (!missing.empty() || !extra.empty() || !wrong_direction.empty()) {
    std::string problem;
    if (!missing.empty()) {
      problem += "not in the engine: " + join_quoted(missing);
    }
    if (!extra.empty()) {
      problem += (problem.empty() ? "" : "; ") + std::string("not in the blob: ") +
                 join_quoted(extra);
    }
    for (const auto& text : wrong_direction) {
      problem += (problem.empty() ? "" : "; ") + text;
    }
    TTE_LOG(ERROR, "the blob's I/O bindings do not match the engine's tensors: %s",
            problem.c_str());
    return Error::InvalidProgram;
  }

  if (TteStatus s = abi.num_profiles(engine_, &num_profiles_, &error); s != TTE_OK) {
    return provider_call(s, error, "num_profiles");
  }
  if (num_profiles_ < 1) {
    TTE_LOG(ERROR, "the engine reports %d optimization profiles; expected at least 1",
            num_profiles_);
    return Error::InvalidProgram;
  }
  for (EngineTensor& input : inputs_) {
    for (int32_t p = 0; p < num_profiles_; ++p) {
      std::vector<int64_t> min(input.rank), opt(input.rank), max(input.rank);
      TteStatus s = abi.profile_shape(engine_, p, input.index, min.data(), opt.data(),
                                      max.data(), &error);
      if (s != TTE_OK) {
        return provider_call(s, error, "profile_shape");
      }
      for (int32_t d = 0; d < input.rank; ++d) {
        if (min[d] < 0 || min[d] > max[d]) {
          TTE_LOG(ERROR, "engine input '%s' has an invalid range in profile %d: min %s, max %s",
                  input.name.c_str(), p, dims_text(min).c_str(), dims_text(max).c_str());
          return Error::InvalidProgram;
        }
      }
      input.min_dims.push_back(std::move(min));
      input.max_dims.push_back(std::move(max));
    }
  }
  return bind_aliases(metadata, engine_io);
}

Error EngineSession::bind_aliases(const BlobMetadata& metadata,
                                  const std::vector<EngineTensor>& engine_io) {
  auto position = [](const std::vector<EngineTensor>& list, const std::string& name) {
    for (size_t i = 0; i < list.size(); ++i) {
      if (list[i].name == name) {
        return static_cast<int32_t>(i);
      }
    }
    return int32_t{-1};
  };
  // The engine's own aliasing, by session positions.
  std::vector<int32_t> engine_alias(outputs_.size(), -1);
  for (size_t o = 0; o < outputs_.size(); ++o) {
    const int32_t aliased = outputs_[o].aliased_input;
    if (aliased >= 0) {
      if (aliased >= static_cast<int32_t>(engine_io.size()) || !engine_io[aliased].is_input) {
        TTE_LOG(ERROR, "engine output '%s' claims to alias I/O tensor %d, which is not an input",
                outputs_[o].name.c_str(), aliased);
        return Error::InvalidProgram;
      }
      engine_alias[o] = position(inputs_, engine_io[aliased].name);
    }
    outputs_[o].aliased_input = -1;
  }
  for (const AliasedIo& alias : metadata.aliased_io) {
    const int32_t o = position(outputs_, alias.output);
    const int32_t i = position(inputs_, alias.input);
    if (o < 0 || i < 0) {
      TTE_LOG(ERROR, "aliased_io entry (output '%s', input '%s'): %s is not a%s of the engine",
              alias.output.c_str(), alias.input.c_str(),
              o < 0 ? ("'" + alias.output + "'").c_str() : ("'" + alias.input + "'").c_str(),
              o < 0 ? "n output" : "n input");
      return Error::InvalidProgram;
    }
    EngineTensor& output = outputs_[o];
    const EngineTensor& input = inputs_[i];
    if (output.aliased_input >= 0) {
      TTE_LOG(ERROR, "aliased_io lists output '%s' twice", output.name.c_str());
      return Error::InvalidProgram;
    }
    if (output.dtype != input.dtype || output.rank != input.rank) {
      TTE_LOG(ERROR,
              "aliased_io: output '%s' (%s, rank %d) cannot be written into input '%s' (%s, "
              "rank %d)",
              output.name.c_str(), dtype_name(output.dtype), output.rank, input.name.c_str(),
              dtype_name(input.dtype), input.rank);
      return Error::InvalidProgram;
    }
    if (alias.kind == AliasKind::kKvCacheUpdate && engine_alias[o] != i) {
      TTE_LOG(ERROR,
              "aliased_io says output '%s' updates input '%s' in place (kv_cache_update), but "
              "the engine %s",
              output.name.c_str(), input.name.c_str(),
              engine_alias[o] < 0
                  ? "does not alias that output"
                  : ("aliases it to input '" + inputs_[engine_alias[o]].name + "'").c_str());
      return Error::InvalidProgram;
    }
    output.aliased_input = i;
    output.check_alias_shape = alias.kind == AliasKind::kUser;
  }
  // Outputs the engine writes in place but the blob does not declare (TR01
  // blobs): still bound to their input, or the engine would write elsewhere.
  for (size_t o = 0; o < outputs_.size(); ++o) {
    if (outputs_[o].aliased_input < 0 && engine_alias[o] >= 0) {
      TTE_LOG(DEBUG, "engine output '%s' is written into input '%s' in place",
              outputs_[o].name.c_str(), inputs_[engine_alias[o]].name.c_str());
      outputs_[o].aliased_input = engine_alias[o];
    }
  }
  return Error::Ok;
}

EngineSession::~EngineSession() {
  if (provider_ == nullptr) {
    return;
  }
  std::optional<DeviceGuard> guard;
  if (device_ >= 0) {
    guard.emplace(device_);
  }
  if (stream_ != nullptr) {
    cudaStreamSynchronize(static_cast<cudaStream_t>(stream_));
  }
  // Graphs refer to the engine's kernels and memory: destroy them first.
  graphs_.reset();
  if (engine_ != nullptr) {
    provider_->abi().destroy(engine_);
    engine_ = nullptr;
  }
  if (stream_ != nullptr) {
    cudaStreamDestroy(static_cast<cudaStream_t>(stream_));
    stream_ = nullptr;
  }
  if (device_ >= 0) {
    cudaGetLastError();
  }
}

Error EngineSession::provider_call(TteStatus status, const TteError& error,
                                   const char* what) const {
  if (status == TTE_OK) {
    return Error::Ok;
  }
  TTE_LOG(ERROR, "engine provider '%s': %s failed: %s", provider_->name().c_str(), what,
          error.message[0] != '\0' ? error.message : "(no message)");
  return to_error(status);
}

Result<void*> EngineSession::own_stream() {
  if (stream_ == nullptr) {
    cudaStream_t stream = nullptr;
    // A blocking stream, on purpose: callers that set no stream usually
    // produced their device inputs on the legacy default stream (torch's
    // default), and only a blocking stream waits for that work. Handles'
    // own streams still run in parallel with each other.
    cudaError_t status = cudaStreamCreateWithFlags(&stream, cudaStreamDefault);
    if (status != cudaSuccess) {
      return cuda_failure(status, "creating the delegate's CUDA stream");
    }
    stream_ = stream;
  }
  return stream_;
}

void* EngineSession::zero_size_address() {
  // Engines reject NULL addresses even for empty tensors.
  if (provider_->host_memory()) {
    alignas(256) static char host_dummy[256];
    return host_dummy;
  }
  if (zero_size_device_.reserve(256, device_) != cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  return zero_size_device_.data();
}

Error EngineSession::execute(executorch::runtime::BackendExecutionContext& /*context*/,
                             Span<EValue*> args) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (device_ < 0) {
    return execute_locked(args);
  }
  DeviceGuard guard(device_);
  if (guard.status() != cudaSuccess) {
    return cuda_failure(guard.status(), "selecting cuda:" + std::to_string(device_));
  }
  return execute_locked(args);
}

Error EngineSession::execute_locked(Span<EValue*> args) {
  const size_t expected = inputs_.size() + outputs_.size();
  if (args.size() != expected) {
    TTE_LOG(ERROR,
            "TensorRTBackend delegate expected %zu arguments (%zu inputs + %zu outputs), got %zu",
            expected, inputs_.size(), outputs_.size(), args.size());
    return Error::InvalidArgument;
  }
  Error error = check_arguments(args);
  if (error != Error::Ok) {
    return error;
  }
  void* stream = nullptr;
  if (!provider_->host_memory()) {
    if (!caller_stream(&stream)) {
      auto own = own_stream();
      if (!own.ok()) {
        return own.error();
      }
      stream = own.get();
    }
  }
  error = choose_profile(args, stream);
  if (error == Error::Ok) {
    error = resize_outputs(args);
  }
  if (error != Error::Ok) {
    return error;
  }
  std::vector<Binding> bindings;
  if (provider_->host_memory()) {
    error = bind_host_engine(args, &bindings);
    if (error == Error::Ok) {
      error = enqueue(bindings, nullptr);
    }
    if (error == Error::Ok) {
      error = finish_host_engine(bindings);
    }
    return error;
  }
  error = bind_device_engine(args, stream, &bindings);
  if (error == Error::Ok) {
    error = enqueue(bindings, stream);
  }
  if (error == Error::Ok) {
    error = finish_device_engine(bindings, stream);
  }
  // Always return with the work finished, on success and on failure (staging
  // copies may still read the caller's memory).
  cudaError_t synced = cudaStreamSynchronize(static_cast<cudaStream_t>(stream));
  if (synced != cudaSuccess && error == Error::Ok) {
    return cuda_failure(synced, "synchronizing the delegate's stream");
  }
  return error;
}

Error EngineSession::check_arguments(Span<EValue*> args) {
  for (size_t a = 0; a < args.size(); ++a) {
    const bool is_input = a < inputs_.size();
    const EngineTensor& spec = is_input ? inputs_[a] : outputs_[a - inputs_.size()];
    const char* role = is_input ? "input" : "output";
    if (args[a] == nullptr || !args[a]->isTensor()) {
      TTE_LOG(ERROR, "delegate argument %zu (%s '%s') is not a tensor", a, role,
              spec.name.c_str());
      return Error::InvalidArgument;
    }
    const Tensor& tensor = args[a]->toTensor();
    if (tensor.scalar_type() != spec.dtype) {
      TTE_LOG(ERROR, "%s '%s': expected %s, got %s", role, spec.name.c_str(),
              dtype_name(spec.dtype), dtype_name(tensor.scalar_type()));
      return Error::InvalidArgument;
    }
    if (!rank_matches(tensor, spec.rank)) {
      TTE_LOG(ERROR, "%s '%s': expected rank %d, got rank %zd (shape %s)", role,
              spec.name.c_str(), spec.rank, static_cast<ssize_t>(tensor.dim()),
              dims_text(tensor.sizes().data(), tensor.sizes().size()).c_str());
      return Error::InvalidArgument;
    }
    if (!has_default_dim_order(tensor)) {
      TTE_LOG(ERROR,
              "%s '%s': expected a contiguous tensor (default dim order), got dim order %s",
              role, spec.name.c_str(),
              dims_text(tensor.dim_order().data(), tensor.dim_order().size()).c_str());
      return Error::InvalidArgument;
    }
    if (is_input && tensor.nbytes() > 0 && tensor.const_data_ptr() == nullptr) {
      TTE_LOG(ERROR, "input '%s' has no data", spec.name.c_str());
      return Error::InvalidArgument;
    }
  }
  return Error::Ok;
}

Error EngineSession::choose_profile(Span<EValue*> args, void* stream) {
  const TteEngineProvider& abi = provider_->abi();
  int64_t dims[TTE_MAX_RANK];
  // The first profile whose ranges hold every input; remember why each
  // profile does not, for the error.
  std::string reasons;
  int32_t chosen = -1;
  for (int32_t p = 0; p < num_profiles_ && chosen < 0; ++p) {
    bool fits = true;
    for (size_t i = 0; i < inputs_.size() && fits; ++i) {
      const EngineTensor& input = inputs_[i];
      engine_dims(args[i]->toTensor(), input.rank, dims);
      for (int32_t d = 0; d < input.rank && fits; ++d) {
        fits = dims[d] >= input.min_dims[p][d] && dims[d] <= input.max_dims[p][d];
      }
      if (!fits) {
        reasons += (reasons.empty() ? "" : "; ");
        if (num_profiles_ > 1) {
          reasons += "profile " + std::to_string(p) + ": ";
        }
        reasons += "input '" + input.name + "' has shape " + dims_text(dims, input.rank) +
                   ", allowed " + range_text(input.min_dims[p], input.max_dims[p]);
      }
    }
    if (fits) {
      chosen = p;
    }
  }
  if (chosen < 0) {
    TTE_LOG(ERROR, "the inputs fit no optimization profile of the engine: %s", reasons.c_str());
    return Error::InvalidArgument;
  }
  TteError error{};
  if (chosen != current_profile_) {
    TteStatus s = abi.select_profile(engine_, chosen, stream, &error);
    if (s != TTE_OK) {
      return provider_call(s, error, "select_profile");
    }
    current_profile_ = chosen;
  }
  input_shapes_.clear();
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const EngineTensor& input = inputs_[i];
    engine_dims(args[i]->toTensor(), input.rank, dims);
    TteStatus s = abi.set_input_shape(engine_, input.index, dims, input.rank, &error);
    if (s != TTE_OK) {
      return provider_call(s, error, ("set_input_shape of '" + input.name + "'").c_str());
    }
    input_shapes_.insert(input_shapes_.end(), dims, dims + input.rank);
  }
  return Error::Ok;
}

Error EngineSession::resize_outputs(Span<EValue*> args) {
  const TteEngineProvider& abi = provider_->abi();
  TteError error{};
  int64_t dims[TTE_MAX_RANK];
  for (size_t o = 0; o < outputs_.size(); ++o) {
    const EngineTensor& output = outputs_[o];
    Tensor& tensor = args[inputs_.size() + o]->toTensor();
    int32_t rank = 0;
    TteStatus s = abi.get_output_shape(engine_, output.index, dims, TTE_MAX_RANK, &rank, &error);
    if (s != TTE_OK) {
      return provider_call(s, error, ("get_output_shape of '" + output.name + "'").c_str());
    }
    if (rank < 0 || rank > TTE_MAX_RANK) {
      TTE_LOG(ERROR, "engine provider '%s' gave output '%s' rank %d", provider_->name().c_str(),
              output.name.c_str(), rank);
      return Error::Internal;
    }
    for (int32_t d = 0; d < rank; ++d) {
      if (dims[d] < 0 || dims[d] > std::numeric_limits<SizesType>::max()) {
        TTE_LOG(ERROR, "the engine could not infer the shape of output '%s' (got %s)",
                output.name.c_str(), dims_text(dims, rank).c_str());
        return Error::InvalidState;
      }
    }
    if (output.aliased_input >= 0 && output.check_alias_shape) {
      const Tensor& input = args[output.aliased_input]->toTensor();
      int64_t input_dims[TTE_MAX_RANK];
      engine_dims(input, inputs_[output.aliased_input].rank, input_dims);
      if (rank != inputs_[output.aliased_input].rank ||
          !std::equal(dims, dims + rank, input_dims)) {
        TTE_LOG(ERROR,
                "aliased output '%s' has shape %s but the input '%s' it is written into has %s",
                output.name.c_str(), dims_text(dims, rank).c_str(),
                inputs_[output.aliased_input].name.c_str(),
                dims_text(input_dims, inputs_[output.aliased_input].rank).c_str());
        return Error::InvalidArgument;
      }
    }
    if (tensor.dim() != rank) {
      // TensorRT has no 0-d tensors: an ExecuTorch scalar output is [1].
      if (tensor.dim() == 0 && rank == 1 && dims[0] == 1) {
        continue;
      }
      TTE_LOG(ERROR, "output '%s': the engine gives shape %s but the delegate's output has rank %zd",
              output.name.c_str(), dims_text(dims, rank).c_str(),
              static_cast<ssize_t>(tensor.dim()));
      return Error::InvalidArgument;
    }
    SizesType sizes[TTE_MAX_RANK];
    bool same = true;
    for (int32_t d = 0; d < rank; ++d) {
      sizes[d] = static_cast<SizesType>(dims[d]);
      same = same && tensor.size(d) == sizes[d];
    }
    if (same) {
      continue;
    }
    Error resized = executorch::runtime::resize_tensor(
        tensor, ArrayRef<SizesType>(sizes, static_cast<size_t>(rank)));
    if (resized != Error::Ok) {
      TTE_LOG(ERROR,
              "output '%s': cannot resize from %s to the engine's %s (export the output with a "
              "dynamic shape whose upper bound holds it)",
              output.name.c_str(),
              dims_text(tensor.sizes().data(), tensor.sizes().size()).c_str(),
              dims_text(dims, rank).c_str());
      return resized;
    }
  }
  return Error::Ok;
}

Error EngineSession::bind_device_engine(Span<EValue*> args, void* stream,
                                        std::vector<Binding>* bindings) {
  const auto cuda_stream = static_cast<cudaStream_t>(stream);
  staged_inputs_.resize(inputs_.size());
  staged_outputs_.resize(outputs_.size());
  bindings->resize(args.size());
  for (size_t a = 0; a < args.size(); ++a) {
    const bool is_input = a < inputs_.size();
    const EngineTensor& spec = is_input ? inputs_[a] : outputs_[a - inputs_.size()];
    const Tensor& tensor = args[a]->toTensor();
    Binding& binding = (*bindings)[a];
    binding.data = tensor.mutable_data_ptr();
    binding.nbytes = tensor.nbytes();
    if (!is_input && spec.aliased_input >= 0) {
      // In place: the engine writes into its input's memory.
      binding.address = (*bindings)[spec.aliased_input].address;
      binding.kind = locate(tensor).kind;
      continue;
    }
    if (binding.nbytes == 0) {
      binding.address = zero_size_address();
      if (binding.address == nullptr) {
        TTE_LOG(ERROR, "cannot allocate the placeholder for empty tensor '%s'", spec.name.c_str());
        return Error::MemoryAllocationFailed;
      }
      continue;
    }
    if (binding.data == nullptr) {
      TTE_LOG(ERROR, "%s '%s' has no data", is_input ? "input" : "output", spec.name.c_str());
      return Error::InvalidArgument;
    }
    const PointerInfo info = locate(tensor);
    binding.kind = info.kind;
    if ((info.kind == PointerKind::kDevice) && info.device != device_) {
      TTE_LOG(ERROR, "%s '%s' is on cuda:%d but the engine runs on cuda:%d",
              is_input ? "input" : "output", spec.name.c_str(), info.device, device_);
      return Error::InvalidArgument;
    }
    if (is_device_accessible(info, device_, integrated_)) {
      binding.address = binding.data;
      continue;
    }
    DeviceBuffer& staging = is_input ? staged_inputs_[a] : staged_outputs_[a - inputs_.size()];
    cudaError_t status = staging.reserve(binding.nbytes, device_);
    if (status != cudaSuccess) {
      return cuda_failure(status, "allocating " + std::to_string(binding.nbytes) +
                                      " bytes of device staging for '" + spec.name + "'");
    }
    binding.address = staging.data();
    binding.staged = true;
    if (is_input) {
      status = info.kind == PointerKind::kHost
                   ? cudaMemcpyAsync(binding.address, binding.data, binding.nbytes,
                                     cudaMemcpyHostToDevice, cuda_stream)
                   : stager_.host_to_device(binding.address, binding.data, binding.nbytes,
                                            cuda_stream, device_);
      if (status != cudaSuccess) {
        return cuda_failure(status, "copying input '" + spec.name + "' to the device");
      }
      count_copy(CopyKind::HostToDevice, binding.nbytes);
    }
  }
  return Error::Ok;
}

Error EngineSession::bind_host_engine(Span<EValue*> args, std::vector<Binding>* bindings) {
  // Without a GPU every tensor is host memory: no CUDA call at all.
  const bool have_gpu = cuda_device_count() > 0;
  host_inputs_.resize(inputs_.size());
  host_outputs_.resize(outputs_.size());
  bindings->resize(args.size());
  for (size_t a = 0; a < args.size(); ++a) {
    const bool is_input = a < inputs_.size();
    const EngineTensor& spec = is_input ? inputs_[a] : outputs_[a - inputs_.size()];
    const Tensor& tensor = args[a]->toTensor();
    Binding& binding = (*bindings)[a];
    binding.data = tensor.mutable_data_ptr();
    binding.nbytes = tensor.nbytes();
    if (have_gpu) {
      binding.kind = locate(tensor).kind;
    }
    if (!is_input && spec.aliased_input >= 0) {
      binding.address = (*bindings)[spec.aliased_input].address;
      continue;
    }
    if (binding.nbytes == 0) {
      binding.address = zero_size_address();
      continue;
    }
    if (binding.data == nullptr) {
      TTE_LOG(ERROR, "%s '%s' has no data", is_input ? "input" : "output", spec.name.c_str());
      return Error::InvalidArgument;
    }
    if (binding.kind != PointerKind::kDevice) {
      binding.address = binding.data;
      continue;
    }
    PinnedHostBuffer& staging = is_input ? host_inputs_[a] : host_outputs_[a - inputs_.size()];
    cudaError_t status = staging.reserve(binding.nbytes);
    if (status != cudaSuccess) {
      return cuda_failure(status, "allocating " + std::to_string(binding.nbytes) +
                                      " bytes of host staging for '" + spec.name + "'");
    }
    binding.address = staging.data();
    binding.staged = true;
    if (is_input) {
      status = cudaMemcpy(binding.address, binding.data, binding.nbytes, cudaMemcpyDefault);
      if (status != cudaSuccess) {
        return cuda_failure(status, "copying input '" + spec.name + "' to the host");
      }
      count_copy(CopyKind::DeviceToHost, binding.nbytes);
    }
  }
  return Error::Ok;
}

Error EngineSession::enqueue(const std::vector<Binding>& bindings, void* stream) {
  const TteEngineProvider& abi = provider_->abi();
  TteError error{};
  for (size_t a = 0; a < bindings.size(); ++a) {
    const bool is_input = a < inputs_.size();
    const EngineTensor& spec = is_input ? inputs_[a] : outputs_[a - inputs_.size()];
    TteStatus s = abi.set_tensor_address(engine_, spec.index, bindings[a].address, &error);
    if (s != TTE_OK) {
      return provider_call(s, error, ("set_tensor_address of '" + spec.name + "'").c_str());
    }
  }
  auto plain = [&](TteError* e) { return abi.enqueue(engine_, stream, e); };
  TteStatus s;
  if (graphs_ != nullptr) {
    // A graph replays fixed shapes and addresses.
    std::vector<int64_t> signature = input_shapes_;
    signature.push_back(current_profile_);
    for (const Binding& binding : bindings) {
      signature.push_back(static_cast<int64_t>(reinterpret_cast<uintptr_t>(binding.address)));
    }
    // The legacy default stream (torch's default) cannot be captured. The
    // handle's own stream is a blocking stream, so work on it is ordered
    // after what the caller already queued there; wait for it before the
    // output copies, which stay on the caller's stream.
    auto graph_stream = static_cast<cudaStream_t>(stream);
    const bool legacy = graph_stream == nullptr || graph_stream == cudaStreamLegacy;
    if (legacy) {
      Result<void*> own = own_stream();
      if (!own.ok()) {
        return own.error();
      }
      graph_stream = static_cast<cudaStream_t>(*own);
    }
    auto on_graph_stream = [&](TteError* e) { return abi.enqueue(engine_, graph_stream, e); };
    s = graphs_->run(signature, graph_stream, on_graph_stream, &error);
    if (s == TTE_OK && legacy) {
      const cudaError_t waited = cudaStreamSynchronize(graph_stream);
      if (waited != cudaSuccess) {
        return cuda_failure(waited, "waiting for the CUDA graph on the delegate's stream");
      }
    }
  } else {
    RuntimeStats::instance().enqueues.fetch_add(1, std::memory_order_relaxed);
    s = plain(&error);
  }
  return provider_call(s, error, "enqueue");
}

Error EngineSession::finish_device_engine(const std::vector<Binding>& bindings, void* stream) {
  const auto cuda_stream = static_cast<cudaStream_t>(stream);
  // Device memory at `src` to the tensor memory `dst` of kind `kind`.
  auto copy_out = [&](void* dst, PointerKind kind, const void* src, size_t n) {
    if (kind == PointerKind::kUnregistered && !integrated_) {
      count_copy(CopyKind::DeviceToHost, n);
      return stager_.device_to_host(dst, src, n, cuda_stream, device_);
    }
    count_copy(kind == PointerKind::kHost ? CopyKind::DeviceToHost : CopyKind::DeviceToDevice, n);
    return cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault, cuda_stream);
  };
  return copy_outputs_back(bindings, copy_out);
}

Error EngineSession::finish_host_engine(const std::vector<Binding>& bindings) {
  // Host memory at `src` to the tensor memory `dst` of kind `kind`.
  auto copy_out = [](void* dst, PointerKind kind, const void* src, size_t n) {
    if (kind != PointerKind::kDevice) {
      std::memcpy(dst, src, n);
      return cudaSuccess;
    }
    count_copy(CopyKind::HostToDevice, n);
    return cudaMemcpy(dst, src, n, cudaMemcpyDefault);
  };
  return copy_outputs_back(bindings, copy_out);
}

Error EngineSession::copy_outputs_back(const std::vector<Binding>& bindings,
                                       const CopyOut& copy_out) {
  for (size_t o = 0; o < outputs_.size(); ++o) {
    const EngineTensor& output = outputs_[o];
    const Binding& binding = bindings[inputs_.size() + o];
    cudaError_t status = cudaSuccess;
    if (output.aliased_input >= 0) {
      const Binding& input = bindings[output.aliased_input];
      // The engine updated its input's memory. When that was a staging copy,
      // write it back, so the caller's tensor is updated in place as it is
      // on the unstaged path.
      if (input.staged && input.nbytes > 0) {
        status = copy_out(input.data, input.kind, input.address, input.nbytes);
      }
      // And the delegate's own output tensor, when it is other memory.
      if (status == cudaSuccess && binding.nbytes > 0 && binding.data != input.data) {
        status = copy_out(binding.data, binding.kind, input.address,
                          std::min(binding.nbytes, input.nbytes));
      }
    } else if (binding.staged) {
      status = copy_out(binding.data, binding.kind, binding.address, binding.nbytes);
    }
    if (status != cudaSuccess) {
      return cuda_failure(status, "copying output '" + output.name + "' back");
    }
  }
  return Error::Ok;
}

}  // namespace tte
