#include "native/tensorrt_engine.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <string>
#include <type_traits>
#include <utility>

#include "common/text.h"
#include "cuda/cuda_device.h"
#include "native/data_types.h"
#include "native/plan_header.h"
#include "native/tensorrt_logger.h"
#include "native/weight_streaming.h"

namespace tte::native {
namespace {

// Older TensorRT 10 releases lack the KV-cache aliasing query; detected
// rather than tied to version numbers.
template <typename Engine, typename = void>
struct HasAliasing : std::false_type {};
template <typename Engine>
struct HasAliasing<Engine,
                   std::void_t<decltype(std::declval<const Engine&>().getAliasedInputTensor(""))>>
    : std::true_type {};

template <typename Engine>
const char* aliased_input_of(const Engine& engine, const char* output) {
  if constexpr (HasAliasing<Engine>::value) {
    return engine.getAliasedInputTensor(output);
  } else {
    return nullptr;
  }
}

// "[2, 3]" (common/text.h), "(unknown)" for dims TensorRT could not give.
std::string dims_text(const nvinfer1::Dims& dims) {
  return dims.nbDims < 0 ? std::string("(unknown)") : format_dims(dims.d, dims.nbDims);
}

bool is_static(const nvinfer1::Dims& dims) {
  return dims.nbDims >= 0 &&
         std::all_of(dims.d, dims.d + dims.nbDims, [](int64_t d) { return d >= 0; });
}

std::vector<int64_t> to_vector(const nvinfer1::Dims& dims) {
  return std::vector<int64_t>(dims.d, dims.d + dims.nbDims);
}

}  // namespace

TensorRtEngine::TensorRtEngine(std::shared_ptr<DeviceRuntime> runtime,
                               const ProviderEnvironment& environment)
    : runtime_(std::move(runtime)),
      environment_(environment),
      io_(std::make_shared<std::vector<IoTensor>>()) {}

TensorRtEngine::~TensorRtEngine() {
  DeviceGuard on_device(runtime_->device);
  contexts_.clear();
  if (activation_memory_ != nullptr) {
    cudaFree(activation_memory_);
    cudaGetLastError();
  }
  engine_.reset();
}

Status TensorRtEngine::load(std::shared_ptr<DeviceRuntime> runtime,
                            const ProviderEnvironment& environment, const void* plan,
                            uint64_t plan_size, const LoadRequest& request,
                            std::unique_ptr<TensorRtEngine>* out) {
  std::unique_ptr<TensorRtEngine> self(new TensorRtEngine(std::move(runtime), environment));
  const TensorRtLibrary& library = *self->runtime_->library;
  {
    // TensorRT copies what it keeps: the plan need not outlive this call.
    std::lock_guard<std::mutex> lock(self->runtime_->mutex);
    Status status = self->runtime_->apply(request.runtime);
    if (!status.ok()) {
      return status;
    }
    const TensorRtErrorCapture capture;
    self->engine_.reset(
        self->runtime_->runtime->deserializeCudaEngine(plan, static_cast<std::size_t>(plan_size)));
  }
  self->user_managed_memory_ = request.user_managed_memory;
  if (self->engine_ == nullptr) {
    const std::string hint = request.runtime.host_code_allowed
                                 ? ""
                                 : "; engine host code is refused (load option "
                                   "engine_host_code_allowed=false), which version-compatible "
                                   "plans need";
    return Status(TTE_ERROR_NOT_ACCEPTED,
                  "TensorRT " + library.version().text() + (library.lean() ? " (lean)" : "") +
                      " could not deserialize the " + std::to_string(plan_size) + "-byte plan" +
                      tensorrt_reason() + ": " +
                      refusal_hint(read_plan_header(plan, plan_size), library.version().text(),
                                   library.lean()) +
                      hint);
  }
  // NvInferRuntime.h:3459-3472: a kDLA_STANDALONE engine allows only
  // serialize, destroy and const accessors; safety engines need the safety
  // runtime.
  if (self->engine_->getEngineCapability() != nvinfer1::EngineCapability::kSTANDARD) {
    return Status(TTE_ERROR_NOT_SUPPORTED,
                  "the engine was built with EngineCapability " +
                      std::to_string(static_cast<int32_t>(self->engine_->getEngineCapability())) +
                      " (safety or standalone DLA); only kSTANDARD engines run through the "
                      "TensorRT runtime");
  }

  // TensorRT fixes the budget once an execution context exists.
  Status status =
      apply_budget(*self->engine_, request.weights, environment, &self->streams_weights_);
  if (status.ok()) {
    status = self->read_io_table();
  }
  if (status.ok()) {
    status = self->create_contexts();
  }
  if (status.ok()) {
    status = self->find_data_dependent_outputs();
  }
  if (status.ok()) {
    status = self->attach_output_allocators();
  }
  if (!status.ok()) {
    return status;
  }
  *out = std::move(self);
  return Status::Ok();
}

Status TensorRtEngine::share(const TensorRtEngine& source, bool user_managed_memory,
                             std::unique_ptr<TensorRtEngine>* out) {
  std::unique_ptr<TensorRtEngine> self(new TensorRtEngine(source.runtime_, source.environment_));
  DeviceGuard on_device(self->runtime_->device);
  self->engine_ = source.engine_;
  self->user_managed_memory_ = user_managed_memory;
  self->io_ = source.io_;  // shared: the I/O table is the engine's
  self->num_profiles_ = source.num_profiles_;
  self->streams_weights_ = source.streams_weights_;
  // NvInferRuntime.h:3075-3087 (ICudaEngine::createExecutionContext): any
  // number of contexts per engine, each with its own state; the weight
  // budget of the first load stays (it is fixed once a context exists).
  Status status = self->create_contexts();
  if (status.ok()) {
    status = self->attach_output_allocators();
  }
  if (!status.ok()) {
    return status;
  }
  *out = std::move(self);
  return Status::Ok();
}

Status TensorRtEngine::device_memory_size(int32_t profile, int64_t* out_bytes) const {
  if (profile < 0 || profile >= num_profiles_) {
    return Status(TTE_ERROR_INVALID_ARGUMENT, "optimization profile " + std::to_string(profile) +
                                                  " does not exist (the " + "engine has " +
                                                  std::to_string(num_profiles_) + ")");
  }
  // NvInferRuntime.h:3202-3211: "the maximum device memory required by the
  // context for a profile", weight-streaming scratch included.
  *out_bytes = engine_->getDeviceMemorySizeForProfileV2(profile);
  return Status::Ok();
}

Status TensorRtEngine::set_device_memory(void* memory, int64_t bytes) {
  if (!user_managed_memory_) {
    return Status(TTE_ERROR_INVALID_STATE,
                  "the engine was loaded with activation memory of its own "
                  "(user_managed_device_memory not set)");
  }
  // NvInferRuntime.h:4064-4072 (IExecutionContext::setDeviceMemoryV2): "The
  // memory must be aligned with CUDA memory alignment property", large
  // enough (getDeviceMemorySizeForProfileV2 is an upper bound), NULL allowed
  // when the size is 0, and in use from enqueueV3 until the work is done.
  // The backend gives cudaMalloc'd memory and keeps it alive that long.
  for (const auto& context : contexts_) {
    context->setDeviceMemoryV2(memory, bytes);
  }
  return Status::Ok();
}

Status TensorRtEngine::create_contexts() {
  const std::string device = "CUDA device " + std::to_string(runtime_->device);
  // The largest profile's activations, weight-streaming scratch included
  // (NvInferRuntime.h:3211, getDeviceMemorySizeForProfileV2), after the
  // budget was set: the sizes depend on it. With user-managed memory the
  // backend gives it instead, per call.
  int64_t bytes = 0;
  for (int32_t p = 0; p < num_profiles_ && !user_managed_memory_; ++p) {
    bytes = std::max(bytes, engine_->getDeviceMemorySizeForProfileV2(p));
  }
  if (bytes > 0) {
    const cudaError_t allocated = cudaMalloc(&activation_memory_, static_cast<size_t>(bytes));
    if (allocated != cudaSuccess) {
      cudaGetLastError();
      activation_memory_ = nullptr;
      return Status(
          allocated == cudaErrorMemoryAllocation ? TTE_ERROR_OUT_OF_MEMORY : TTE_ERROR_RUNTIME,
          "could not allocate " + std::to_string(bytes) +
              " bytes of TensorRT activation memory on " + device + ": " +
              cudaGetErrorString(allocated));
    }
  }
  // A stream of its own for the one-time profile switches, synchronized
  // before the contexts are used (trtexec: setOptimizationProfileAsync on a
  // fresh stream, then cudaStreamSynchronize).
  cudaStream_t setup = nullptr;
  if (num_profiles_ > 1 &&
      cudaStreamCreateWithFlags(&setup, cudaStreamNonBlocking) != cudaSuccess) {
    cudaGetLastError();
    return Status(TTE_ERROR_RUNTIME, "could not create a CUDA stream on " + device);
  }
  Status status;
  for (int32_t p = 0; p < num_profiles_ && status.ok(); ++p) {
    const TensorRtErrorCapture capture;
    std::unique_ptr<nvinfer1::IExecutionContext> context(engine_->createExecutionContext(
        nvinfer1::ExecutionContextAllocationStrategy::kUSER_MANAGED));
    if (context == nullptr) {
      status = Status(TTE_ERROR_RUNTIME, "TensorRT could not create an execution context on " +
                                             device + tensorrt_reason());
      break;
    }
    recorders_.push_back(std::make_unique<ContextErrorRecorder>());
    context->setErrorRecorder(recorders_.back().get());
    // NvInferRuntime.h:4080: memory aligned as cudaMalloc aligns it, at
    // least the reported size; NULL is allowed when the size is 0.
    if (!user_managed_memory_) {
      context->setDeviceMemoryV2(activation_memory_, bytes);
    }
    if (p > 0 && !context->setOptimizationProfileAsync(p, setup)) {
      status = Status(TTE_ERROR_RUNTIME, "TensorRT could not select optimization profile " +
                                             std::to_string(p) + tensorrt_reason());
      break;
    }
    contexts_.push_back(std::move(context));
  }
  if (setup != nullptr) {
    if (cudaStreamSynchronize(setup) != cudaSuccess && status.ok()) {
      status = Status(TTE_ERROR_RUNTIME, "selecting the optimization profiles failed on " + device);
    }
    cudaStreamDestroy(setup);
    cudaGetLastError();
  }
  return status;
}

Status TensorRtEngine::read_io_table() {
  num_profiles_ = std::max(1, engine_->getNbOptimizationProfiles());
  const int32_t count = engine_->getNbIOTensors();
  if (count < 0) {
    return Status(TTE_ERROR_INTERNAL,
                  "TensorRT reports " + std::to_string(count) + " I/O tensors for the engine");
  }
  (*io_).reserve(static_cast<size_t>(count));
  for (int32_t i = 0; i < count; ++i) {
    const char* name = engine_->getIOTensorName(i);
    if (name == nullptr) {
      return Status(TTE_ERROR_INTERNAL, "TensorRT has no name for I/O tensor " + std::to_string(i));
    }
    IoTensor tensor;
    tensor.name = name;
    const nvinfer1::TensorIOMode mode = engine_->getTensorIOMode(name);
    if (mode == nvinfer1::TensorIOMode::kNONE) {
      return Status(TTE_ERROR_INTERNAL, "TensorRT lists '" + tensor.name + "' as I/O tensor " +
                                            std::to_string(i) +
                                            " but says it is neither an input nor an output");
    }
    tensor.is_input = mode == nvinfer1::TensorIOMode::kINPUT;
    const nvinfer1::DataType type = engine_->getTensorDataType(name);
    tensor.scalar_type = scalar_type_of(type);
    if (tensor.scalar_type < 0) {
      return Status(TTE_ERROR_NOT_SUPPORTED,
                    "tensor '" + tensor.name + "' has TensorRT type " + data_type_name(type) +
                        ", which has no ExecuTorch dtype; keep such types inside the engine");
    }
    const nvinfer1::Dims shape = engine_->getTensorShape(name);
    if (shape.nbDims < 0) {
      return Status(TTE_ERROR_INTERNAL,
                    "TensorRT reports no rank for tensor '" + tensor.name + "'");
    }
    tensor.rank = shape.nbDims;
    tensor.is_shape_tensor = engine_->isShapeInferenceIO(name);
    // Shape tensors live in host memory; the backend refuses them with its
    // own message, so they are described rather than refused here.
    if (!tensor.is_shape_tensor &&
        engine_->getTensorLocation(name) == nvinfer1::TensorLocation::kHOST) {
      return Status(TTE_ERROR_NOT_SUPPORTED,
                    "tensor '" + tensor.name +
                        "' lives in host memory (TensorLocation::kHOST); this provider binds "
                        "device memory only");
    }
    for (int32_t p = 0; p < num_profiles_; ++p) {
      if (engine_->getTensorFormat(name, p) != nvinfer1::TensorFormat::kLINEAR) {
        const char* format = engine_->getTensorFormatDesc(name, p);
        return Status(TTE_ERROR_NOT_SUPPORTED,
                      "tensor '" + tensor.name + "' uses TensorRT format '" +
                          (format != nullptr ? format : "?") + "' in profile " + std::to_string(p) +
                          "; only linear (contiguous row-major) I/O is supported: build the "
                          "engine with linear I/O formats");
      }
    }
    if (tensor.is_input) {
      for (int32_t p = 0; p < num_profiles_; ++p) {
        const nvinfer1::Dims min =
            engine_->getProfileShape(name, p, nvinfer1::OptProfileSelector::kMIN);
        const nvinfer1::Dims opt =
            engine_->getProfileShape(name, p, nvinfer1::OptProfileSelector::kOPT);
        const nvinfer1::Dims max =
            engine_->getProfileShape(name, p, nvinfer1::OptProfileSelector::kMAX);
        ShapeRange range;
        if (min.nbDims == tensor.rank && opt.nbDims == tensor.rank && max.nbDims == tensor.rank) {
          range = {to_vector(min), to_vector(opt), to_vector(max)};
        } else if (is_static(shape)) {
          // Engines without dynamic inputs may define no profile ranges.
          range = {to_vector(shape), to_vector(shape), to_vector(shape)};
        } else {
          return Status(TTE_ERROR_INVALID_PROGRAM,
                        "TensorRT gives dynamic input '" + tensor.name + "' (" + dims_text(shape) +
                            ") no shape range in optimization profile " + std::to_string(p));
        }
        tensor.profiles.push_back(std::move(range));
      }
    }
    (*io_).push_back(std::move(tensor));
  }

  for (IoTensor& tensor : *io_) {
    if (tensor.is_input) {
      continue;
    }
    const char* input = aliased_input_of(*engine_, tensor.name.c_str());
    if (input == nullptr || *input == '\0') {
      continue;
    }
    const auto found = std::find_if((*io_).begin(), (*io_).end(), [&](const IoTensor& candidate) {
      return candidate.is_input && candidate.name == input;
    });
    if (found == (*io_).end()) {
      return Status(TTE_ERROR_INVALID_PROGRAM, "TensorRT says output '" + tensor.name +
                                                   "' aliases input '" + input +
                                                   "', which the engine does not have");
    }
    tensor.aliased_input = static_cast<int32_t>(found - (*io_).begin());
  }
  return Status::Ok();
}

Status TensorRtEngine::attach_output_allocators() {
  allocators_.resize(io_->size());
  for (size_t i = 0; i < io_->size(); ++i) {
    const IoTensor& tensor = (*io_)[i];
    if (!tensor.data_dependent) {
      continue;
    }
    allocators_[i] = std::make_unique<OutputAllocator>(runtime_->device);
    // NvInferRuntime.h (IExecutionContext::setOutputAllocator, 10.3 :4170-4188,
    // 11.1 :4545-4563): "The allocator is called by enqueueV3()"; one per
    // context, so every profile's context gets it.
    for (const auto& context : contexts_) {
      const TensorRtErrorCapture capture;
      if (!context->setOutputAllocator(tensor.name.c_str(), allocators_[i].get())) {
        return Status(TTE_ERROR_RUNTIME, "TensorRT refused an output allocator for '" +
                                             tensor.name + "'" + tensorrt_reason());
      }
    }
  }
  return Status::Ok();
}

Status TensorRtEngine::set_output_capacity(int32_t index, int64_t bytes) {
  if (static_cast<size_t>(index) >= allocators_.size() || allocators_[index] == nullptr) {
    return Status(
        TTE_ERROR_INVALID_ARGUMENT,
        "'" + (*io_)[index].name + "' is not a data-dependent output; only those take a capacity");
  }
  allocators_[index]->set_capacity(bytes);
  return Status::Ok();
}

Status TensorRtEngine::output_result(int32_t index, int64_t* dims, int32_t capacity,
                                     int32_t* out_rank, void** out_data) const {
  if (static_cast<size_t>(index) >= allocators_.size() || allocators_[index] == nullptr) {
    return Status(
        TTE_ERROR_INVALID_ARGUMENT,
        "'" + (*io_)[index].name + "' is not a data-dependent output; ask get_output_shape");
  }
  const OutputAllocator& allocator = *allocators_[index];
  if (!allocator.has_shape()) {
    return Status(TTE_ERROR_INVALID_STATE,
                  "TensorRT reported no shape for output '" + (*io_)[index].name +
                      "' (IOutputAllocator::notifyShape was not called): enqueue first");
  }
  const std::vector<int64_t>& shape = allocator.shape();
  if (capacity < static_cast<int32_t>(shape.size())) {
    return Status(TTE_ERROR_INVALID_ARGUMENT,
                  "output '" + (*io_)[index].name + "' has rank " + std::to_string(shape.size()) +
                      ", more than the " + std::to_string(capacity) + " dims given room");
  }
  std::copy(shape.begin(), shape.end(), dims);
  *out_rank = static_cast<int32_t>(shape.size());
  *out_data = allocator.data();
  return Status::Ok();
}

Status TensorRtEngine::find_data_dependent_outputs() {
  // With shape tensors the output shapes depend on their values, unknown
  // here; the backend refuses those engines anyway.
  for (const IoTensor& tensor : *io_) {
    if (tensor.is_shape_tensor) {
      return Status::Ok();
    }
  }
  // A new context uses profile 0. An output whose shape TensorRT cannot tell
  // from the input shapes alone is data-dependent: it gets an
  // IOutputAllocator (output_allocator.h).
  for (const IoTensor& tensor : *io_) {
    if (!tensor.is_input) {
      continue;
    }
    const std::vector<int64_t>& max = tensor.profiles.front().max;
    nvinfer1::Dims dims{};
    dims.nbDims = tensor.rank;
    std::copy(max.begin(), max.end(), dims.d);
    const TensorRtErrorCapture capture;
    if (!contexts_.front()->setInputShape(tensor.name.c_str(), dims)) {
      return Status(TTE_ERROR_INVALID_PROGRAM, "TensorRT refused the largest shape " +
                                                   format_dims(max) + " of profile 0 for input '" +
                                                   tensor.name + "'" + tensorrt_reason());
    }
  }
  for (IoTensor& tensor : *io_) {
    if (tensor.is_input) {
      continue;
    }
    const nvinfer1::Dims shape = contexts_.front()->getTensorShape(tensor.name.c_str());
    tensor.data_dependent = !is_static(shape);
  }
  return Status::Ok();
}

Status TensorRtEngine::profile_shape(int32_t profile, int32_t input, int64_t* min_dims,
                                     int64_t* opt_dims, int64_t* max_dims) const {
  if (profile < 0 || profile >= num_profiles_) {
    return Status(TTE_ERROR_INVALID_ARGUMENT, "optimization profile " + std::to_string(profile) +
                                                  " does not exist (the " + "engine has " +
                                                  std::to_string(num_profiles_) + ")");
  }
  const IoTensor& tensor = (*io_)[input];
  if (!tensor.is_input) {
    return Status(TTE_ERROR_INVALID_ARGUMENT,
                  "'" + tensor.name + "' is an output; profiles give ranges for inputs only");
  }
  const ShapeRange& range = tensor.profiles[profile];
  std::copy(range.min.begin(), range.min.end(), min_dims);
  std::copy(range.opt.begin(), range.opt.end(), opt_dims);
  std::copy(range.max.begin(), range.max.end(), max_dims);
  return Status::Ok();
}

Status TensorRtEngine::select_profile(int32_t profile, cudaStream_t stream) {
  if (profile < 0 || profile >= num_profiles_) {
    return Status(TTE_ERROR_INVALID_ARGUMENT, "optimization profile " + std::to_string(profile) +
                                                  " does not exist (the " + "engine has " +
                                                  std::to_string(num_profiles_) + ")");
  }
  // Each profile has its context, switched once at load: nothing to do on
  // `stream`.
  (void)stream;
  profile_ = profile;
  return Status::Ok();
}

Status TensorRtEngine::set_input_shape(int32_t index, const int64_t* dims, int32_t rank) {
  const IoTensor& tensor = (*io_)[index];
  if (!tensor.is_input) {
    return Status(TTE_ERROR_INVALID_ARGUMENT,
                  "'" + tensor.name + "' is an output; only inputs take a shape");
  }
  const std::string given = format_dims(dims, static_cast<size_t>(std::max(rank, 0)));
  if (rank != tensor.rank) {
    return Status(TTE_ERROR_INVALID_ARGUMENT, "input '" + tensor.name + "' has rank " +
                                                  std::to_string(tensor.rank) + ", got shape " +
                                                  given + " of rank " + std::to_string(rank));
  }
  nvinfer1::Dims shape{};
  shape.nbDims = rank;
  std::copy(dims, dims + rank, shape.d);
  const TensorRtErrorCapture capture;
  if (!context().setInputShape(tensor.name.c_str(), shape)) {
    const ShapeRange& range = tensor.profiles[profile_];
    return Status(TTE_ERROR_INVALID_ARGUMENT,
                  "TensorRT refused shape " + given + " for input '" + tensor.name +
                      "': optimization profile " + std::to_string(profile_) + " allows " +
                      format_dims(range.min) + " to " + format_dims(range.max) + tensorrt_reason());
  }
  return Status::Ok();
}

Status TensorRtEngine::tensor_shape(int32_t index, int64_t* dims, int32_t capacity,
                                    int32_t* out_rank) const {
  const IoTensor& tensor = (*io_)[index];
  const TensorRtErrorCapture capture;
  const nvinfer1::Dims shape = context().getTensorShape(tensor.name.c_str());
  if (shape.nbDims < 0) {
    return Status(TTE_ERROR_INVALID_STATE, "the shape of '" + tensor.name +
                                               "' is not known: set every input's shape first" +
                                               tensorrt_reason());
  }
  if (!is_static(shape) && !tensor.data_dependent) {
    return Status(TTE_ERROR_NOT_SUPPORTED,
                  "output '" + tensor.name + "' has shape " + dims_text(shape) +
                      " after every input shape was set, yet was static at load; TensorRT "
                      "gave no output allocator for it");
  }
  if (capacity < shape.nbDims) {
    return Status(TTE_ERROR_INVALID_ARGUMENT,
                  "tensor '" + tensor.name + "' has rank " + std::to_string(shape.nbDims) +
                      ", more than the " + std::to_string(capacity) + " dims given room");
  }
  // TensorRT's -1 is the ABI's TTE_DATA_DEPENDENT_DIM.
  for (int32_t d = 0; d < shape.nbDims; ++d) {
    dims[d] = shape.d[d] < 0 ? TTE_DATA_DEPENDENT_DIM : shape.d[d];
  }
  *out_rank = shape.nbDims;
  return Status::Ok();
}

Status TensorRtEngine::set_tensor_address(int32_t index, void* address) {
  const IoTensor& tensor = (*io_)[index];
  const TensorRtErrorCapture capture;
  // NvInferRuntime.h:4378: "The pointer must have at least 256-byte
  // alignment"; the backend stages tensors that are not.
  if (!context().setTensorAddress(tensor.name.c_str(), address)) {
    return Status(TTE_ERROR_INVALID_ARGUMENT,
                  "TensorRT refused the address of '" + tensor.name + "'" + tensorrt_reason());
  }
  return Status::Ok();
}

Status TensorRtEngine::enqueue(cudaStream_t stream) {
  if (streams_weights_) {
    // TensorRT: an engine streaming its weights enqueues synchronously and
    // cannot be captured. Refused before TensorRT breaks the capture.
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(stream, &capture) == cudaSuccess &&
        capture != cudaStreamCaptureStatusNone) {
      return Status(TTE_ERROR_NOT_SUPPORTED,
                    "this engine streams its weights, so TensorRT cannot enqueue it inside a "
                    "CUDA graph capture; run it without CUDA graphs or without weight streaming");
    }
    cudaGetLastError();
  }
  const TensorRtErrorCapture capture;
  ContextErrorRecorder& recorder = *recorders_[static_cast<size_t>(profile_)];
  recorder.clear();
  if (!context().enqueueV3(stream)) {
    std::string allocator_failure;
    for (const auto& allocator : allocators_) {
      if (allocator != nullptr && !allocator->failure().empty()) {
        allocator_failure = "; " + allocator->failure();
      }
    }
    return Status(TTE_ERROR_RUNTIME,
                  "TensorRT could not enqueue the engine" +
                      enqueue_failure_message(recorder.text(), TensorRtLogger::thread_error()) +
                      allocator_failure);
  }
  return Status::Ok();
}

}  // namespace tte::native
