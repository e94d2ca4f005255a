/* The batched entry of Python providers (TteEngineProvider.execute): one C
 * function the plugin calls once per execute, which takes the GIL and makes
 * one Python call into the engine's adapter (providers.adapter
 * EngineAdapter): `set_shapes` when the shapes changed, `enqueue_at` with
 * the addresses only when they differ from the previous call's. The engine
 * handle is a BridgeEngine made here (engine_new), which holds the adapter. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "provider_bridge.h"

typedef struct BridgeEngine {
  PyObject* adapter; /* a strong reference */
  int32_t num_addresses;
  void** addresses; /* of the last successful enqueue_at; NULL: none yet */
} BridgeEngine;

/* providers.failure_of(exc, where) -> (status, message). */
static PyObject* failure_of;

/* Fills `error` from the exception being raised and clears it. */
static TteStatus fail(TteError* error, const char* where) {
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  PyErr_NormalizeException(&type, &value, &traceback);
  TteStatus status = TTE_ERROR_RUNTIME;
  const char* text = NULL;
  PyObject* answer = NULL;
  if (failure_of != NULL && value != NULL) {
    answer = PyObject_CallFunction(failure_of, "Os", value, where);
  }
  if (answer != NULL && PyTuple_Check(answer) && PyTuple_Size(answer) == 2) {
    status = (TteStatus)PyLong_AsLong(PyTuple_GetItem(answer, 0));
    text = PyUnicode_AsUTF8AndSize(PyTuple_GetItem(answer, 1), NULL);
  }
  PyErr_Clear();
  snprintf(error->message, sizeof(error->message), "%s",
           text != NULL ? text : "the Python provider failed");
  if (status == TTE_OK) {
    status = TTE_ERROR_RUNTIME;
  }
  error->code = status;
  Py_XDECREF(answer);
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(traceback);
  return status;
}

static PyObject* index_tuple(const int32_t* indices, int32_t count) {
  PyObject* tuple = PyTuple_New(count);
  for (int32_t i = 0; tuple != NULL && i < count; ++i) {
    PyObject* item = PyLong_FromLong(indices[i]);
    if (item == NULL) {
      Py_CLEAR(tuple);
      break;
    }
    PyTuple_SetItem(tuple, i, item);
  }
  return tuple;
}

static PyObject* stream_object(void* stream) {
  return stream == NULL ? Py_NewRef(Py_None) : PyLong_FromVoidPtr(stream);
}

/* adapter.set_shapes(profile, input_indices, input_dims, output_indices,
 * stream) -> one sequence of dims per output. */
static TteStatus set_shapes(BridgeEngine* engine, const TteEngineExecution* call, TteError* error) {
  PyObject* dims = PyTuple_New(call->num_inputs);
  const int64_t* next = call->input_dims;
  for (int32_t i = 0; dims != NULL && i < call->num_inputs; ++i) {
    PyObject* shape = PyTuple_New(call->input_ranks[i]);
    for (int32_t d = 0; shape != NULL && d < call->input_ranks[i]; ++d) {
      PyObject* extent = PyLong_FromLongLong(next[d]);
      if (extent == NULL) {
        Py_CLEAR(shape);
        break;
      }
      PyTuple_SetItem(shape, d, extent);
    }
    if (shape == NULL) {
      Py_CLEAR(dims);
      break;
    }
    PyTuple_SetItem(dims, i, shape);
    next += call->input_ranks[i];
  }
  PyObject* inputs = index_tuple(call->input_indices, call->num_inputs);
  PyObject* outputs = index_tuple(call->output_indices, call->num_outputs);
  PyObject* stream = stream_object(call->stream);
  PyObject* shapes = NULL;
  if (dims != NULL && inputs != NULL && outputs != NULL && stream != NULL) {
    shapes = PyObject_CallMethod(engine->adapter, "set_shapes", "iOOOO", call->profile, inputs,
                                 dims, outputs, stream);
  }
  Py_XDECREF(dims);
  Py_XDECREF(inputs);
  Py_XDECREF(outputs);
  Py_XDECREF(stream);
  if (shapes == NULL) {
    return fail(error, "execute (set shapes)");
  }
  PyObject* sequence = PySequence_Tuple(shapes);
  Py_DECREF(shapes);
  if (sequence == NULL) {
    return fail(error, "execute (set shapes)");
  }
  if (PyTuple_Size(sequence) != call->num_outputs) {
    Py_DECREF(sequence);
    PyErr_Format(PyExc_ValueError, "set_shapes returned %d output shapes for %d outputs",
                 (int)PyTuple_Size(sequence), call->num_outputs);
    return fail(error, "execute (set shapes)");
  }
  for (int32_t o = 0; o < call->num_outputs; ++o) {
    PyObject* shape = PySequence_Tuple(PyTuple_GetItem(sequence, o));
    if (shape == NULL) {
      Py_DECREF(sequence);
      return fail(error, "execute (set shapes)");
    }
    const Py_ssize_t rank = PyTuple_Size(shape);
    if (rank > TTE_MAX_RANK) {
      Py_DECREF(shape);
      Py_DECREF(sequence);
      PyErr_Format(PyExc_ValueError, "output %d has rank %d, more than %d", o, (int)rank,
                   TTE_MAX_RANK);
      return fail(error, "execute (set shapes)");
    }
    call->output_ranks[o] = (int32_t)rank;
    for (Py_ssize_t d = 0; d < rank; ++d) {
      call->output_dims[o * TTE_MAX_RANK + d] = PyLong_AsLongLong(PyTuple_GetItem(shape, d));
    }
    Py_DECREF(shape);
    if (PyErr_Occurred()) {
      Py_DECREF(sequence);
      return fail(error, "execute (set shapes)");
    }
  }
  Py_DECREF(sequence);
  return TTE_OK;
}

static int same_addresses(const BridgeEngine* engine, const TteEngineExecution* call) {
  return engine->addresses != NULL && engine->num_addresses == call->num_tensors &&
         memcmp(engine->addresses, call->addresses, (size_t)call->num_tensors * sizeof(void*)) == 0;
}

/* adapter.enqueue_at(tensor_indices, addresses, stream); both None when
 * the addresses are those of the previous call. */
static TteStatus enqueue_at(BridgeEngine* engine, const TteEngineExecution* call, TteError* error) {
  const int unchanged = same_addresses(engine, call);
  PyObject* indices =
      unchanged ? Py_NewRef(Py_None) : index_tuple(call->tensor_indices, call->num_tensors);
  PyObject* addresses = unchanged ? Py_NewRef(Py_None) : PyTuple_New(call->num_tensors);
  for (int32_t t = 0; !unchanged && addresses != NULL && t < call->num_tensors; ++t) {
    PyObject* address = PyLong_FromVoidPtr(call->addresses[t]);
    if (address == NULL) {
      Py_CLEAR(addresses);
      break;
    }
    PyTuple_SetItem(addresses, t, address);
  }
  PyObject* stream = stream_object(call->stream);
  PyObject* done = NULL;
  if (indices != NULL && addresses != NULL && stream != NULL) {
    done = PyObject_CallMethod(engine->adapter, "enqueue_at", "OOO", indices, addresses, stream);
  }
  Py_XDECREF(indices);
  Py_XDECREF(addresses);
  Py_XDECREF(stream);
  if (done == NULL) {
    /* What the engine holds now is unknown: send every address next time. */
    free(engine->addresses);
    engine->addresses = NULL;
    return fail(error, "execute (enqueue)");
  }
  Py_DECREF(done);
  if (!unchanged) {
    void** copy = realloc(engine->addresses,
                          (size_t)(call->num_tensors > 0 ? call->num_tensors : 1) * sizeof(void*));
    if (copy != NULL) {
      memcpy(copy, call->addresses, (size_t)call->num_tensors * sizeof(void*));
      engine->num_addresses = call->num_tensors;
    } else {
      free(engine->addresses);
    }
    engine->addresses = copy;
  }
  return TTE_OK;
}

static TteStatus bridge_execute(TteEngine* handle, const TteEngineExecution* call,
                                TteError* error) {
  BridgeEngine* engine = (BridgeEngine*)handle;
  if (engine == NULL || call == NULL ||
      call->struct_size < offsetof(TteEngineExecution, stream) + sizeof(void*)) {
    snprintf(error->message, sizeof(error->message),
             "execute: NULL engine or a call shorter than expected");
    error->code = TTE_ERROR_INVALID_ARGUMENT;
    return TTE_ERROR_INVALID_ARGUMENT;
  }
  PyGILState_STATE gil = PyGILState_Ensure();
  TteStatus status = TTE_OK;
  if (call->steps & TTE_EXECUTE_SET_SHAPES) {
    status = set_shapes(engine, call, error);
  }
  if (status == TTE_OK && (call->steps & TTE_EXECUTE_ENQUEUE)) {
    status = enqueue_at(engine, call, error);
  }
  PyGILState_Release(gil);
  return status;
}

static PyObject* engine_new(PyObject* module, PyObject* adapter) {
  (void)module;
  BridgeEngine* engine = calloc(1, sizeof(BridgeEngine));
  if (engine == NULL) {
    return PyErr_NoMemory();
  }
  engine->adapter = Py_NewRef(adapter);
  return PyLong_FromVoidPtr(engine);
}

static PyObject* engine_free(PyObject* module, PyObject* address) {
  (void)module;
  BridgeEngine* engine = PyLong_AsVoidPtr(address);
  if (engine == NULL) {
    return PyErr_Occurred() ? NULL : Py_NewRef(Py_None);
  }
  Py_CLEAR(engine->adapter);
  free(engine->addresses);
  free(engine);
  Py_RETURN_NONE;
}

static PyObject* provider_execute(PyObject* module, PyObject* failure) {
  (void)module;
  Py_INCREF(failure);
  Py_XDECREF(failure_of);
  failure_of = failure;
  return PyLong_FromVoidPtr((void*)bridge_execute);
}

static PyMethodDef bridge_methods[] = {
    {"engine_new", engine_new, METH_O,
     "engine_new(adapter) -> the TteEngine* (int) of a Python engine."},
    {"engine_free", engine_free, METH_O, "engine_free(handle): release what engine_new made."},
    {"provider_execute", provider_execute, METH_O,
     "provider_execute(failure_of) -> the address of the batched entry for Python providers."},
    {NULL, NULL, 0, NULL},
};

int tte_bridge_register(PyObject* module) { return PyModule_AddFunctions(module, bridge_methods); }
