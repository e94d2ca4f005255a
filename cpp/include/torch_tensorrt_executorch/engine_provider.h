/*
 * Engine-provider ABI of the TensorRTBackend delegate.
 *
 * Everything engine-specific the backend needs (deserialize a plan, describe
 * its I/O tensors, set shapes and addresses, enqueue on a stream) goes through
 * one versioned, append-only struct of function pointers. Providers are the
 * TensorRT C++ API (native), TensorRT's Python API (registered through
 * ctypes), and test providers. Plain C, no framework types.
 *
 * Compatibility rules:
 *  - Fields are only ever appended. A provider sets `struct_size` to
 *    sizeof(TteEngineProvider) of the header it was built with; the backend
 *    never reads a field past `struct_size`.
 *  - `abi_version` is TTE_ENGINE_PROVIDER_ABI_VERSION of that header (1 or
 *    2); the backend accepts every version up to its own and refuses a newer
 *    one. Version 2 appended the data-dependent output entries
 *    (`set_output_capacity`, `get_output_result`) and lets output shapes
 *    hold TTE_DATA_DEPENDENT_DIM.
 *  - Every call returns a TteStatus and, on failure, fills `error->message`
 *    with one line that says what was expected and what was found.
 */
#ifndef TORCH_TENSORRT_EXECUTORCH_ENGINE_PROVIDER_H_
#define TORCH_TENSORRT_EXECUTORCH_ENGINE_PROVIDER_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TTE_ENGINE_PROVIDER_ABI_VERSION 2u
/* The oldest version a backend of this header still loads. */
#define TTE_ENGINE_PROVIDER_ABI_VERSION_MIN 1u
/* An output dim the engine knows only after it ran (TensorRT reports -1 for
 * a data-dependent output such as nonzero's once every input shape is set).
 * Reported by get_output_shape and SET_SHAPES of version 2 providers only. */
#define TTE_DATA_DEPENDENT_DIM (-1)
#define TTE_ERROR_MESSAGE_CAPACITY 1024
/* The largest tensor rank the ABI carries (TensorRT's own limit is 8). */
#define TTE_MAX_RANK 16

typedef int32_t TteStatus;
enum {
  TTE_OK = 0,
  TTE_ERROR_INVALID_ARGUMENT = 1,
  /* The provider does not accept this plan (not its format); the backend
   * then tries the next provider. */
  TTE_ERROR_NOT_ACCEPTED = 2,
  TTE_ERROR_RUNTIME = 3,
  /* Device (CUDA) memory could not be had. Before TTE_ERROR_HOST_OUT_OF_MEMORY
   * existed it also stood for host memory; a provider built against an older
   * header still reports host memory with it. */
  TTE_ERROR_OUT_OF_MEMORY = 4,
  TTE_ERROR_NO_DEVICE = 5,
  TTE_ERROR_NOT_SUPPORTED = 6,
  TTE_ERROR_NOT_FOUND = 7,
  TTE_ERROR_INVALID_PROGRAM = 8,
  TTE_ERROR_INTERNAL = 9,
  TTE_ERROR_INVALID_STATE = 10,
  /* Host memory was refused (past a bound such as the planned-memory bound
   * of TteProgramOptions::max_planned_memory) or could not be allocated
   * (malloc, page-locked memory). Appended: callers that predate it see an
   * unknown code, and freeing device memory does not help with it. */
  TTE_ERROR_HOST_OUT_OF_MEMORY = 11
};

/* Filled by the callee on failure. `code` repeats the returned status. */
typedef struct TteError {
  int32_t code;
  char message[TTE_ERROR_MESSAGE_CAPACITY];
} TteError;

/* Where the provider's engine expects tensor addresses to point. */
typedef int32_t TteMemoryKind;
enum {
  /* CUDA device memory (or host memory the device can read, on integrated
   * GPUs). The backend stages host tensors through device buffers. */
  TTE_MEMORY_DEVICE = 0,
  /* Host memory. The backend stages device tensors through host buffers and
   * passes a NULL stream. Used by test providers; needs no GPU. */
  TTE_MEMORY_HOST = 1
};

/* Provider categories; with equal category, registration order decides. */
typedef int32_t TteProviderKind;
enum { TTE_PROVIDER_NATIVE = 0, TTE_PROVIDER_PYTHON = 1, TTE_PROVIDER_OTHER = 2 };

/* Options the backend passes to `deserialize`. Append-only. */
typedef struct TteEngineLoadOptions {
  uint32_t struct_size;
  /* CUDA device the engine runs on (already current when called). */
  int32_t device_id;
  /* Non-zero when weight_streaming_budget holds a requested budget in bytes
   * (from the load-time option, else the compile spec). */
  int32_t has_weight_streaming_budget;
  int64_t weight_streaming_budget;

  /* Appended; read only when struct_size covers them. */
  /* Non-zero: refuse plans that carry host code, e.g. version-compatible
   * plans with the lean runtime embedded (TensorRT's
   * setEngineHostCodeAllowed(false)). Zero, the default, allows it, as
   * trtexec and Polygraphy do: load only plans you trust. */
  int32_t refuse_engine_host_code;
  /* Non-zero when dla_core holds the DLA core the engine runs on. */
  int32_t has_dla_core;
  int32_t dla_core;
  /* Plugin libraries to load into the runtime before deserializing
   * (num_plugin_libraries UTF-8 paths, valid during the call). */
  int32_t num_plugin_libraries;
  const char* const* plugin_libraries;
  /* A file where the runtime keeps compiled kernels between processes
   * (TensorRT-RTX's runtime cache); NULL for none. */
  const char* runtime_cache_path;
  /* Non-zero: the engine's execution context gets no activation (scratch)
   * memory of its own; before each enqueue the backend gives it memory with
   * `set_device_memory`, of at least `device_memory_size` bytes for the
   * selected profile (TensorRT: ExecutionContextAllocationStrategy::
   * kUSER_MANAGED). Sent only to providers with both of those entries. */
  int32_t user_managed_device_memory;
} TteEngineLoadOptions;

/* One I/O tensor of an engine. Strings are owned by the engine and stay
 * valid until `destroy`. */
typedef struct TteIoTensorDesc {
  const char* name; /* UTF-8 */
  int32_t is_input;
  /* ExecuTorch ScalarType value (executorch::aten::ScalarType). */
  int32_t scalar_type;
  int32_t rank;
  /* For an output the engine writes into one of its inputs in place
   * (TensorRT KV-cache update): that input's I/O index, else -1. */
  int32_t aliased_input;
  /* Non-zero for TensorRT shape tensors, which this backend refuses. */
  int32_t is_shape_tensor;
} TteIoTensorDesc;

typedef struct TteEngine TteEngine;

/* What the backend offers a provider (attach_host). Append-only. */
typedef struct TteProviderHost {
  uint32_t struct_size; /* sizeof(TteProviderHost) */
  /* The backend's log: `level` is a TteLogLevel (c_api.h: 0 debug, 1 info,
   * 2 warning, 3 error); log_enabled says whether a line would print. */
  int32_t (*log_enabled)(int32_t level);
  void (*log)(int32_t level, const char* message);
} TteProviderHost;

/* Steps of one batched call (TteEngineProvider.execute). */
enum {
  /* Select `profile`, set every input's shape, and report every output's
   * shape (as get_output_shape would). */
  TTE_EXECUTE_SET_SHAPES = 1u,
  /* Set every tensor's address, then enqueue on `stream` (as
   * set_tensor_address for each, then enqueue). */
  TTE_EXECUTE_ENQUEUE = 2u
};

/* One batched call: what the per-tensor calls carry, in arrays. Arrays are
 * valid during the call only. Append-only; the provider reads no field past
 * `struct_size`. */
typedef struct TteEngineExecution {
  uint32_t struct_size; /* sizeof(TteEngineExecution) of the caller */
  uint32_t steps;       /* TTE_EXECUTE_* bits; SET_SHAPES runs first */
  /* SET_SHAPES */
  int32_t profile;
  int32_t num_inputs;
  const int32_t* input_indices; /* the engine's I/O index of each input */
  const int32_t* input_ranks;
  const int64_t* input_dims; /* every input's dims, in a row */
  int32_t num_outputs;
  const int32_t* output_indices;
  int32_t* output_ranks; /* filled by the provider */
  int64_t* output_dims;  /* filled: TTE_MAX_RANK values per output */
  /* ENQUEUE */
  int32_t num_tensors;
  const int32_t* tensor_indices; /* the engine's I/O index of each address */
  void* const* addresses;
  void* stream; /* as enqueue's */
} TteEngineExecution;

typedef struct TteEngineProvider {
  uint32_t abi_version; /* TTE_ENGINE_PROVIDER_ABI_VERSION */
  uint32_t struct_size; /* sizeof(TteEngineProvider) */
  const char* name;     /* unique, copied at registration */
  TteMemoryKind memory_kind;
  /* Non-zero when `enqueue` may be captured into a CUDA graph (it launches
   * only stream-ordered work and does not synchronize). */
  int32_t enqueue_capturable;
  void* user_data;
  /* Called once, when the provider is unregistered and the last engine it
   * made is destroyed. May be NULL. */
  void (*release)(void* user_data);

  /* Deserialize a plan. Return TTE_ERROR_NOT_ACCEPTED for a plan that is not
   * this provider's format. The plan bytes are only valid during the call. */
  TteStatus (*deserialize)(void* user_data, const void* plan, uint64_t plan_size,
                           const TteEngineLoadOptions* options, TteEngine** out_engine,
                           TteError* error);

  /* I/O tensors are indexed 0..n-1 in the engine's own order. */
  TteStatus (*num_io_tensors)(TteEngine* engine, int32_t* out_count, TteError* error);
  TteStatus (*describe_io_tensor)(TteEngine* engine, int32_t index, TteIoTensorDesc* out_desc,
                                  TteError* error);

  /* Optimization profiles (at least 1) and an input's min/opt/max dims in
   * one of them; each array holds `rank` values. */
  TteStatus (*num_profiles)(TteEngine* engine, int32_t* out_count, TteError* error);
  TteStatus (*profile_shape)(TteEngine* engine, int32_t profile, int32_t input_index,
                             int64_t* min_dims, int64_t* opt_dims, int64_t* max_dims,
                             TteError* error);
  TteStatus (*select_profile)(TteEngine* engine, int32_t profile, void* stream, TteError* error);

  TteStatus (*set_input_shape)(TteEngine* engine, int32_t index, const int64_t* dims, int32_t rank,
                               TteError* error);
  /* After all input shapes are set. `capacity` is the size of `dims`. A
   * version 2 provider may report TTE_DATA_DEPENDENT_DIM for a dim known only
   * after the run (see get_output_result). */
  TteStatus (*get_output_shape)(TteEngine* engine, int32_t index, int64_t* dims, int32_t capacity,
                                int32_t* out_rank, TteError* error);
  /* Every address the backend passes is 256-byte aligned (TensorRT's rule
   * for setTensorAddress, applied to all providers): it stages tensors that
   * are not. */
  TteStatus (*set_tensor_address)(TteEngine* engine, int32_t index, void* address, TteError* error);
  /* Enqueue the engine on `stream` (a cudaStream_t; NULL for host
   * providers only: device providers always get a stream of their own, never
   * the legacy default stream). The backend synchronizes afterwards. */
  TteStatus (*enqueue)(TteEngine* engine, void* stream, TteError* error);
  void (*destroy)(TteEngine* engine);

  /* Appended; read only when struct_size covers them. Each may be NULL. */
  /* Whether this engine's enqueue on `stream` may be captured into a CUDA
   * graph now (*out_capturable non-zero); asked before each capture, after
   * a plain enqueue of the same shapes. An engine that streams its weights
   * or a TensorRT-RTX engine that says it cannot be captured answers 0.
   * Without this function `enqueue_capturable` alone decides. */
  TteStatus (*engine_capturable)(TteEngine* engine, void* stream, int32_t* out_capturable,
                                 TteError* error);
  /* One line for people (`doctor`): the runtime library the provider found
   * and its version, or why it found none (a missing runtime is the answer,
   * not a failure). May load the library; creates no runtime. */
  TteStatus (*describe_runtime)(void* user_data, char* text, uint32_t capacity, TteError* error);
  /* Called once, right after registration, with the host's services; the
   * table stays valid for as long as the provider is registered. */
  void (*attach_host)(void* user_data, const TteProviderHost* host);
  /* The per-tensor calls of one execute in one call (TteEngineExecution),
   * so a provider behind an expensive boundary (Python) is entered once per
   * execute. The backend sends SET_SHAPES only when the profile or an input
   * shape differs from what this engine was last given (the engine keeps
   * it), ENQUEUE on every plain run, and nothing at all when it replays a
   * CUDA graph. A provider may skip addresses equal to those of its
   * previous ENQUEUE. Addresses and streams follow the per-tensor calls'
   * rules (256-byte aligned; NULL only for host providers). Without this
   * function the per-tensor calls are used. */
  TteStatus (*execute)(TteEngine* engine, const TteEngineExecution* call, TteError* error);
  /* Scratch (activation) memory the engine's context needs to run
   * `profile`, in bytes: an upper bound over that profile's shapes
   * (TensorRT: ICudaEngine::getDeviceMemorySizeForProfileV2). Memory kind as
   * the provider's (host memory for host providers). */
  TteStatus (*device_memory_size)(TteEngine* engine, int32_t profile, int64_t* out_bytes,
                                  TteError* error);
  /* The scratch memory the next enqueues use (TensorRT:
   * IExecutionContext::setDeviceMemoryV2), for an engine loaded with
   * user_managed_device_memory. `memory` is 256-byte aligned (cudaMalloc's
   * alignment, which TensorRT asks for) and stays valid until set again or
   * the engine is destroyed; `bytes` is at least device_memory_size of the
   * profile enqueued. The backend never enqueues two engines on one memory
   * at once unless they run on one stream, in order. NULL is allowed when
   * the size is 0. */
  TteStatus (*set_device_memory)(TteEngine* engine, void* memory, int64_t bytes, TteError* error);
  /* Another handle on the deserialized engine behind `engine`, with its own
   * execution context(s) and state (profile, shapes, addresses), created
   * with `options` (user_managed_device_memory; the engine-wide options of
   * the first load stay in force). The deserialized engine is freed when
   * the last of its handles is destroyed, in any order. */
  TteStatus (*create_execution_context)(TteEngine* engine, const TteEngineLoadOptions* options,
                                        TteEngine** out_engine, TteError* error);
  /* Appended in version 2: outputs whose shape holds TTE_DATA_DEPENDENT_DIM
   * (TensorRT: IOutputAllocator on the execution context). Both or neither;
   * an engine reporting such a shape without them is refused at execute. */
  /* Before each enqueue (and before the batched ENQUEUE step), for each
   * data-dependent output: `bytes` can be written at the address the enqueue
   * gives it (the backend binds its planned upper-bound buffer). When the engine asks for more, the
   * provider gives it memory of its own instead (kept per engine handle, grown, never shrunk),
   * never a truncated buffer. */
  TteStatus (*set_output_capacity)(TteEngine* engine, int32_t index, int64_t bytes,
                                   TteError* error);
  /* After an enqueue returned (for device providers the backend then
   * synchronizes the stream before reading `*out_data`): the shape the
   * engine wrote (`capacity` the size of `dims`) and where its elements are:
   * the address set for it, or the provider's own memory, valid until the
   * next enqueue of this engine. */
  TteStatus (*get_output_result)(TteEngine* engine, int32_t index, int64_t* dims, int32_t capacity,
                                 int32_t* out_rank, void** out_data, TteError* error);
} TteEngineProvider;

/* Symbol a provider library exports so `tte_load_engine_provider_library`
 * and `tte-run --provider LIB` can register it. Returns NULL when the library
 * cannot serve `abi_version`; the backend asks for its own version first,
 * then for each older one down to TTE_ENGINE_PROVIDER_ABI_VERSION_MIN, so a
 * library built against an older header still loads. */
typedef const TteEngineProvider* (*TteEngineProviderEntryFn)(uint32_t abi_version);
#define TTE_ENGINE_PROVIDER_ENTRY_SYMBOL "tte_engine_provider_entry"

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TORCH_TENSORRT_EXECUTORCH_ENGINE_PROVIDER_H_ */
