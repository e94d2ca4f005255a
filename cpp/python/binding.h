/*
 * The compiled part of the Python binding (the `_compiled` module of
 * torch_tensorrt_executorch_runtime._native): the hot path of a run, over the
 * plugin's C API. Plain C on CPython's limited API (3.10 and later), built
 * once as an abi3 module; it links neither the plugin nor libpython, and
 * takes the plugin's functions from the copy the binding already loaded.
 */
#ifndef TTE_PYTHON_BINDING_H_
#define TTE_PYTHON_BINDING_H_

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "torch_tensorrt_executorch/c_api.h"

/* The C API functions this module calls, found with dlsym. */
typedef struct TteApi {
  __typeof__(&tte_program_get_method) program_get_method;
  __typeof__(&tte_method_release) method_release;
  __typeof__(&tte_method_io_count) method_io_count;
  __typeof__(&tte_method_run) method_run;
} TteApi;

/* Set by bind(); NULL members until then. */
extern TteApi tte_api;

/* Python helpers bind() was given: errors.error_for_status, the fallback
 * stream lookup and the fallback output conversion. */
extern PyObject* tte_error_for_status;
extern PyObject* tte_stream_of;
extern PyObject* tte_convert_outputs;

/* Raises the exception class of `status` with `message` (through
 * errors.error_for_status); returns NULL. */
PyObject* tte_raise_status(TteStatus status, const char* message);
/* The name of `value`'s type (a new reference; never NULL, never raises). */
PyObject* tte_type_name(PyObject* value);
/* Raises InvalidArgumentError (the status the C API would use); NULL. */
PyObject* tte_raise_invalid(const char* format, ...);

/* ---- DLPack (dlpack_bridge.c) ---- */

/* The C exchange API of `type` (cached per type), or NULL when it offers
 * none this module can use. Never raises. */
const DLPackExchangeAPI* tte_exchange_api(PyTypeObject* type);

/* Counters of which DLPack path inputs and outputs took (stats()). */
typedef struct TteBindingCounters {
  unsigned long long exchange_inputs;
  unsigned long long protocol_inputs;
  unsigned long long exchange_outputs;
  unsigned long long converted_outputs;
  /* copy=False outputs returned as the previous run's object (method.c) */
  unsigned long long reused_views;
} TteBindingCounters;
extern TteBindingCounters tte_counters;

/* One input tensor as the run borrows it. `owner` is what must stay alive
 * until the run returns (a capsule, a detached tensor); `managed` a managed
 * tensor to delete then; `flags` the DLPack 1.x flags of the producer's
 * managed tensor (0 where it gave none: a legacy capsule, a bare DLTensor),
 * passed to the C API so read-only memory is never written. */
typedef struct TteBorrowed {
  DLTensor view;
  PyObject* owner;
  DLManagedTensorVersioned* managed;
  uint64_t flags;
} TteBorrowed;

/* Borrows `value` through its `__dlpack__` (DLPack 1.x, else legacy),
 * asking the producer to order its work before `stream` for CUDA memory
 * (`has_stream` 0: no ordering). Sets *tensor to the DLTensor to pass.
 * Returns 0, or -1 with an exception set. */
int tte_borrow_protocol(PyObject* value, int has_stream, void* stream, TteBorrowed* out,
                        const DLTensor** tensor);
/* The DLPack device of `value` through `__dlpack_device__`; -1 on error. */
int tte_dlpack_device(PyObject* value, int32_t* device_type, int32_t* device_id);
/* Releases what tte_borrow_* kept. */
void tte_release_borrowed(TteBorrowed* borrowed);

/* The adapter from the C API's output allocator to an exchange API's. */
TteStatus tte_allocate_with_exchange(void* api, const DLTensor* prototype,
                                     DLManagedTensorVersioned** out, TteError* error);

/* ---- Output objects (output.c) ---- */

/* A DLPack result object owning `tensor` (consumable once through
 * `__dlpack__`); NULL with an exception set (the tensor is then deleted). */
PyObject* tte_output_new(DLManagedTensorVersioned* tensor);
int tte_output_register(PyObject* module);

/* ---- Methods (method.c) ---- */

int tte_method_register(PyObject* module);

/* ---- The batched entry of Python providers (provider_bridge.c) ---- */

int tte_bridge_register(PyObject* module);

#endif /* TTE_PYTHON_BINDING_H_ */
