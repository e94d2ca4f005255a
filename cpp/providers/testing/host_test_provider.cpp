// Provider "test-host": runs test-engine plans (docs/test-engine-format.md)
// on host memory, so the backend is testable on machines without a GPU. The
// backend stages device tensors through host buffers and passes a NULL stream.
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <thread>
#include <type_traits>

#include "testing/test_engine.h"
#include "testing/test_engine_format.h"
#include "testing/test_provider_api.h"

namespace tte::test_engine {
namespace {

constexpr const char* kProviderName = "test-host";

float float_from_bits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

uint32_t bits_of(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  return bits;
}

// IEEE binary16 and bfloat16 as bits; arithmetic goes through float and
// rounds to nearest even, as CUDA's __float2half_rn and __float2bfloat16_rn.
struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

float to_float(Half h) {
  uint32_t sign = static_cast<uint32_t>(h.bits & 0x8000) << 16;
  uint32_t exponent = (h.bits >> 10) & 0x1F;
  uint32_t mantissa = h.bits & 0x3FF;
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24, exact in float
    float magnitude = static_cast<float>(mantissa) * (1.0f / 16777216.0f);
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 31) return float_from_bits(sign | 0x7F800000u | (mantissa << 13));
  return float_from_bits(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

Half to_half(float f) {
  uint32_t bits = bits_of(f);
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  uint32_t magnitude = bits & 0x7FFFFFFF;
  if (magnitude >= 0x7F800000u) {  // inf or NaN
    return {static_cast<uint16_t>(sign | (magnitude > 0x7F800000u ? 0x7E00 : 0x7C00))};
  }
  if (magnitude >= 0x477FF000u)
    return {static_cast<uint16_t>(sign | 0x7C00)};  // rounds to >= 65520
  if (magnitude < 0x38800000u) {
    // Below 2^-14: a subnormal half, round(|f| * 2^24); 1024 is the smallest
    // normal, encoded the same way.
    float scaled = float_from_bits(magnitude) * 16777216.0f;
    uint32_t m = static_cast<uint32_t>(scaled);
    float rest = scaled - static_cast<float>(m);
    if (rest > 0.5f || (rest == 0.5f && (m & 1))) ++m;
    return {static_cast<uint16_t>(sign | m)};
  }
  uint32_t h = (magnitude >> 13) - ((127 - 15) << 10);
  uint32_t dropped = magnitude & 0x1FFF;
  if (dropped > 0x1000 || (dropped == 0x1000 && (h & 1))) ++h;
  return {static_cast<uint16_t>(sign | h)};
}

float to_float(BFloat16 b) { return float_from_bits(static_cast<uint32_t>(b.bits) << 16); }

BFloat16 to_bfloat16(float f) {
  uint32_t bits = bits_of(f);
  if ((bits & 0x7FFFFFFF) > 0x7F800000u)
    return {static_cast<uint16_t>((bits >> 16) | 0x40)};  // quiet NaN
  bits += 0x7FFF + ((bits >> 16) & 1);
  return {static_cast<uint16_t>(bits >> 16)};
}

template <typename T>
T add(T a, T b) {
  if constexpr (std::is_same_v<T, Half>) {
    return to_half(to_float(a) + to_float(b));
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return to_bfloat16(to_float(a) + to_float(b));
  } else if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;  // integers wrap, as on the GPU
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}

template <typename T>
T one() {
  if constexpr (std::is_same_v<T, Half>) {
    return to_half(1.0f);
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return to_bfloat16(1.0f);
  } else {
    return T{1};
  }
}

template <typename T>
void run_arithmetic(const Engine& engine) {
  const Plan& plan = engine.plan();
  const std::vector<int32_t>& in = plan.inputs;
  const std::vector<int32_t>& out = plan.outputs;
  auto ptr = [&](int32_t index) { return static_cast<T*>(engine.bound(index)); };
  switch (plan.op) {
    case Op::kAddOne: {
      const T* x = ptr(in[0]);
      T* y = ptr(out[0]);
      for (int64_t i = 0, n = engine.numel(out[0]); i < n; ++i) y[i] = add(x[i], one<T>());
      break;
    }
    case Op::kAdd: {
      const T* a = ptr(in[0]);
      const T* b = ptr(in[1]);
      T* y = ptr(out[0]);
      for (int64_t i = 0, n = engine.numel(out[0]); i < n; ++i) y[i] = add(a[i], b[i]);
      break;
    }
    case Op::kKvUpdate: {
      T* cache = ptr(in[0]);
      const T* x = ptr(in[1]);
      T* y = out.size() > 1 ? ptr(out[1]) : nullptr;
      for (int64_t i = 0, n = engine.numel(in[0]); i < n; ++i) {
        cache[i] = add(cache[i], x[i]);
        if (y != nullptr) y[i] = cache[i];
      }
      break;
    }
    case Op::kIdentity:
    case Op::kNull:
    case Op::kKeepPositive:
      break;
  }
}

template <typename T>
bool positive(T v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return to_float(v) > 0.0f;
  } else {
    return v > T{0};
  }
}

template <typename T>
int64_t keep_positive(const T* x, int64_t n, T* y) {
  int64_t count = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (positive(x[i])) y[count++] = x[i];
  }
  return count;
}

void run_keep_positive(Engine& engine);

void run(Engine& engine) {
  const Plan& plan = engine.plan();
  if (plan.op == Op::kNull) return;
  if (plan.op == Op::kKeepPositive) return run_keep_positive(engine);
  if (plan.op == Op::kIdentity) {
    for (size_t k = 0; k < plan.inputs.size(); ++k) {
      int32_t in = plan.inputs[k];
      int32_t out = plan.outputs[k];
      size_t bytes = static_cast<size_t>(engine.numel(out)) * plan.tensors[out].dtype->element_size;
      if (bytes > 0 && engine.bound(out) != engine.bound(in)) {
        std::memmove(engine.bound(out), engine.bound(in), bytes);
      }
    }
    return;
  }
  switch (plan.tensors[plan.inputs[0]].dtype->scalar_type) {
    case kByte:
      return run_arithmetic<uint8_t>(engine);
    case kChar:
      return run_arithmetic<int8_t>(engine);
    case kShort:
      return run_arithmetic<int16_t>(engine);
    case kInt:
      return run_arithmetic<int32_t>(engine);
    case kLong:
      return run_arithmetic<int64_t>(engine);
    case kHalf:
      return run_arithmetic<Half>(engine);
    case kFloat:
      return run_arithmetic<float>(engine);
    case kDouble:
      return run_arithmetic<double>(engine);
    case kBFloat16:
      return run_arithmetic<BFloat16>(engine);
    default:
      return;  // bool: the format allows it only for identity and null
  }
}

std::shared_ptr<void> host_block(int64_t bytes, void (*record)(int64_t));
void record_nothing(int64_t) {}

// keep_positive: memory for the engine's request (its input's size, an upper
// bound, as TensorRT asks before it knows the count), then the compaction.
void run_keep_positive(Engine& engine) {
  const Plan& plan = engine.plan();
  const int32_t in = plan.inputs[0];
  const int32_t out = plan.outputs[0];
  void* y = engine.output_memory(out, engine.request_bytes(out),
                                 [](int64_t bytes) { return host_block(bytes, record_nothing); });
  const void* x = engine.bound(in);
  const int64_t n = engine.numel(in);
  int64_t count = 0;
  switch (plan.tensors[in].dtype->scalar_type) {
    case kByte:
      count = keep_positive(static_cast<const uint8_t*>(x), n, static_cast<uint8_t*>(y));
      break;
    case kChar:
      count = keep_positive(static_cast<const int8_t*>(x), n, static_cast<int8_t*>(y));
      break;
    case kShort:
      count = keep_positive(static_cast<const int16_t*>(x), n, static_cast<int16_t*>(y));
      break;
    case kInt:
      count = keep_positive(static_cast<const int32_t*>(x), n, static_cast<int32_t*>(y));
      break;
    case kLong:
      count = keep_positive(static_cast<const int64_t*>(x), n, static_cast<int64_t*>(y));
      break;
    case kHalf:
      count = keep_positive(static_cast<const Half*>(x), n, static_cast<Half*>(y));
      break;
    case kFloat:
      count = keep_positive(static_cast<const float*>(x), n, static_cast<float*>(y));
      break;
    case kDouble:
      count = keep_positive(static_cast<const double*>(x), n, static_cast<double*>(y));
      break;
    case kBFloat16:
      count = keep_positive(static_cast<const BFloat16*>(x), n, static_cast<BFloat16*>(y));
      break;
    default:
      break;  // bool: the format refuses it for keep_positive
  }
  engine.set_result(out, count, y);
}

// 256-byte aligned host memory, zeroed (so it is really there), counted by
// `record` while it lives; nullptr for 0 bytes.
std::shared_ptr<void> host_block(int64_t bytes, void (*record)(int64_t)) {
  if (bytes <= 0) return nullptr;
  size_t size = (static_cast<size_t>(bytes) + 255) / 256 * 256;
  void* memory = std::aligned_alloc(256, size);
  if (memory == nullptr) throw std::bad_alloc();
  std::memset(memory, 0, size);
  record(bytes);
  return std::shared_ptr<void>(memory, [bytes, record](void* p) {
    std::free(p);
    record(-bytes);
  });
}

// An engine's memory: the deserialized engine's weights (shared by its
// handles) and, without user-managed memory, scratch of its own for the
// largest profile (as TensorRT's kSTATIC contexts).
void set_up_memory(Engine* engine, const LoadOptions& load, std::shared_ptr<void> weights) {
  engine->shared = std::move(weights);
  engine->set_user_managed(load.user_managed_device_memory);
  if (!load.user_managed_device_memory) {
    engine->set_own_scratch(host_block(engine->max_scratch(), record_own_scratch_bytes),
                            engine->max_scratch());
  }
}

// Enqueue uses the scratch: fills it, then passes the first output through
// it, so a scratch shared by mistake with concurrent work changes results.
void use_scratch(const Engine& engine) {
  const int64_t need = engine.scratch_needed();
  if (need <= 0) return;
  std::memset(engine.scratch(), 0xA5, static_cast<size_t>(need));
  const Plan& plan = engine.plan();
  if (plan.outputs.empty()) return;
  const int32_t out = plan.outputs[0];
  const int64_t bytes = engine.numel(out) * plan.tensors[out].dtype->element_size;
  if (bytes <= 0) return;  // empty, or data-dependent (keep_positive)
  const size_t n = static_cast<size_t>(std::min(bytes, need));
  if (n == 0 || engine.bound(out) == nullptr) return;
  std::memcpy(engine.scratch(), engine.bound(out), n);
  std::memcpy(engine.bound(out), engine.scratch(), n);
}

TteStatus host_deserialize(void* /*user_data*/, const void* plan, uint64_t plan_size,
                           const TteEngineLoadOptions* options, TteEngine** out_engine,
                           TteError* error) {
  return guarded(error, [&]() -> TteStatus {
    if (out_engine == nullptr)
      return set_error(error, TTE_ERROR_INVALID_ARGUMENT, "deserialize: out_engine is NULL");
    *out_engine = nullptr;
    Plan parsed;
    if (TteStatus s = parse_for_deserialize(kProviderName, plan, plan_size, &parsed, error))
      return s;
    if (!parsed.fail_deserialize.empty())
      return set_error(error, TTE_ERROR_RUNTIME, parsed.fail_deserialize);
    LoadOptions load = read_load_options(options);
    const int64_t weight_bytes = parsed.weight_bytes;
    std::unique_ptr<Engine> engine(new Engine(std::move(parsed)));
    set_up_memory(engine.get(), load, host_block(weight_bytes, record_weight_bytes));
    *out_engine = to_handle(engine.release());
    record_deserialize(load);
    return TTE_OK;
  });
}

TteStatus host_enqueue(TteEngine* handle, void* stream, TteError* error) {
  if (handle == nullptr)
    return set_error(error, TTE_ERROR_INVALID_ARGUMENT, "engine handle is NULL");
  return guarded(error, [&]() -> TteStatus {
    if (stream != nullptr) {
      return set_error(error, TTE_ERROR_INVALID_ARGUMENT,
                       "enqueue: provider test-host works on host memory and takes a NULL stream");
    }
    Engine* engine = from_handle(handle);
    if (TteStatus s = engine->prepare_enqueue(error)) return s;
    const ProfileInFlight in_flight(*engine);
    if (engine->plan().spin_us > 0)
      std::this_thread::sleep_for(std::chrono::microseconds(engine->plan().spin_us));
    run(*engine);
    use_scratch(*engine);
    record_enqueue(stream);
    return TTE_OK;
  });
}

TteStatus host_create_execution_context(TteEngine* handle, const TteEngineLoadOptions* options,
                                        TteEngine** out_engine, TteError* error) {
  if (handle == nullptr)
    return set_error(error, TTE_ERROR_INVALID_ARGUMENT, "engine handle is NULL");
  if (out_engine == nullptr) {
    return set_error(error, TTE_ERROR_INVALID_ARGUMENT,
                     "create_execution_context: out_engine is NULL");
  }
  *out_engine = nullptr;
  return guarded(error, [&]() -> TteStatus {
    const Engine* source = from_handle(handle);
    std::unique_ptr<Engine> engine(new Engine(source->plan()));
    set_up_memory(engine.get(), read_load_options(options), source->shared);
    *out_engine = to_handle(engine.release());
    record_execution_context();
    return TTE_OK;
  });
}

TteStatus host_execute(TteEngine* handle, const TteEngineExecution* call, TteError* error) {
  return execute_steps(handle, call, error, host_enqueue);
}

const TteEngineProvider& host_provider() {
  static const TteEngineProvider provider = [] {
    TteEngineProvider p{};
    set_common_functions(&p);
    p.name = kProviderName;
    p.memory_kind = TTE_MEMORY_HOST;
    p.enqueue_capturable = 0;
    p.deserialize = host_deserialize;
    p.enqueue = host_enqueue;
    p.execute = host_execute;
    p.create_execution_context = host_create_execution_context;
    return p;
  }();
  return provider;
}

const TteEngineProvider& per_tensor_provider() {
  static const TteEngineProvider provider = [] {
    TteEngineProvider p = host_provider();
    // A provider of the version 1 header: its struct ends before execute,
    // so it stands for every provider built before the ABI grew.
    p.name = "test-host-per-tensor";
    p.abi_version = 1;
    p.execute = nullptr;
    p.struct_size = static_cast<uint32_t>(offsetof(TteEngineProvider, execute));
    return p;
  }();
  return provider;
}

}  // namespace
}  // namespace tte::test_engine

extern "C" {

TTE_TEST_PROVIDER_EXPORT const TteEngineProvider* tte_engine_provider_entry(uint32_t abi_version) {
  if (abi_version != TTE_ENGINE_PROVIDER_ABI_VERSION) return nullptr;
  return &tte::test_engine::host_provider();
}

TTE_TEST_PROVIDER_EXPORT const TteEngineProvider* tte_test_host_provider_per_tensor(void) {
  return &tte::test_engine::per_tensor_provider();
}

}  // extern "C"
