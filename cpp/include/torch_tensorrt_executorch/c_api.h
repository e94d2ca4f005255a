/*
 * C API of libexecutorch_backend_tensorrt.so.
 *
 * Seven groups, each a handful of plain C functions, in this order below:
 *  - the plugin itself: versions, whether this library owns the
 *    `TensorRTBackend` registration, log level, CUDA devices;
 *  - engine providers: register, unregister, list, load from a library;
 *  - the delegate blob reader (for `inspect`);
 *  - the caller stream (per thread);
 *  - programs: the load options, open a .pte (+ .ptd) through ExecuTorch's
 *    Module, read metadata, run methods with DLPack tensors in and out;
 *  - method handles (C API version 2): one method run many times;
 *  - runtime statistics, for tests and benchmarks.
 *
 * Conventions (after ONNX Runtime's C API): opaque handles; every fallible
 * call returns TteStatus and fills an optional TteError; program calls also
 * keep the message as the handle's last error. Strings returned as `char*`
 * are freed with tte_free_string; `const char*` results are owned by the
 * library. Versioned: functions are only added, never changed.
 */
#ifndef TORCH_TENSORRT_EXECUTORCH_C_API_H_
#define TORCH_TENSORRT_EXECUTORCH_C_API_H_

#include <stddef.h>
#include <stdint.h>

#include "torch_tensorrt_executorch/dlpack.h"
#include "torch_tensorrt_executorch/engine_provider.h"

#if defined(_WIN32)
#define TTE_API __declspec(dllexport)
#else
#define TTE_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* 2: method handles (tte_program_get_method) and tte_method_run, whose
 * options carry the stream and an allocator for owned outputs; views keep
 * their program's memory alive. */
#define TTE_C_API_VERSION 2u
#define TTE_BACKEND_NAME "TensorRTBackend"

/* ---- The plugin ------------------------------------------------------- */

TTE_API uint32_t tte_c_api_version(void);
/* This package's version, e.g. "0.2.0". */
TTE_API const char* tte_version(void);
/* The ExecuTorch version the library was built against. */
TTE_API const char* tte_executorch_version(void);

/* 1 when the registry's `TensorRTBackend` is this library's backend. */
TTE_API int32_t tte_owns_backend_registration(void);
/* TTE_OK when registration succeeded; else says why (name taken by another
 * library, naming it when it can be found; registry full). */
TTE_API TteStatus tte_registration_status(TteError* error);
/* Path of the shared object that owns the `TensorRTBackend` registration,
 * or NULL when nothing is registered under that name. */
TTE_API const char* tte_registration_owner_path(void);
/* Path of this library. */
TTE_API const char* tte_library_path(void);

typedef int32_t TteLogLevel;
enum {
  TTE_LOG_DEBUG = 0,
  TTE_LOG_INFO = 1,
  TTE_LOG_WARNING = 2,
  TTE_LOG_ERROR = 3,
  TTE_LOG_OFF = 4
};
/* The plugin's log level; ExecuTorch's log is routed through the plugin's
 * log (process-wide, once the library is loaded): its lines appear at debug
 * and info, error lines at error when no Program API call reports them.
 * Setting the level also takes ExecuTorch's log back from a printer
 * installed since (ExecuTorch's Python extension installs one when
 * executorch.runtime is imported). */
TTE_API void tte_set_log_level(TteLogLevel level);
TTE_API TteLogLevel tte_get_log_level(void);

/* Number of CUDA devices usable by this process (0 without a driver or GPU;
 * never touches TensorRT). */
TTE_API int32_t tte_cuda_device_count(void);
/* Why tte_cuda_device_count() is 0, one sentence ("" when it is not): no
 * driver, a driver too old for the CUDA runtime this library was built with
 * (with both versions), or no GPU. Static storage; never freed. */
TTE_API const char* tte_cuda_unavailable_reason(void);
/* Who provides ExecuTorch's CUDA DeviceAllocator (device-planned programs):
 * "torch_tensorrt_executorch" (this library), "executorch_cuda_backend"
 * (ExecuTorch's own CUDA backend, loaded first when installed), "other", or
 * "none". */
TTE_API const char* tte_cuda_allocator_owner(void);

TTE_API void tte_free_string(char* str);

/* ---- Engine providers ------------------------------------------------- */

/* The struct is copied; the strings it points to are copied too. A name that
 * is already registered is refused. Registering affects later loads only. */
TTE_API TteStatus tte_register_engine_provider(const TteEngineProvider* provider,
                                               TteProviderKind kind, TteError* error);
/* Removes the provider from the registry. Engines it already made keep it
 * alive; its `release` runs when the last of them is destroyed. */
TTE_API TteStatus tte_unregister_engine_provider(const char* name, TteError* error);
/* Registered providers in selection order (native, Python, others; each in
 * registration order). */
TTE_API size_t tte_num_engine_providers(void);
/* Name of provider `index`, or NULL past the end. The returned string is
 * valid until the provider is unregistered. */
TTE_API const char* tte_engine_provider_name(size_t index);
/* dlopen a provider library (never closed), call its
 * `tte_engine_provider_entry` and register what it returns. */
TTE_API TteStatus tte_load_engine_provider_library(const char* path, TteProviderKind kind,
                                                   TteError* error);
/* One line about the runtime provider `name` runs engines with (the
 * TensorRT library it found and its version, or why it found none), or ""
 * when the provider says nothing; free *out_text with tte_free_string. For
 * the native TensorRT provider that is not registered, TTE_ERROR_NOT_FOUND
 * says why its library was not loaded. */
TTE_API TteStatus tte_engine_provider_runtime(const char* name, char** out_text, TteError* error);

/* ---- Delegate blob reader --------------------------------------------- */

/* Parse a TensorRTBackend delegate blob (TR01/TR02) and describe it as JSON:
 * {"magic","metadata_offset","metadata_size","engine_offset","engine_size",
 *  "io_bindings":[{"name","is_input","dtype","shape"}],"aliased_io":[...],
 *  "hardware_compatible","device_id","serialized_metadata",
 *  "target_platform"}. */
TTE_API TteStatus tte_blob_describe_json(const void* data, uint64_t size, char** out_json,
                                         TteError* error);

/* ---- Caller stream (per thread) --------------------------------------- */

/* CUDA work of delegates and programs run on this thread uses `stream`
 * (a cudaStream_t) until cleared: each call reads it when it begins.
 * Otherwise a delegate uses a stream of its own, or, with shared scratch
 * memory, one its call borrows from a pool and gives back when it returns.
 * `execute` always returns with the work finished. */
TTE_API void tte_set_thread_stream(void* stream);
TTE_API void tte_clear_thread_stream(void);
/* 1 and *out_stream set when a caller stream is set on this thread. */
TTE_API int32_t tte_get_thread_stream(void** out_stream);

/* ---- Programs --------------------------------------------------------- */

typedef struct TteProgram TteProgram;

typedef int32_t TteOptionType;
enum { TTE_OPTION_BOOL = 0, TTE_OPTION_INT = 1, TTE_OPTION_STRING = 2 };

/* A load-time option for one backend (ExecuTorch's LoadBackendOptionsMap).
 * The options of `TensorRTBackend` (and of the Program API, under the same
 * backend name) are listed by tte_load_option_info. */
typedef struct TteBackendOption {
  const char* backend;
  const char* key;
  TteOptionType type;
  int64_t int_value; /* bool or int */
  const char* string_value;
} TteBackendOption;

/* One load option of `TensorRTBackend`, from the table the plugin parses
 * them with. Strings are owned by the library and live as long as it is
 * loaded. */
typedef struct TteLoadOptionInfo {
  uint32_t struct_size; /* set by the caller to sizeof(TteLoadOptionInfo) */
  const char* name;
  /* The value types it takes: bit (1u << t) for each TteOptionType t. */
  uint32_t accepted_types;
  const char* type;     /* for tables and help: "bool", "int", "str", "int or decimal str" */
  const char* must_be;  /* what a value must be, as its refusal says it */
  const char* fallback; /* what applies when it is not given */
  const char* doc;      /* one sentence */
  /* 1: read by the Program API (tte_program_open_*), ignored by the backend
   * when a program is run through the stock ExecuTorch runtime. */
  int32_t program_only;
} TteLoadOptionInfo;

/* The number of load options; their indices are 0 to that number - 1. */
TTE_API size_t tte_num_load_options(void);
/* Fills `out_info` (its struct_size set) with option `index`: as much of the
 * struct as the caller's struct_size has room for. An index past the end is
 * TTE_ERROR_INVALID_ARGUMENT. */
TTE_API TteStatus tte_load_option_info(size_t index, TteLoadOptionInfo* out_info, TteError* error);

typedef struct TteBuffer {
  const void* data;
  size_t size;
} TteBuffer;

typedef struct TteProgramOptions {
  uint32_t struct_size; /* sizeof(TteProgramOptions) */
  /* External data (.ptd) files, or buffers (copied). */
  const char* const* data_paths;
  size_t num_data_paths;
  const TteBuffer* data_buffers;
  size_t num_data_buffers;
  const TteBackendOption* backend_options;
  size_t num_backend_options;
  /* Non-zero: record an ETDump; write it with tte_program_write_etdump. */
  int32_t enable_etdump;
  /* Bytes of host memory one method may plan (its memory-planned arenas,
   * allocated and zero-filled when it loads). 0: the host memory available
   * when it loads (MemAvailable, within the process's memory cgroup limit).
   * A method past the bound fails to load with TTE_ERROR_HOST_OUT_OF_MEMORY,
   * and so does a run needing a host buffer past it for an output the method
   * does not plan (every later run of the method, without a new attempt).
   * The bound is per method: several methods together can exceed it. */
  uint64_t max_planned_memory;
} TteProgramOptions;

/* Open a program from a file or a buffer (copied). Files are read, not
 * mapped: what stays needed is copied, so a file changed or cut short while
 * the program is open cannot crash it; a method loaded after its file
 * changed fails with TTE_ERROR_INVALID_STATE. Methods load on first use, or
 * with tte_program_load_method; one that failed to load fails again at once
 * with the same status (open the program again to retry). */
TTE_API TteStatus tte_program_open_file(const char* path, const TteProgramOptions* options,
                                        TteProgram** out_program, TteError* error);
TTE_API TteStatus tte_program_open_buffer(const void* data, size_t size,
                                          const TteProgramOptions* options,
                                          TteProgram** out_program, TteError* error);
/* Closes the handle. Memory that method handles (tte_program_get_method) and
 * output views still point at stays valid until the last of them is
 * released; runs through such a method handle then fail with
 * TTE_ERROR_INVALID_STATE. */
TTE_API void tte_program_close(TteProgram* program);
/* The message of the last failed call on this handle ("" if none). */
TTE_API const char* tte_program_last_error(const TteProgram* program);

TTE_API TteStatus tte_program_num_methods(TteProgram* program, size_t* out_count, TteError* error);
/* Valid while the program is open. */
TTE_API TteStatus tte_program_method_name(TteProgram* program, size_t index, const char** out_name,
                                          TteError* error);
/* Load (initialize delegates of) a method now rather than on first run. */
TTE_API TteStatus tte_program_load_method(TteProgram* program, const char* method, TteError* error);

typedef int32_t TteValueTag;
enum {
  TTE_VALUE_NONE = 0,
  TTE_VALUE_TENSOR = 1,
  TTE_VALUE_INT = 2,
  TTE_VALUE_DOUBLE = 3,
  TTE_VALUE_BOOL = 4,
  TTE_VALUE_OTHER = 5
};

/* Device types as ExecuTorch records them. */
enum { TTE_DEVICE_CPU = 0, TTE_DEVICE_CUDA = 1 };

typedef struct TteValueInfo {
  TteValueTag tag;
  int32_t scalar_type; /* ExecuTorch ScalarType, tensors only */
  int32_t rank;
  int64_t sizes[TTE_MAX_RANK]; /* upper bounds for dynamic dims */
  int32_t is_memory_planned;
  int32_t device_type; /* TTE_DEVICE_*, where the program records one */
  int32_t device_index;
  uint64_t nbytes;
} TteValueInfo;

TTE_API TteStatus tte_program_method_io_count(TteProgram* program, const char* method,
                                              size_t* out_num_inputs, size_t* out_num_outputs,
                                              TteError* error);
TTE_API TteStatus tte_program_input_info(TteProgram* program, const char* method, size_t index,
                                         TteValueInfo* out_info, TteError* error);
TTE_API TteStatus tte_program_output_info(TteProgram* program, const char* method, size_t index,
                                          TteValueInfo* out_info, TteError* error);

/* JSON description of the loaded program: methods with I/O metadata, and for
 * each TensorRTBackend delegate of each loaded method the parsed blob
 * metadata, engine size and compile specs. */
TTE_API TteStatus tte_program_describe_json(TteProgram* program, char** out_json, TteError* error);

/* One method argument. Tensors are borrowed for the duration of the call.
 * For a tensor, `int_value` carries the DLPack flags of its
 * DLManagedTensorVersioned (0 for a legacy DLManagedTensor or a bare
 * DLTensor): with DLPACK_FLAG_BITMASK_READ_ONLY set, a run that would write
 * the tensor's memory in place (a delegate's aliased input, e.g. a KV cache)
 * fails with TTE_ERROR_INVALID_ARGUMENT instead. */
typedef struct TteInput {
  TteValueTag tag;
  const DLTensor* tensor;
  int64_t int_value;
  double double_value;
  int32_t bool_value;
} TteInput;

/* One method result. For tensors, `tensor` is a DLPack 1.x managed tensor
 * the caller owns and releases with its deleter. With copy == 0 it is a view
 * of the program's memory: its contents change with the next run of this
 * method, and it keeps that memory alive (the program may be closed first). */
typedef struct TteOutput {
  TteValueTag tag;
  DLManagedTensorVersioned* tensor;
  int64_t int_value;
  double double_value;
  int32_t bool_value;
} TteOutput;

/* Set inputs, execute, and return outputs, atomically with respect to other
 * threads using the same program (one lock per program; different programs
 * run in parallel). Inputs may be host or CUDA memory; a planned input is
 * copied into its arena, a non-planned one is shared. `num_outputs` must
 * equal the method's output count. Returns with all work finished. */
TTE_API TteStatus tte_program_run(TteProgram* program, const char* method, const TteInput* inputs,
                                  size_t num_inputs, int32_t copy_outputs, TteOutput* outputs,
                                  size_t num_outputs, TteError* error);

TTE_API TteStatus tte_program_write_etdump(TteProgram* program, const char* path, TteError* error);

/* ---- Method handles (C API version 2) -------------------------------- */

/* One method of an open program, for callers that run it many times: the
 * name is looked up and the method loaded (its delegates initialized) once,
 * here. The handle keeps the program's memory alive until it is released;
 * after tte_program_close, runs through it fail with
 * TTE_ERROR_INVALID_STATE. Safe to use from several threads (runs of one
 * program are serialized). */
typedef struct TteMethod TteMethod;

TTE_API TteStatus tte_program_get_method(TteProgram* program, const char* method,
                                         TteMethod** out_method, TteError* error);
TTE_API void tte_method_release(TteMethod* method);
TTE_API TteStatus tte_method_io_count(TteMethod* method, size_t* out_num_inputs,
                                      size_t* out_num_outputs, TteError* error);

/* Allocates the memory of one owned output in the caller's library (a
 * framework's caching allocator, a pool), so owned outputs cost no
 * allocation of this library's own. `prototype` gives the dtype, ndim, shape
 * and device (data and strides are NULL); the function returns a tensor of
 * exactly those, compact and row-major, which the run fills and hands back
 * in TteOutput.tensor. Called while the run holds the program's lock, on the
 * thread that called tte_method_run; it must not run this program. */
typedef TteStatus (*TteOutputAllocator)(void* context, const DLTensor* prototype,
                                        DLManagedTensorVersioned** out_tensor, TteError* error);

typedef struct TteRunOptions {
  uint32_t struct_size; /* sizeof(TteRunOptions) */
  /* Non-zero: owned outputs (copies); zero: views of the program's memory. */
  int32_t copy_outputs;
  /* Non-zero: the run's CUDA work (copies, delegates) goes on `stream` (a
   * cudaStream_t; NULL is the legacy default stream) instead of the thread's
   * caller stream (tte_set_thread_stream) or the delegates' own. */
  int32_t has_stream;
  void* stream;
  /* Owned outputs come from this allocator when set, else from a pool the
   * program keeps (device memory is reused, never allocated per run). */
  TteOutputAllocator allocate_output;
  void* allocator_context;
} TteRunOptions;

/* tte_program_run on a method handle, with options (NULL: copy outputs, no
 * stream, no allocator). Returns with all work finished. */
TTE_API TteStatus tte_method_run(TteMethod* method, const TteInput* inputs, size_t num_inputs,
                                 const TteRunOptions* options, TteOutput* outputs,
                                 size_t num_outputs, TteError* error);

/* ---- Runtime statistics (process-wide, for tests and benchmarks) ------- */

/* Counters of the work this library did on behalf of callers: host<->device
 * copies made by delegate staging and by the Program API (not copies that
 * ExecuTorch's own et_copy kernels make), engine enqueues and CUDA-graph
 * activity. Append-only. */
typedef struct TteRuntimeStats {
  uint32_t struct_size; /* set by the caller to sizeof(TteRuntimeStats) */
  uint64_t h2d_copies;
  uint64_t h2d_bytes;
  uint64_t d2h_copies;
  uint64_t d2h_bytes;
  uint64_t d2d_copies;
  uint64_t d2d_bytes;
  uint64_t enqueues;
  uint64_t graph_captures;
  uint64_t graph_replays;
  uint64_t graph_fallbacks;
  /* Appended. Scratch arenas shared by delegates (load option
   * share_device_memory): how many exist, their bytes now and the most
   * since the last reset; deserialized engines shared by delegates
   * (share_engines) and the loads that reused one instead of
   * deserializing. */
  uint64_t scratch_arenas;
  uint64_t scratch_arena_bytes;
  uint64_t scratch_arena_peak_bytes;
  uint64_t shared_engines;
  uint64_t shared_engine_reuses;
  /* Appended. CUDA graphs (load option cuda_graphs): copies into and out of
   * graph-owned I/O buffers (0 since version 0.2: a graph is updated to a
   * call's new addresses instead, see graph_updates), and the shape sets an
   * engine said it cannot capture (they run plainly while cached). */
  uint64_t graph_io_copies;
  uint64_t graph_io_bytes;
  uint64_t graph_uncapturable;
  /* Appended. The engine cache (share_engines): plans it named by a SHA-256
   * of their bytes, and the bytes hashed. A plan the Program API reads from
   * a file is named by the file's identity and the plan's offset instead,
   * and is not counted here. */
  uint64_t plan_digests;
  uint64_t plan_digest_bytes;
  /* Appended. CUDA graphs updated in place to the addresses of a call whose
   * tensors moved (cudaGraphExecUpdate), each before its replay. */
  uint64_t graph_updates;
  /* Appended. Host tensors staged through mapped page-locked memory, which
   * the device reads and writes where it lies (integrated GPUs, or any GPU
   * with TORCH_TENSORRT_EXECUTORCH_MAPPED_STAGING=1): the CPU copies into and
   * out of it, made instead of host<->device copies, and their bytes. */
  uint64_t mapped_copies;
  uint64_t mapped_bytes;
  /* Appended. Program API runs (tte_method_run) that launched the CUDA graph
   * of the method's last run again instead of executing the method: its one
   * instruction is a TensorRTBackend delegate call that ended with a graph
   * launch, and every input is the same device memory with the same shape,
   * on the same stream (docs/architecture.md). Each is also a graph
   * replay. */
  uint64_t run_repeats;
} TteRuntimeStats;
TTE_API void tte_get_runtime_stats(TteRuntimeStats* out_stats);
TTE_API void tte_reset_runtime_stats(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TORCH_TENSORRT_EXECUTORCH_C_API_H_ */
