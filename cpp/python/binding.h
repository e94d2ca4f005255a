/*
 * The compiled part of the Python binding (the `_compiled` module of
 * torch_tensorrt_executorch_runtime._native): the hot path of a run, over the
 * plugin's C API. Plain C on CPython's limited API (3.10 and later), built
 * once as an abi3 module; it links neither the plugin nor libpython, and
 * takes the plugin's functions from the copy the binding already loaded.
 *
 * This header (binding.c) holds what every unit uses: Python's and the C
 * API's headers, the C API functions and Python helpers bind() sets, and
 * raising the exception of a status. Each unit has its own header beside it;
 * module.c, the module itself, includes them all and nothing includes it.
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

#endif /* TTE_PYTHON_BINDING_H_ */
