// Drives the registered TensorRTBackend the way ExecuTorch's Method does
// (init with a FreeableBuffer and compile specs, execute with EValues over
// TensorImpls, destroy), with engines from a fake provider defined here
// through the provider ABI. Shared by the backend and registry tests.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include <cuda_runtime_api.h>
#include <executorch/runtime/backend/interface.h>
#include <executorch/runtime/core/evalue.h>
#include <executorch/runtime/core/memory_allocator.h>
#include <executorch/runtime/core/portable_type/tensor_impl.h>
#include <nlohmann/json.hpp>

#include "blob_bytes.h"
#include "torch_tensorrt_executorch/c_api.h"

namespace tte_test {

namespace et = executorch::runtime;
using executorch::aten::ScalarType;
using ::executorch::runtime::etensor::TensorImpl;
using Json = nlohmann::ordered_json;

// ---- The registry these tests start from --------------------------------------

// The plugin registers the native TensorRT provider when its library is
// installed beside it (as in this build tree). Tests start from an empty
// registry, so it is unregistered before any test runs; whether it was
// registered is kept for the test that checks it.
inline const bool kBundledNativeProviderWasRegistered = [] {
  std::vector<std::string> native;
  for (size_t i = 0; i < tte_num_engine_providers(); ++i) {
    const std::string name = tte_engine_provider_name(i);
    if (name.rfind("tensorrt-native-", 0) == 0) {
      native.push_back(name);
    }
  }
  for (const std::string& name : native) {
    tte_unregister_engine_provider(name.c_str(), nullptr);
  }
  return !native.empty();
}();

// ---- Blobs -----------------------------------------------------------------

inline Json binding(const std::string& name, bool is_input) {
  return Json{{"name", name}, {"dtype", ""}, {"shape", Json::array()}, {"is_input", is_input}};
}

// The metadata Torch-TensorRT writes, in its key order.
inline Json blob_metadata(const std::vector<std::string>& inputs,
                          const std::vector<std::string>& outputs, int device_id = 0) {
  Json bindings = Json::array();
  for (const auto& name : inputs) bindings.push_back(binding(name, true));
  for (const auto& name : outputs) bindings.push_back(binding(name, false));
  return Json{{"io_bindings", bindings},      {"aliased_io", Json::array()},
              {"hardware_compatible", false}, {"device_id", device_id},
              {"serialized_metadata", ""},    {"target_platform", "linux_x86_64"}};
}

// Header `<4sIIIQ8s`, JSON, zeros to 16 bytes, the plan. The magic is
// upstream's choice (TR02 exactly when aliased_io is non-empty) unless given.
inline std::vector<uint8_t> make_blob(const Json& metadata, const std::string& plan,
                                      const char* magic = nullptr) {
  const std::string json = metadata.dump();
  if (magic == nullptr) {
    magic = metadata.contains("aliased_io") && !metadata["aliased_io"].empty() ? "TR02" : "TR01";
  }
  return blob_bytes(magic, json, plan);
}

// ---- A fake engine provider --------------------------------------------------

enum class Op {
  kAddOne,    // output k = input k + 1 (float32)
  kSubtract,  // y = a - b (float32): argument order matters
  kKvUpdate,  // inputs (cache, x); outputs (cache_out aliased to cache, y): cache += x; y = cache
  kCopy,      // output k = input k, bytes (cudaMemcpyAsync on device providers)
  kNothing,
};

struct FakeTensor {
  std::string name;
  bool is_input = true;
  ScalarType dtype = ScalarType::Float;
  int32_t rank = 0;
  // Inputs: per profile.
  std::vector<std::vector<int64_t>> min, max;
  // Outputs: the engine index of the input whose shape it takes, else `shape`.
  int32_t shape_of = -1;
  std::vector<int64_t> shape;
  int32_t aliased_input = -1;
  bool shape_tensor = false;
};

inline FakeTensor input(const std::string& name, std::vector<int64_t> min, std::vector<int64_t> max,
                        ScalarType dtype = ScalarType::Float) {
  FakeTensor t;
  t.name = name;
  t.is_input = true;
  t.dtype = dtype;
  t.rank = static_cast<int32_t>(min.size());
  t.min = {std::move(min)};
  t.max = {std::move(max)};
  return t;
}

inline FakeTensor static_input(const std::string& name, std::vector<int64_t> dims,
                               ScalarType dtype = ScalarType::Float) {
  return input(name, dims, dims, dtype);
}

inline FakeTensor output_like(const std::string& name, int32_t shape_of,
                              ScalarType dtype = ScalarType::Float) {
  FakeTensor t;
  t.name = name;
  t.is_input = false;
  t.dtype = dtype;
  t.shape_of = shape_of;
  return t;
}

inline FakeTensor fixed_output(const std::string& name, std::vector<int64_t> shape,
                               ScalarType dtype = ScalarType::Float) {
  FakeTensor t;
  t.name = name;
  t.is_input = false;
  t.dtype = dtype;
  t.rank = static_cast<int32_t>(shape.size());
  t.shape = std::move(shape);
  return t;
}

struct FakeEngineSpec {
  std::vector<FakeTensor> tensors;  // engine order
  Op op = Op::kAddOne;
  std::string fail_enqueue;
  // Concurrency probes: how long enqueue holds the engine, and whether it
  // waits (up to that long) for another engine of the provider to be inside
  // enqueue at the same time.
  int enqueue_hold_ms = 0;
  bool wait_for_peer = false;
  // Device providers: synchronize the stream inside enqueue, which breaks
  // CUDA-graph capture.
  bool sync_in_enqueue = false;
  // Device providers: fail an enqueue under capture unless the engine's
  // previous enqueue ran plainly with the same input shapes (TensorRT's
  // first enqueue after a change does work a capture cannot hold).
  bool require_warm_capture = false;
};

struct FakeProviderState {
  std::string name;
  TteMemoryKind memory_kind = TTE_MEMORY_HOST;
  int32_t capturable = 0;
  std::string reject;            // non-empty: NOT_ACCEPTED with this message
  std::string fail_deserialize;  // non-empty: RUNTIME with this message
  // Non-zero: set_tensor_address refuses addresses not aligned to it, as
  // TensorRT's does (256).
  size_t require_alignment = 0;
  // The answer of engine_capturable.
  std::atomic<int> engine_capturable{1};
  std::atomic<int> deserializes{0}, destroys{0}, enqueues{0}, releases{0}, select_profiles{0};
  std::atomic<int> last_profile{-1};
  std::atomic<int> active{0}, max_active{0};
  std::atomic<int> max_in_flight_one_engine{0};
  TteEngineLoadOptions last_options{};
  // The strings last_options pointed to, copied during deserialize.
  std::vector<std::string> last_plugin_libraries;
  std::string last_runtime_cache_path;
  std::atomic<void*> last_stream{nullptr};
  std::vector<void*> last_addresses;
  std::mutex mutex;
};

struct FakeEngine {
  FakeProviderState* provider = nullptr;
  FakeEngineSpec spec;
  std::vector<std::vector<int64_t>> shapes;
  std::vector<void*> addresses;
  int profile = 0;
  std::atomic<int> in_flight{0};
  // The input shapes of the last plain (not captured) enqueue, and whether
  // the last enqueue was one.
  std::vector<std::vector<int64_t>> last_plain_shapes;
  bool last_was_plain = false;
};

inline std::vector<FakeEngineSpec>& engine_specs() {
  static std::vector<FakeEngineSpec> specs;
  return specs;
}

inline std::mutex& engine_specs_mutex() {
  static std::mutex mutex;
  return mutex;
}

inline FakeEngineSpec engine(std::vector<FakeTensor> tensors, Op op = Op::kAddOne) {
  FakeEngineSpec spec;
  spec.tensors = std::move(tensors);
  spec.op = op;
  return spec;
}

// A plan the fake providers accept: "FAKE" and the spec's index.
inline std::string fake_plan(FakeEngineSpec spec) {
  std::lock_guard<std::mutex> lock(engine_specs_mutex());
  engine_specs().push_back(std::move(spec));
  return "FAKE" + std::to_string(engine_specs().size() - 1);
}

inline TteStatus fail(TteError* error, TteStatus status, const std::string& message) {
  error->code = status;
  std::snprintf(error->message, sizeof(error->message), "%s", message.c_str());
  return status;
}

// A fake plan behind a TensorRT plan header of the given version (the tag,
// serialization version 0, the version at byte 24): what the backend reads
// to pick the native provider of the plan's major.
inline std::string tensorrt_fake_plan(int major, int minor, int patch, FakeEngineSpec spec) {
  std::string header(28, '\0');
  header.replace(0, 4, "ftrt");
  header[24] = static_cast<char>(major);
  header[25] = static_cast<char>(minor);
  header[26] = static_cast<char>(patch);
  return header + fake_plan(std::move(spec));
}

namespace fake_abi {

inline FakeEngine* E(TteEngine* engine) { return reinterpret_cast<FakeEngine*>(engine); }

inline TteStatus deserialize(void* user_data, const void* plan, uint64_t size,
                             const TteEngineLoadOptions* options, TteEngine** out,
                             TteError* error) {
  auto* state = static_cast<FakeProviderState*>(user_data);
  std::string text(static_cast<const char*>(plan), size);
  if (text.rfind("ftrt", 0) == 0 && text.size() > 28) {
    text = text.substr(28);  // tensorrt_fake_plan
  }
  if (text.rfind("FAKE", 0) != 0) {
    return fail(error, TTE_ERROR_NOT_ACCEPTED, "not a fake plan");
  }
  if (!state->reject.empty()) return fail(error, TTE_ERROR_NOT_ACCEPTED, state->reject);
  if (!state->fail_deserialize.empty()) {
    return fail(error, TTE_ERROR_RUNTIME, state->fail_deserialize);
  }
  auto* engine = new FakeEngine();
  engine->provider = state;
  {
    std::lock_guard<std::mutex> lock(engine_specs_mutex());
    engine->spec = engine_specs().at(std::stoul(text.substr(4)));
  }
  engine->shapes.resize(engine->spec.tensors.size());
  engine->addresses.resize(engine->spec.tensors.size(), nullptr);
  {
    std::lock_guard<std::mutex> lock(state->mutex);
    state->last_options = *options;
    state->last_plugin_libraries.clear();
    for (int32_t i = 0; i < options->num_plugin_libraries; ++i) {
      state->last_plugin_libraries.emplace_back(options->plugin_libraries[i]);
    }
    state->last_runtime_cache_path =
        options->runtime_cache_path != nullptr ? options->runtime_cache_path : "";
    state->last_options.plugin_libraries = nullptr;
    state->last_options.runtime_cache_path = nullptr;
  }
  state->deserializes++;
  *out = reinterpret_cast<TteEngine*>(engine);
  return TTE_OK;
}

inline TteStatus num_io_tensors(TteEngine* engine, int32_t* count, TteError*) {
  *count = static_cast<int32_t>(E(engine)->spec.tensors.size());
  return TTE_OK;
}

inline TteStatus describe_io_tensor(TteEngine* engine, int32_t index, TteIoTensorDesc* desc,
                                    TteError* error) {
  const auto& tensors = E(engine)->spec.tensors;
  if (index < 0 || index >= static_cast<int32_t>(tensors.size())) {
    return fail(error, TTE_ERROR_INVALID_ARGUMENT, "bad index");
  }
  const FakeTensor& t = tensors[index];
  desc->name = t.name.c_str();
  desc->is_input = t.is_input;
  desc->scalar_type = static_cast<int32_t>(t.dtype);
  desc->rank = t.is_input ? t.rank : (t.shape_of >= 0 ? tensors[t.shape_of].rank : t.rank);
  desc->aliased_input = t.aliased_input;
  desc->is_shape_tensor = t.shape_tensor;
  return TTE_OK;
}

inline TteStatus num_profiles(TteEngine* engine, int32_t* count, TteError*) {
  *count = 1;
  for (const auto& t : E(engine)->spec.tensors) {
    if (t.is_input) *count = static_cast<int32_t>(t.min.size());
  }
  return TTE_OK;
}

inline TteStatus profile_shape(TteEngine* engine, int32_t profile, int32_t index, int64_t* min,
                               int64_t* opt, int64_t* max, TteError* error) {
  const FakeTensor& t = E(engine)->spec.tensors.at(index);
  if (!t.is_input) return fail(error, TTE_ERROR_INVALID_ARGUMENT, "not an input");
  for (int32_t d = 0; d < t.rank; ++d) {
    min[d] = t.min.at(profile)[d];
    max[d] = t.max.at(profile)[d];
    opt[d] = max[d];
  }
  return TTE_OK;
}

inline TteStatus select_profile(TteEngine* engine, int32_t profile, void*, TteError*) {
  E(engine)->profile = profile;
  E(engine)->provider->select_profiles++;
  E(engine)->provider->last_profile = profile;
  return TTE_OK;
}

inline TteStatus set_input_shape(TteEngine* engine, int32_t index, const int64_t* dims,
                                 int32_t rank, TteError* error) {
  FakeEngine* e = E(engine);
  const FakeTensor& t = e->spec.tensors.at(index);
  if (rank != t.rank) return fail(error, TTE_ERROR_INVALID_ARGUMENT, "rank");
  for (int32_t d = 0; d < rank; ++d) {
    if (dims[d] < t.min[e->profile][d] || dims[d] > t.max[e->profile][d]) {
      return fail(error, TTE_ERROR_INVALID_ARGUMENT, "dims outside the selected profile");
    }
  }
  e->shapes[index].assign(dims, dims + rank);
  return TTE_OK;
}

inline TteStatus get_output_shape(TteEngine* engine, int32_t index, int64_t* dims, int32_t capacity,
                                  int32_t* rank, TteError* error) {
  FakeEngine* e = E(engine);
  const FakeTensor& t = e->spec.tensors.at(index);
  const std::vector<int64_t>& shape = t.shape_of >= 0 ? e->shapes.at(t.shape_of) : t.shape;
  if (static_cast<int32_t>(shape.size()) > capacity) {
    return fail(error, TTE_ERROR_INVALID_ARGUMENT, "capacity");
  }
  std::copy(shape.begin(), shape.end(), dims);
  *rank = static_cast<int32_t>(shape.size());
  return TTE_OK;
}

inline TteStatus set_tensor_address(TteEngine* engine, int32_t index, void* address,
                                    TteError* error) {
  if (address == nullptr) return fail(error, TTE_ERROR_INVALID_ARGUMENT, "NULL address");
  const size_t alignment = E(engine)->provider->require_alignment;
  if (alignment != 0 && reinterpret_cast<uintptr_t>(address) % alignment != 0) {
    return fail(error, TTE_ERROR_INVALID_ARGUMENT,
                "address not " + std::to_string(alignment) + "-byte aligned");
  }
  E(engine)->addresses.at(index) = address;
  return TTE_OK;
}

inline int64_t numel(const std::vector<int64_t>& shape) {
  return std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<int64_t>());
}

inline size_t element_size(ScalarType type) {
  switch (type) {
    case ScalarType::Long:
    case ScalarType::Double:
      return 8;
    case ScalarType::Half:
    case ScalarType::BFloat16:
    case ScalarType::Short:
      return 2;
    case ScalarType::Byte:
    case ScalarType::Char:
    case ScalarType::Bool:
      return 1;
    default:
      return 4;
  }
}

inline TteStatus enqueue(TteEngine* engine, void* stream, TteError* error) {
  FakeEngine* e = E(engine);
  FakeProviderState* state = e->provider;
  const int in_flight = ++e->in_flight;
  int seen = state->max_in_flight_one_engine.load();
  while (in_flight > seen &&
         !state->max_in_flight_one_engine.compare_exchange_weak(seen, in_flight)) {
  }
  const int active = ++state->active;
  int max_active = state->max_active.load();
  while (active > max_active && !state->max_active.compare_exchange_weak(max_active, active)) {
  }
  if (e->spec.enqueue_hold_ms > 0) {
    const auto until =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(e->spec.enqueue_hold_ms);
    while (std::chrono::steady_clock::now() < until &&
           !(e->spec.wait_for_peer && state->max_active.load() >= 2)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  state->last_stream = stream;
  {
    std::lock_guard<std::mutex> lock(state->mutex);
    state->last_addresses = e->addresses;
  }
  TteStatus status = TTE_OK;
  bool capturing = false;
  if (state->memory_kind == TTE_MEMORY_DEVICE) {
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    capturing = cudaStreamIsCapturing(static_cast<cudaStream_t>(stream), &capture) == cudaSuccess &&
                capture != cudaStreamCaptureStatusNone;
    cudaGetLastError();
  }
  if (capturing && e->spec.require_warm_capture &&
      !(e->last_was_plain && e->last_plain_shapes == e->shapes)) {
    status =
        fail(error, TTE_ERROR_RUNTIME, "captured without a plain enqueue of these shapes first");
  }
  e->last_was_plain = !capturing;
  if (!capturing) e->last_plain_shapes = e->shapes;
  if (status == TTE_OK && !e->spec.fail_enqueue.empty()) {
    status = fail(error, TTE_ERROR_RUNTIME, e->spec.fail_enqueue);
  } else if (status == TTE_OK) {
    std::vector<int32_t> ins, outs;
    for (int32_t i = 0; i < static_cast<int32_t>(e->spec.tensors.size()); ++i) {
      (e->spec.tensors[i].is_input ? ins : outs).push_back(i);
    }
    auto out_shape = [&](int32_t index) {
      const FakeTensor& t = e->spec.tensors[index];
      return t.shape_of >= 0 ? e->shapes[t.shape_of] : t.shape;
    };
    const bool device = state->memory_kind == TTE_MEMORY_DEVICE;
    switch (e->spec.op) {
      case Op::kAddOne:
        for (size_t k = 0; k < outs.size() && k < ins.size(); ++k) {
          auto* in = static_cast<const float*>(e->addresses[ins[k]]);
          auto* out = static_cast<float*>(e->addresses[outs[k]]);
          for (int64_t j = 0; j < numel(out_shape(outs[k])); ++j) out[j] = in[j] + 1.0f;
        }
        break;
      case Op::kSubtract: {
        auto* a = static_cast<const float*>(e->addresses[ins[0]]);
        auto* b = static_cast<const float*>(e->addresses[ins[1]]);
        auto* y = static_cast<float*>(e->addresses[outs[0]]);
        for (int64_t j = 0; j < numel(out_shape(outs[0])); ++j) y[j] = a[j] - b[j];
        break;
      }
      case Op::kKvUpdate: {
        auto* cache = static_cast<float*>(e->addresses[ins[0]]);
        auto* x = static_cast<const float*>(e->addresses[ins[1]]);
        auto* cache_out = static_cast<float*>(e->addresses[outs[0]]);
        auto* y = static_cast<float*>(e->addresses[outs[1]]);
        if (cache_out != cache) {
          status = fail(error, TTE_ERROR_INVALID_ARGUMENT, "aliased output not bound in place");
          break;
        }
        for (int64_t j = 0; j < numel(e->shapes[ins[0]]); ++j) {
          cache[j] += x[j];
          y[j] = cache[j];
        }
        break;
      }
      case Op::kCopy:
        for (size_t k = 0; k < outs.size() && k < ins.size(); ++k) {
          const size_t bytes = static_cast<size_t>(numel(out_shape(outs[k]))) *
                               element_size(e->spec.tensors[outs[k]].dtype);
          if (device) {
            if (cudaMemcpyAsync(e->addresses[outs[k]], e->addresses[ins[k]], bytes,
                                cudaMemcpyDeviceToDevice,
                                static_cast<cudaStream_t>(stream)) != cudaSuccess) {
              cudaGetLastError();
              status = fail(error, TTE_ERROR_RUNTIME, "cudaMemcpyAsync failed");
            }
          } else {
            std::memcpy(e->addresses[outs[k]], e->addresses[ins[k]], bytes);
          }
        }
        if (device && e->spec.sync_in_enqueue &&
            cudaStreamSynchronize(static_cast<cudaStream_t>(stream)) != cudaSuccess) {
          cudaGetLastError();
          status = fail(error, TTE_ERROR_RUNTIME, "cudaStreamSynchronize failed");
        }
        break;
      case Op::kNothing:
        break;
    }
  }
  if (status == TTE_OK) state->enqueues++;
  --state->active;
  --e->in_flight;
  return status;
}

inline void destroy(TteEngine* engine) {
  E(engine)->provider->destroys++;
  delete E(engine);
}

inline void release(void* user_data) { static_cast<FakeProviderState*>(user_data)->releases++; }

inline TteStatus engine_capturable(TteEngine* engine, void*, int32_t* out, TteError*) {
  *out = E(engine)->provider->engine_capturable.load();
  return TTE_OK;
}

}  // namespace fake_abi

inline TteEngineProvider fake_provider_abi(FakeProviderState* state) {
  TteEngineProvider p{};
  p.abi_version = TTE_ENGINE_PROVIDER_ABI_VERSION;
  p.struct_size = sizeof(TteEngineProvider);
  p.name = state->name.c_str();
  p.memory_kind = state->memory_kind;
  p.enqueue_capturable = state->capturable;
  p.user_data = state;
  p.release = &fake_abi::release;
  p.deserialize = &fake_abi::deserialize;
  p.num_io_tensors = &fake_abi::num_io_tensors;
  p.describe_io_tensor = &fake_abi::describe_io_tensor;
  p.num_profiles = &fake_abi::num_profiles;
  p.profile_shape = &fake_abi::profile_shape;
  p.select_profile = &fake_abi::select_profile;
  p.set_input_shape = &fake_abi::set_input_shape;
  p.get_output_shape = &fake_abi::get_output_shape;
  p.set_tensor_address = &fake_abi::set_tensor_address;
  p.enqueue = &fake_abi::enqueue;
  p.destroy = &fake_abi::destroy;
  p.engine_capturable = &fake_abi::engine_capturable;
  return p;
}

// A fake provider registered for the scope of a test. The state outlives the
// registration so release() can be observed after it.
class FakeProvider {
 public:
  explicit FakeProvider(const std::string& name, TteMemoryKind memory = TTE_MEMORY_HOST,
                        TteProviderKind kind = TTE_PROVIDER_OTHER, int32_t capturable = 0)
      : state_(std::make_shared<FakeProviderState>()) {
    state_->name = name;
    state_->memory_kind = memory;
    state_->capturable = capturable;
    TteEngineProvider abi = fake_provider_abi(state_.get());
    TteError error{};
    status_ = tte_register_engine_provider(&abi, kind, &error);
    message_ = error.message;
  }
  ~FakeProvider() { unregister(); }
  FakeProvider(const FakeProvider&) = delete;
  FakeProvider& operator=(const FakeProvider&) = delete;

  void unregister() {
    if (status_ == TTE_OK && !unregistered_) {
      tte_unregister_engine_provider(state_->name.c_str(), nullptr);
      unregistered_ = true;
    }
  }
  TteStatus status() const { return status_; }
  const std::string& message() const { return message_; }
  FakeProviderState& state() { return *state_; }
  std::shared_ptr<FakeProviderState> shared_state() { return state_; }

 private:
  std::shared_ptr<FakeProviderState> state_;
  TteStatus status_ = TTE_OK;
  std::string message_;
  bool unregistered_ = false;
};

// ---- Tensors -------------------------------------------------------------

// A contiguous tensor over its own host memory (or memory given to it), with
// room for `capacity` elements so a dynamic-bound output can grow to it.
class OwnedTensor {
 public:
  OwnedTensor(ScalarType dtype, std::vector<int32_t> sizes, int64_t capacity = -1,
              void* external_data = nullptr,
              et::TensorShapeDynamism dynamism = et::TensorShapeDynamism::DYNAMIC_BOUND)
      : sizes_(std::move(sizes)) {
    const size_t rank = sizes_.size();
    dim_order_.resize(rank);
    strides_.resize(rank);
    for (size_t d = 0; d < rank; ++d) dim_order_[d] = static_cast<uint8_t>(d);
    int32_t stride = 1;
    for (size_t d = rank; d-- > 0;) {
      strides_[d] = stride;
      stride *= sizes_[d];
    }
    int64_t numel = 1;
    for (int32_t s : sizes_) numel *= s;
    if (capacity < numel) capacity = numel;
    const size_t bytes = static_cast<size_t>(capacity) * fake_abi::element_size(dtype);
    void* data = external_data;
    if (data == nullptr) {
      storage_.assign(bytes + 1, 0);
      data = storage_.data();
    }
    impl_ = std::make_unique<TensorImpl>(dtype, static_cast<ssize_t>(rank), sizes_.data(), data,
                                         dim_order_.data(), strides_.data(), dynamism);
    value_ = std::make_unique<et::EValue>(executorch::aten::Tensor(impl_.get()));
  }
  OwnedTensor(const OwnedTensor&) = delete;
  OwnedTensor& operator=(const OwnedTensor&) = delete;

  et::EValue* value() { return value_.get(); }
  TensorImpl& impl() { return *impl_; }
  template <typename T>
  T* data() {
    return static_cast<T*>(impl_->mutable_data());
  }
  std::vector<int32_t> sizes() const {
    return std::vector<int32_t>(impl_->sizes().begin(), impl_->sizes().end());
  }
  std::vector<uint8_t>& dim_order() { return dim_order_; }
  void fill(float start, float step = 1.0f) {
    for (ssize_t i = 0; i < impl_->numel(); ++i) data<float>()[i] = start + step * i;
  }

 private:
  std::vector<int32_t> sizes_;
  std::vector<uint8_t> dim_order_;
  std::vector<int32_t> strides_;
  std::vector<uint8_t> storage_;
  std::unique_ptr<TensorImpl> impl_;
  std::unique_ptr<et::EValue> value_;
};

// ---- Provider libraries ----------------------------------------------------

// A test provider library: in $TTE_TEST_PROVIDER_DIR when set (test scripts
// and machines the build was copied to), else where this build put it.
inline std::string test_provider_library(const std::string& file_name) {
  if (const char* dir = std::getenv("TTE_TEST_PROVIDER_DIR"); dir != nullptr && *dir != '\0') {
    return std::string(dir) + "/" + file_name;
  }
  const std::string host = TTE_TEST_HOST_PROVIDER;
  return host.substr(0, host.rfind('/') + 1) + file_name;
}

inline std::string host_test_provider() {
  return test_provider_library("libtte_test_provider_host.so");
}

inline std::string cuda_test_provider() {
  return test_provider_library("libtte_test_provider_cuda.so");
}

// ---- The backend -----------------------------------------------------------

inline et::BackendInterface* backend() { return et::get_backend_class(TTE_BACKEND_NAME); }

struct CompileSpecs {
  std::vector<std::pair<std::string, std::string>> entries;
  std::vector<et::CompileSpec> view() {
    std::vector<et::CompileSpec> specs;
    for (auto& [key, value] : entries) {
      specs.push_back(et::CompileSpec{key.c_str(), {value.data(), value.size()}});
    }
    return specs;
  }
};

// One delegate: init from a blob, execute with tensors, destroy at scope end.
class Delegate {
 public:
  Delegate() = default;
  ~Delegate() { destroy(); }
  Delegate(const Delegate&) = delete;
  Delegate& operator=(const Delegate&) = delete;

  et::Error init(const std::vector<uint8_t>& blob, CompileSpecs specs = {},
                 et::Span<et::BackendOption> options = {}) {
    blob_ = blob;
    freed_ = false;
    et::FreeableBuffer processed(
        blob_.data(), blob_.size(),
        [](void* context, void*, size_t) { *static_cast<bool*>(context) = true; }, &freed_);
    et::MemoryAllocator allocator(sizeof(arena_), arena_);
    et::BackendInitContext context(
        &allocator, nullptr, "forward", nullptr,
        et::Span<const et::BackendOption>(options.data(), options.size()));
    auto compile_specs = specs.view();
    auto result =
        backend()->init(context, &processed,
                        et::ArrayRef<et::CompileSpec>(compile_specs.data(), compile_specs.size()));
    freed_during_init_ = freed_;
    if (!result.ok()) return result.error();
    handle_ = result.get();
    return et::Error::Ok;
  }

  et::Error execute(const std::vector<OwnedTensor*>& tensors) {
    std::vector<et::EValue*> args;
    for (OwnedTensor* t : tensors) args.push_back(t->value());
    return execute_values(args);
  }

  et::Error execute_values(std::vector<et::EValue*> args) {
    et::BackendExecutionContext context(nullptr, nullptr, "forward");
    return backend()->execute(context, handle_, et::Span<et::EValue*>(args.data(), args.size()));
  }

  void destroy() {
    if (handle_ != nullptr) {
      backend()->destroy(handle_);
      handle_ = nullptr;
    }
  }

  bool freed_during_init() const { return freed_during_init_; }

 private:
  std::vector<uint8_t> blob_;
  bool freed_ = false;
  bool freed_during_init_ = false;
  alignas(16) uint8_t arena_[4096];
  et::DelegateHandle* handle_ = nullptr;
};

// What the library printed to stderr (ExecuTorch's log sink) during a call.
class StderrCapture {
 public:
  StderrCapture() { testing::internal::CaptureStderr(); }
  std::string text() {
    if (!done_) {
      text_ = testing::internal::GetCapturedStderr();
      done_ = true;
    }
    return text_;
  }
  ~StderrCapture() { text(); }

 private:
  bool done_ = false;
  std::string text_;
};

}  // namespace tte_test
