// Providers "test-cuda" and "test-cuda-nocapture": run test-engine plans
// (docs/test-engine-format.md) as real CUDA work on device memory. enqueue
// only launches stream-ordered work on the given stream: no allocation, no
// synchronization, so it can be captured into a CUDA graph. The second
// provider is the same with enqueue_capturable = 0, for the graph fallback.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <new>
#include <string>
#include <type_traits>

#include "testing/test_engine.h"
#include "testing/test_engine_format.h"
#include "testing/test_provider_api.h"

namespace tte::test_engine {
namespace {

constexpr const char* kCapturableName = "test-cuda";
constexpr const char* kUncapturableName = "test-cuda-nocapture";
constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 32768;  // the kernels stride over the rest

// Elementwise arithmetic in the tensor's dtype; half types through float,
// integers wrapping (the host provider computes the same values).
template <typename T>
struct Arith {
  __device__ static T add(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
    } else {
      return a + b;
    }
  }
  __device__ static T one() { return T(1); }
};

template <>
struct Arith<__half> {
  __device__ static __half add(__half a, __half b) {
    return __float2half_rn(__half2float(a) + __half2float(b));
  }
  __device__ static __half one() { return __float2half_rn(1.0f); }
};

template <>
struct Arith<__nv_bfloat16> {
  __device__ static __nv_bfloat16 add(__nv_bfloat16 a, __nv_bfloat16 b) {
    return __float2bfloat16_rn(__bfloat162float(a) + __bfloat162float(b));
  }
  __device__ static __nv_bfloat16 one() { return __float2bfloat16_rn(1.0f); }
};

__device__ inline int64_t first_index() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ inline int64_t stride() { return static_cast<int64_t>(blockDim.x) * gridDim.x; }

template <typename T>
__global__ void add_one_kernel(const T* x, T* y, int64_t n) {
  for (int64_t i = first_index(); i < n; i += stride()) y[i] = Arith<T>::add(x[i], Arith<T>::one());
}

template <typename T>
__global__ void add_kernel(const T* a, const T* b, T* y, int64_t n) {
  for (int64_t i = first_index(); i < n; i += stride()) y[i] = Arith<T>::add(a[i], b[i]);
}

// cache += x in place; y (optional) = the updated cache.
template <typename T>
__global__ void kv_update_kernel(T* cache, const T* x, T* y, int64_t n) {
  for (int64_t i = first_index(); i < n; i += stride()) {
    T updated = Arith<T>::add(cache[i], x[i]);
    cache[i] = updated;
    if (y != nullptr) y[i] = updated;
  }
}

template <typename T>
__device__ bool is_positive(T v) {
  if constexpr (std::is_same_v<T, __half>) {
    return __half2float(v) > 0.0f;
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __bfloat162float(v) > 0.0f;
  } else {
    return v > T(0);
  }
}

// keep_positive in one thread: the order of the input is kept, and the test
// sizes are small.
template <typename T>
__global__ void keep_positive_kernel(const T* x, int64_t n, T* y, int64_t* count) {
  int64_t c = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (is_positive(x[i])) y[c++] = x[i];
  }
  *count = c;
}

__global__ void null_kernel() {}

__device__ inline uint64_t global_timer_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Holds the stream for `ns` nanoseconds (plan key spin_us).
__global__ void spin_kernel(uint64_t ns) {
  uint64_t start = global_timer_ns();
  while (global_timer_ns() - start < ns) __nanosleep(1000);
}

template <typename T>
struct Tag {
  using type = T;
};

// Calls `f(Tag<T>{})` for the device type of an arithmetic ScalarType.
template <typename F>
bool visit_arithmetic(int32_t scalar_type, F&& f) {
  switch (scalar_type) {
    case kByte:
      f(Tag<uint8_t>{});
      return true;
    case kChar:
      f(Tag<int8_t>{});
      return true;
    case kShort:
      f(Tag<int16_t>{});
      return true;
    case kInt:
      f(Tag<int32_t>{});
      return true;
    case kLong:
      f(Tag<int64_t>{});
      return true;
    case kHalf:
      f(Tag<__half>{});
      return true;
    case kFloat:
      f(Tag<float>{});
      return true;
    case kDouble:
      f(Tag<double>{});
      return true;
    case kBFloat16:
      f(Tag<__nv_bfloat16>{});
      return true;
    default:
      return false;
  }
}

unsigned blocks_for(int64_t n) {
  return static_cast<unsigned>(std::min<int64_t>((n + kThreads - 1) / kThreads, kMaxBlocks));
}

std::string cuda_message(const char* call, cudaError_t status) {
  return std::string(call) + ": " + cudaGetErrorName(status) + " (" + cudaGetErrorString(status) +
         ")";
}

class CudaEngine : public Engine {
 public:
  CudaEngine(Plan plan, const char* provider, int device, bool pageable_ok)
      : Engine(std::move(plan)), provider_(provider), device_(device), pageable_ok_(pageable_ok) {}

  int device() const { return device_; }
  // keep_positive's element count, written on the device, read back after
  // the run (as TensorRT reads a data-dependent shape before notifyShape).
  std::shared_ptr<void> count;
  const char* provider() const { return provider_; }
  bool pageable_ok() const { return pageable_ok_; }

 protected:
  TteStatus check_address(int32_t index, void* address, TteError* error) override {
    const TensorSpec& spec = plan().tensors[index];
    std::string what =
        "set_tensor_address: '" + spec.name + "' (index " + std::to_string(index) + ")";
    cudaPointerAttributes attributes{};
    cudaError_t status = cudaPointerGetAttributes(&attributes, address);
    if (status != cudaSuccess) {
      cudaGetLastError();
      return set_error(error, TTE_ERROR_INVALID_ARGUMENT,
                       what + ": " + cuda_message("cudaPointerGetAttributes", status));
    }
    if (attributes.type == cudaMemoryTypeUnregistered && !pageable_ok_) {
      return set_error(
          error, TTE_ERROR_INVALID_ARGUMENT,
          what + " is pageable host memory; provider " + provider_ +
              " needs device memory (or pinned or managed memory): stage host tensors");
    }
    if (attributes.type == cudaMemoryTypeDevice && attributes.device != device_) {
      return set_error(error, TTE_ERROR_INVALID_ARGUMENT,
                       what + " is memory of device " + std::to_string(attributes.device) +
                           ", but the engine runs on device " + std::to_string(device_));
    }
    return TTE_OK;
  }

 private:
  const char* provider_;
  int device_;
  // Integrated GPUs that read pageable host memory take host pointers as they are.
  bool pageable_ok_;
};

// Device memory of the current device, zeroed (so it is really there),
// counted by `record` while it lives and freed on its device; nullptr for
// 0 bytes. Throws std::bad_alloc when cudaMalloc fails.
std::shared_ptr<void> device_block(int64_t bytes, int device, void (*record)(int64_t)) {
  if (bytes <= 0) return nullptr;
  void* memory = nullptr;
  if (cudaMalloc(&memory, static_cast<size_t>(bytes)) != cudaSuccess) {
    cudaGetLastError();
    throw std::bad_alloc();
  }
  cudaMemset(memory, 0, static_cast<size_t>(bytes));
  record(bytes);
  return std::shared_ptr<void>(memory, [bytes, device, record](void* p) {
    int previous = -1;
    cudaGetDevice(&previous);
    if (previous != device) cudaSetDevice(device);
    cudaFree(p);
    if (previous != device && previous >= 0) cudaSetDevice(previous);
    cudaGetLastError();
    record(-bytes);
  });
}

void record_nothing(int64_t) {}

// As the host provider: weights shared by the handles of one deserialized
// engine; scratch of its own for the largest profile unless user-managed.
void set_up_memory(CudaEngine* engine, const LoadOptions& load, std::shared_ptr<void> weights) {
  engine->shared = std::move(weights);
  engine->set_user_managed(load.user_managed_device_memory);
  if (!load.user_managed_device_memory) {
    engine->set_own_scratch(
        device_block(engine->max_scratch(), engine->device(), record_own_scratch_bytes),
        engine->max_scratch());
  }
}

// The kernels a plan launches, so they are loaded at deserialize (CUDA loads
// modules lazily) and not during a stream capture.
TteStatus preload_kernels(const Plan& plan, TteError* error) {
  const void* kernels[3] = {
      reinterpret_cast<const void*>(null_kernel), nullptr,
      plan.spin_us > 0 ? reinterpret_cast<const void*>(spin_kernel) : nullptr};
  if (plan.op != Op::kNull && plan.op != Op::kIdentity) {
    visit_arithmetic(plan.tensors[plan.inputs[0]].dtype->scalar_type, [&](auto tag) {
      using T = typename decltype(tag)::type;
      switch (plan.op) {
        case Op::kAddOne:
          kernels[1] = reinterpret_cast<const void*>(add_one_kernel<T>);
          break;
        case Op::kAdd:
          kernels[1] = reinterpret_cast<const void*>(add_kernel<T>);
          break;
        case Op::kKvUpdate:
          kernels[1] = reinterpret_cast<const void*>(kv_update_kernel<T>);
          break;
        case Op::kKeepPositive:
          kernels[1] = reinterpret_cast<const void*>(keep_positive_kernel<T>);
          break;
        default:
          break;
      }
    });
  }
  for (const void* kernel : kernels) {
    if (kernel == nullptr) continue;
    cudaFuncAttributes attributes{};
    cudaError_t status = cudaFuncGetAttributes(&attributes, kernel);
    if (status != cudaSuccess) {
      cudaGetLastError();
      return set_error(
          error, TTE_ERROR_RUNTIME,
          "deserialize: loading the test kernels failed (built for sm_75 and sm_90 with PTX): " +
              cuda_message("cudaFuncGetAttributes", status));
    }
  }
  return TTE_OK;
}

TteStatus cuda_deserialize(void* user_data, const void* plan, uint64_t plan_size,
                           const TteEngineLoadOptions* options, TteEngine** out_engine,
                           TteError* error) {
  const char* provider = static_cast<const char*>(user_data);
  return guarded(error, [&]() -> TteStatus {
    if (out_engine == nullptr)
      return set_error(error, TTE_ERROR_INVALID_ARGUMENT, "deserialize: out_engine is NULL");
    *out_engine = nullptr;
    Plan parsed;
    if (TteStatus s = parse_for_deserialize(provider, plan, plan_size, &parsed, error)) return s;

    int count = 0;
    cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess || count == 0) {
      cudaGetLastError();
      std::string cause = status != cudaSuccess ? cuda_message("cudaGetDeviceCount", status)
                                                : "cudaGetDeviceCount: 0";
      return set_error(error, TTE_ERROR_NO_DEVICE,
                       std::string("no CUDA device: provider ") + provider +
                           " needs an NVIDIA GPU (" + cause + ")");
    }
    LoadOptions load = read_load_options(options);
    if (load.device_id < 0 || load.device_id >= count) {
      return set_error(error, TTE_ERROR_INVALID_ARGUMENT,
                       "deserialize: device_id " + std::to_string(load.device_id) +
                           " is out of range; this machine has " + std::to_string(count) +
                           " CUDA device" + (count == 1 ? "" : "s"));
    }
    int current = -1;
    status = cudaGetDevice(&current);
    if (status != cudaSuccess)
      return set_error(error, TTE_ERROR_RUNTIME, cuda_message("cudaGetDevice", status));
    if (current != load.device_id) {
      return set_error(error, TTE_ERROR_INVALID_STATE,
                       "deserialize: the engine's device " + std::to_string(load.device_id) +
                           " is not current (device " + std::to_string(current) +
                           " is); make it current before deserialize");
    }
    if (!parsed.fail_deserialize.empty())
      return set_error(error, TTE_ERROR_RUNTIME, parsed.fail_deserialize);
    if (TteStatus s = preload_kernels(parsed, error)) return s;

    int integrated = 0;
    int pageable = 0;
    cudaDeviceGetAttribute(&integrated, cudaDevAttrIntegrated, current);
    cudaDeviceGetAttribute(&pageable, cudaDevAttrPageableMemoryAccess, current);
    cudaGetLastError();
    const int64_t weight_bytes = parsed.weight_bytes;
    std::unique_ptr<CudaEngine> engine(
        new CudaEngine(std::move(parsed), provider, current, integrated != 0 && pageable != 0));
    set_up_memory(engine.get(), load, device_block(weight_bytes, current, record_weight_bytes));
    *out_engine = to_handle(engine.release());
    record_deserialize(load);
    return TTE_OK;
  });
}

// keep_positive: memory for the engine's request (the input's size, an upper
// bound), the kernel, then a wait for the count: not capturable, as TensorRT
// with a data-dependent output.
TteStatus launch_keep_positive(CudaEngine& engine, cudaStream_t stream, TteError* error) {
  const Plan& plan = engine.plan();
  const int32_t in = plan.inputs[0];
  const int32_t out = plan.outputs[0];
  const int device = engine.device();
  void* y = engine.output_memory(out, engine.request_bytes(out), [device](int64_t bytes) {
    return device_block(bytes, device, record_nothing);
  });
  if (engine.count == nullptr) engine.count = device_block(sizeof(int64_t), device, record_nothing);
  auto* count = static_cast<int64_t*>(engine.count.get());
  visit_arithmetic(plan.tensors[in].dtype->scalar_type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    keep_positive_kernel<T><<<1, 1, 0, stream>>>(static_cast<const T*>(engine.bound(in)),
                                                 engine.numel(in), static_cast<T*>(y), count);
  });
  int64_t host_count = 0;
  cudaError_t status =
      cudaMemcpyAsync(&host_count, count, sizeof(host_count), cudaMemcpyDeviceToHost, stream);
  if (status == cudaSuccess) status = cudaStreamSynchronize(stream);
  if (status != cudaSuccess) {
    cudaGetLastError();
    return set_error(error, TTE_ERROR_RUNTIME,
                     "enqueue: keep_positive: " + cuda_message("reading the count", status));
  }
  engine.set_result(out, host_count, y);
  return TTE_OK;
}

TteStatus launch(CudaEngine& engine, cudaStream_t stream, TteError* error) {
  const Plan& plan = engine.plan();
  const std::vector<int32_t>& in = plan.inputs;
  const std::vector<int32_t>& out = plan.outputs;
  if (plan.spin_us > 0)
    spin_kernel<<<1, 1, 0, stream>>>(static_cast<uint64_t>(plan.spin_us) * 1000);
  switch (plan.op) {
    case Op::kNull:
      null_kernel<<<1, 1, 0, stream>>>();
      break;
    case Op::kKeepPositive:
      if (TteStatus s = launch_keep_positive(engine, stream, error)) return s;
      break;
    case Op::kIdentity:
      for (size_t k = 0; k < in.size(); ++k) {
        size_t bytes =
            static_cast<size_t>(engine.numel(out[k])) * plan.tensors[out[k]].dtype->element_size;
        if (bytes == 0 || engine.bound(out[k]) == engine.bound(in[k])) continue;
        cudaError_t status = cudaMemcpyAsync(engine.bound(out[k]), engine.bound(in[k]), bytes,
                                             cudaMemcpyDefault, stream);
        if (status != cudaSuccess) {
          cudaGetLastError();
          return set_error(error, TTE_ERROR_RUNTIME,
                           "enqueue: " + cuda_message("cudaMemcpyAsync", status));
        }
      }
      break;
    case Op::kAddOne:
    case Op::kAdd:
    case Op::kKvUpdate:
      visit_arithmetic(plan.tensors[in[0]].dtype->scalar_type, [&](auto tag) {
        using T = typename decltype(tag)::type;
        auto ptr = [&](int32_t index) { return static_cast<T*>(engine.bound(index)); };
        if (plan.op == Op::kAddOne) {
          int64_t n = engine.numel(out[0]);
          if (n > 0)
            add_one_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(ptr(in[0]), ptr(out[0]), n);
        } else if (plan.op == Op::kAdd) {
          int64_t n = engine.numel(out[0]);
          if (n > 0)
            add_kernel<T>
                <<<blocks_for(n), kThreads, 0, stream>>>(ptr(in[0]), ptr(in[1]), ptr(out[0]), n);
        } else {
          int64_t n = engine.numel(in[0]);
          T* y = out.size() > 1 ? ptr(out[1]) : nullptr;
          if (n > 0)
            kv_update_kernel<T>
                <<<blocks_for(n), kThreads, 0, stream>>>(ptr(in[0]), ptr(in[1]), y, n);
        }
      });
      break;
  }
  // The scratch: filled, then the first output passes through it, so a
  // scratch shared by mistake with concurrent work changes results.
  if (const int64_t need = engine.scratch_needed(); need > 0) {
    cudaMemsetAsync(engine.scratch(), 0xA5, static_cast<size_t>(need), stream);
    if (!out.empty()) {
      const int64_t bytes =
          std::max<int64_t>(0, engine.numel(out[0]) * plan.tensors[out[0]].dtype->element_size);
      const size_t n = static_cast<size_t>(std::min(bytes, need));
      if (n > 0 && engine.bound(out[0]) != nullptr) {
        cudaMemcpyAsync(engine.scratch(), engine.bound(out[0]), n, cudaMemcpyDefault, stream);
        cudaMemcpyAsync(engine.bound(out[0]), engine.scratch(), n, cudaMemcpyDefault, stream);
      }
    }
  }
  cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess) {
    return set_error(error, TTE_ERROR_RUNTIME,
                     std::string("enqueue: launching op '") + op_name(plan.op) +
                         "' failed: " + cuda_message("kernel launch", status));
  }
  return TTE_OK;
}

TteStatus cuda_enqueue(TteEngine* handle, void* stream, TteError* error) {
  if (handle == nullptr)
    return set_error(error, TTE_ERROR_INVALID_ARGUMENT, "engine handle is NULL");
  return guarded(error, [&]() -> TteStatus {
    auto* engine = static_cast<CudaEngine*>(from_handle(handle));
    if (TteStatus s = engine->prepare_enqueue(error)) return s;
    int current = -1;
    cudaError_t status = cudaGetDevice(&current);
    if (status != cudaSuccess)
      return set_error(error, TTE_ERROR_RUNTIME, cuda_message("cudaGetDevice", status));
    if (current != engine->device()) {
      return set_error(error, TTE_ERROR_INVALID_STATE,
                       "enqueue: the engine runs on device " + std::to_string(engine->device()) +
                           " but device " + std::to_string(current) + " is current");
    }
    if (TteStatus s = launch(*engine, static_cast<cudaStream_t>(stream), error)) return s;
    record_enqueue(stream);
    return TTE_OK;
  });
}

TteStatus cuda_create_execution_context(TteEngine* handle, const TteEngineLoadOptions* options,
                                        TteEngine** out_engine, TteError* error) {
  if (handle == nullptr)
    return set_error(error, TTE_ERROR_INVALID_ARGUMENT, "engine handle is NULL");
  if (out_engine == nullptr) {
    return set_error(error, TTE_ERROR_INVALID_ARGUMENT,
                     "create_execution_context: out_engine is NULL");
  }
  *out_engine = nullptr;
  return guarded(error, [&]() -> TteStatus {
    const auto* source = static_cast<const CudaEngine*>(from_handle(handle));
    std::unique_ptr<CudaEngine> engine(new CudaEngine(source->plan(), source->provider(),
                                                      source->device(), source->pageable_ok()));
    set_up_memory(engine.get(), read_load_options(options), source->shared);
    *out_engine = to_handle(engine.release());
    record_execution_context();
    return TTE_OK;
  });
}

TteStatus cuda_execute(TteEngine* handle, const TteEngineExecution* call, TteError* error) {
  return execute_steps(handle, call, error, cuda_enqueue);
}

TteEngineProvider make_provider(const char* name, int32_t capturable) {
  TteEngineProvider p{};
  set_common_functions(&p);
  p.name = name;
  p.memory_kind = TTE_MEMORY_DEVICE;
  p.enqueue_capturable = capturable;
  // deserialize names its provider in messages.
  p.user_data = const_cast<char*>(name);
  p.deserialize = cuda_deserialize;
  p.enqueue = cuda_enqueue;
  p.execute = cuda_execute;
  p.create_execution_context = cuda_create_execution_context;
  return p;
}

const TteEngineProvider& capturable_provider() {
  static const TteEngineProvider provider = make_provider(kCapturableName, 1);
  return provider;
}

const TteEngineProvider& uncapturable_provider() {
  static const TteEngineProvider provider = make_provider(kUncapturableName, 0);
  return provider;
}

}  // namespace
}  // namespace tte::test_engine

extern "C" {

TTE_TEST_PROVIDER_EXPORT const TteEngineProvider* tte_engine_provider_entry(uint32_t abi_version) {
  if (abi_version != TTE_ENGINE_PROVIDER_ABI_VERSION) return nullptr;
  return &tte::test_engine::capturable_provider();
}

TTE_TEST_PROVIDER_EXPORT const TteEngineProvider* tte_test_cuda_provider_uncapturable(void) {
  return &tte::test_engine::uncapturable_provider();
}

}  // extern "C"
