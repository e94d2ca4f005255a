/* `Method`: a method handle of an open program (tte_program_get_method) and
 * its run, the hot path of Program.run: inputs borrowed without Python
 * calls where the tensor library offers the DLPack C exchange API, the
 * stream taken from that library, the C API called once with the GIL
 * released, owned outputs allocated and returned by the inputs' library. */
#include <string.h>

#include "dlpack_bridge.h"
#include "method.h"
#include "output.h"

#define STACK_VALUES 8

TteBindingCounters tte_counters;

/* A view (copy=False) output returned by the last run, kept to be returned
 * again while the output has not moved: making a tensor object costs its
 * library more than the rest of a CUDA-graph replay. */
typedef struct CachedView {
  PyObject* object; /* NULL: none */
  uint64_t flags;   /* the DLPack flags it was made with */
} CachedView;

typedef struct MethodObject {
  PyObject_HEAD
  TteMethod* method;
  size_t num_inputs;
  size_t num_outputs;
  PyObject* name;    /* str */
  CachedView* views; /* num_outputs entries */
} MethodObject;

static PyTypeObject* method_type;

static PyObject* method_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  static char* keywords[] = {"program", "name", NULL};
  PyObject* address = NULL;
  PyObject* name = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OU:Method", keywords, &address, &name)) {
    return NULL;
  }
  if (tte_api.method_run == NULL) {
    PyErr_SetString(PyExc_RuntimeError, "the binding is not bound to the plugin (bind() first)");
    return NULL;
  }
  TteProgram* program = PyLong_AsVoidPtr(address);
  if (program == NULL) {
    if (!PyErr_Occurred()) {
      PyErr_SetString(PyExc_ValueError, "program is NULL");
    }
    return NULL;
  }
  const char* text = PyUnicode_AsUTF8AndSize(name, NULL);
  if (text == NULL) {
    return NULL;
  }
  TteMethod* method = NULL;
  TteError error;
  TteStatus status;
  Py_BEGIN_ALLOW_THREADS
    /* Loads the method (its delegates' init) on first use: no GIL needed. */
    status = tte_api.program_get_method(program, text, &method, &error);
  Py_END_ALLOW_THREADS
  if (status != TTE_OK) {
    return tte_raise_status(status, error.message);
  }
  size_t num_inputs = 0;
  size_t num_outputs = 0;
  status = tte_api.method_io_count(method, &num_inputs, &num_outputs, &error);
  if (status != TTE_OK) {
    tte_api.method_release(method);
    return tte_raise_status(status, error.message);
  }
  allocfunc alloc = (allocfunc)PyType_GetSlot(type, Py_tp_alloc);
  MethodObject* self = (MethodObject*)alloc(type, 0);
  if (self == NULL) {
    tte_api.method_release(method);
    return NULL;
  }
  self->method = method;
  self->num_inputs = num_inputs;
  self->num_outputs = num_outputs;
  self->name = Py_NewRef(name);
  self->views = PyMem_Calloc(num_outputs > 0 ? num_outputs : 1, sizeof(CachedView));
  if (self->views == NULL) {
    Py_DECREF(self);
    return PyErr_NoMemory();
  }
  return (PyObject*)self;
}

static void method_dealloc(PyObject* object) {
  MethodObject* self = (MethodObject*)object;
  if (self->views != NULL) {
    for (size_t i = 0; i < self->num_outputs; ++i) {
      Py_CLEAR(self->views[i].object);
    }
    PyMem_Free(self->views);
    self->views = NULL;
  }
  if (self->method != NULL) {
    /* May be the last owner of the program: its delegates' destroy can call
     * back into Python providers, which take the GIL they already have. */
    tte_api.method_release(self->method);
    self->method = NULL;
  }
  Py_CLEAR(self->name);
  PyTypeObject* type = Py_TYPE(object);
  freefunc free_slot = (freefunc)PyType_GetSlot(type, Py_tp_free);
  free_slot(object);
  Py_DECREF(type);
}

/* Everything one run holds: C inputs and outputs, borrowed tensors, and
 * which inputs still wait for the `__dlpack__` protocol. */
typedef struct Run {
  size_t num_inputs;
  size_t num_outputs;
  TteInput* inputs;
  TteBorrowed* borrowed;
  char* pending;
  TteOutput* outputs;
  TteInput stack_inputs[STACK_VALUES];
  TteBorrowed stack_borrowed[STACK_VALUES];
  char stack_pending[STACK_VALUES];
  TteOutput stack_outputs[STACK_VALUES];
} Run;

static int run_init(Run* run, size_t num_inputs, size_t num_outputs) {
  run->num_inputs = num_inputs;
  run->num_outputs = num_outputs;
  if (num_inputs <= STACK_VALUES) {
    run->inputs = run->stack_inputs;
    run->borrowed = run->stack_borrowed;
    run->pending = run->stack_pending;
  } else {
    run->inputs = PyMem_Malloc(num_inputs * sizeof(TteInput));
    run->borrowed = PyMem_Malloc(num_inputs * sizeof(TteBorrowed));
    run->pending = PyMem_Malloc(num_inputs);
  }
  run->outputs = num_outputs <= STACK_VALUES ? run->stack_outputs
                                             : PyMem_Malloc(num_outputs * sizeof(TteOutput));
  if (run->inputs == NULL || run->borrowed == NULL || run->pending == NULL ||
      run->outputs == NULL) {
    /* Nothing was borrowed yet: run_release only frees the arrays. */
    run->num_inputs = 0;
    run->num_outputs = 0;
    PyErr_NoMemory();
    return -1;
  }
  memset(run->inputs, 0, num_inputs * sizeof(TteInput));
  memset(run->borrowed, 0, num_inputs * sizeof(TteBorrowed));
  memset(run->pending, 0, num_inputs);
  memset(run->outputs, 0, num_outputs * sizeof(TteOutput));
  return 0;
}

static void run_release(Run* run) {
  if (run->borrowed != NULL) {
    for (size_t i = 0; i < run->num_inputs; ++i) {
      tte_release_borrowed(&run->borrowed[i]);
    }
  }
  if (run->inputs != run->stack_inputs) {
    PyMem_Free(run->inputs);
    PyMem_Free(run->borrowed);
    PyMem_Free(run->pending);
  }
  if (run->outputs != run->stack_outputs) {
    PyMem_Free(run->outputs);
  }
}

static int is_cuda_memory(int32_t device_type) {
  return device_type == kDLCUDA || device_type == kDLCUDAManaged;
}

/* The run's stream, decided by the first CUDA input when the caller named
 * none: its library's current stream. */
typedef struct RunStream {
  int decided; /* the caller named one, or a CUDA input decided */
  int has_stream;
  void* stream;
} RunStream;

/* Borrows an input through its library's exchange API. Returns 1 when
 * borrowed, 0 when it must go through `__dlpack__` (its library's current
 * stream is not the run's), -1 on error. */
static int borrow_exchange(const DLPackExchangeAPI* api, PyObject* value, RunStream* stream,
                           TteBorrowed* borrowed, const DLTensor** tensor) {
  if (api->dltensor_from_py_object_no_sync != NULL) {
    if (api->dltensor_from_py_object_no_sync(value, &borrowed->view) != 0) {
      return -1;
    }
    *tensor = &borrowed->view;
  } else {
    if (api->managed_tensor_from_py_object_no_sync(value, &borrowed->managed) != 0) {
      return -1;
    }
    *tensor = &borrowed->managed->dl_tensor;
    borrowed->flags = borrowed->managed->flags;
  }
  const DLDevice device = (*tensor)->device;
  if (!is_cuda_memory(device.device_type)) {
    return 1;
  }
  void* current = NULL;
  if (api->current_work_stream(device.device_type, device.device_id, &current) != 0) {
    tte_release_borrowed(borrowed);
    return -1;
  }
  if (!stream->decided) {
    stream->decided = 1;
    stream->has_stream = 1;
    stream->stream = current;
    return 1;
  }
  if (stream->has_stream && stream->stream == current) {
    return 1;
  }
  /* Work queued on another stream: `__dlpack__` orders it before the run's. */
  tte_release_borrowed(borrowed);
  return 0;
}

/* A tensor input of a library without the exchange API that could decide
 * the run's stream: its library's current stream (binding helper). */
static int decide_stream_from(PyObject* value, RunStream* stream) {
  int32_t device_type = 0;
  int32_t device_id = 0;
  if (tte_dlpack_device(value, &device_type, &device_id) < 0) {
    return -1;
  }
  if (!is_cuda_memory(device_type)) {
    return 0;
  }
  PyObject* found = PyObject_CallFunctionObjArgs(tte_stream_of, value, NULL);
  if (found == NULL) {
    return -1;
  }
  stream->decided = 1;
  if (found != Py_None) {
    stream->has_stream = 1;
    stream->stream = PyLong_AsVoidPtr(found);
  }
  Py_DECREF(found);
  return PyErr_Occurred() ? -1 : 0;
}

static PyObject* run_failed(MethodObject* self, size_t index, PyObject* value) {
  PyObject* name = tte_type_name(value);
  const char* method = PyUnicode_AsUTF8AndSize(self->name, NULL);
  const char* type = PyUnicode_AsUTF8AndSize(name, NULL);
  PyErr_Clear();
  tte_raise_invalid(
      "input %zu of '%s' is a %s; expected a tensor (torch, numpy, any DLPack object), a "
      "Python int, float or bool, or None",
      index, method != NULL ? method : "?", type != NULL ? type : "?");
  Py_DECREF(name);
  return NULL;
}

/* Fills the C inputs; -1 with an exception set. Returns in *out_api the
 * exchange API of the first input that has one (the outputs' library). */
static int prepare_inputs(MethodObject* self, PyObject* values, Run* run, RunStream* stream,
                          const DLPackExchangeAPI** out_api) {
  for (size_t i = 0; i < run->num_inputs; ++i) {
    PyObject* value = PyTuple_GetItem(values, (Py_ssize_t)i);
    TteInput* input = &run->inputs[i];
    if (value == Py_None) {
      input->tag = TTE_VALUE_NONE;
    } else if (PyBool_Check(value)) {
      input->tag = TTE_VALUE_BOOL;
      input->bool_value = value == Py_True;
    } else if (PyLong_Check(value)) {
      input->tag = TTE_VALUE_INT;
      input->int_value = PyLong_AsLongLong(value);
      if (input->int_value == -1 && PyErr_Occurred()) {
        return -1;
      }
    } else if (PyFloat_Check(value)) {
      input->tag = TTE_VALUE_DOUBLE;
      input->double_value = PyFloat_AsDouble(value);
    } else {
      const DLPackExchangeAPI* api = tte_exchange_api(Py_TYPE(value));
      input->tag = TTE_VALUE_TENSOR;
      if (api != NULL) {
        if (*out_api == NULL) {
          *out_api = api;
        }
        const DLTensor* tensor = NULL;
        const int borrowed = borrow_exchange(api, value, stream, &run->borrowed[i], &tensor);
        if (borrowed < 0) {
          return -1;
        }
        if (borrowed == 1) {
          input->tensor = tensor;
          input->int_value = (int64_t)run->borrowed[i].flags; /* DLPack flags (c_api.h) */
          ++tte_counters.exchange_inputs;
          continue;
        }
        run->pending[i] = 1;
        continue;
      }
      const int has_protocol = PyObject_HasAttrString(value, "__dlpack__");
      if (!has_protocol) {
        run_failed(self, i, value);
        return -1;
      }
      run->pending[i] = 1;
      if (!stream->decided && decide_stream_from(value, stream) < 0) {
        return -1;
      }
    }
  }
  for (size_t i = 0; i < run->num_inputs; ++i) {
    if (!run->pending[i]) {
      continue;
    }
    PyObject* value = PyTuple_GetItem(values, (Py_ssize_t)i);
    const DLTensor* tensor = NULL;
    if (tte_borrow_protocol(value, stream->has_stream, stream->stream, &run->borrowed[i], &tensor) <
        0) {
      return -1;
    }
    run->inputs[i].tensor = tensor;
    run->inputs[i].int_value = (int64_t)run->borrowed[i].flags; /* DLPack flags (c_api.h) */
    ++tte_counters.protocol_inputs;
  }
  return 0;
}

/* Whether `object`, a tensor of `api`'s library, still describes exactly
 * `tensor` (memory, device, dtype, shape, strides): what a new view would. A
 * caller may have changed it in place (resize_, unsqueeze_, set_). */
static int describes(const DLPackExchangeAPI* api, PyObject* object, const DLTensor* tensor) {
  DLTensor now;
  if (api->dltensor_from_py_object_no_sync(object, &now) != 0) {
    PyErr_Clear();
    return 0;
  }
  if ((char*)now.data + now.byte_offset != (char*)tensor->data + tensor->byte_offset ||
      now.device.device_type != tensor->device.device_type ||
      now.device.device_id != tensor->device.device_id || now.dtype.code != tensor->dtype.code ||
      now.dtype.bits != tensor->dtype.bits || now.dtype.lanes != tensor->dtype.lanes ||
      now.ndim != tensor->ndim) {
    return 0;
  }
  int64_t compact = 1;
  for (int32_t d = tensor->ndim - 1; d >= 0; --d) {
    if (now.shape[d] != tensor->shape[d]) {
      return 0;
    }
    const int64_t want = tensor->strides != NULL ? tensor->strides[d] : compact;
    const int64_t have = now.strides != NULL ? now.strides[d] : compact;
    if (tensor->shape[d] > 1 && want != have) {
      return 0;
    }
    compact *= tensor->shape[d];
  }
  return 1;
}

/* The run's results as Python values: tensors through `api` (owned by the
 * inputs' library) or as Output objects. Releases every C output. Views
 * (`views` non-NULL) that have not moved since the last run come back as
 * the same objects. */
static PyObject* collect_outputs(Run* run, const DLPackExchangeAPI* api, CachedView* views,
                                 int* has_outputs_to_convert) {
  PyObject* results = PyList_New((Py_ssize_t)run->num_outputs);
  size_t i = 0;
  for (; results != NULL && i < run->num_outputs; ++i) {
    TteOutput* output = &run->outputs[i];
    PyObject* item = NULL;
    switch (output->tag) {
      case TTE_VALUE_TENSOR:
        if (output->tensor == NULL) {
          item = Py_NewRef(Py_None);
        } else if (api != NULL) {
          void* made = NULL;
          DLManagedTensorVersioned* tensor = output->tensor;
          output->tensor = NULL;
          CachedView* view =
              views != NULL && api->dltensor_from_py_object_no_sync != NULL ? &views[i] : NULL;
          if (view != NULL && view->object != NULL && view->flags == tensor->flags &&
              describes(api, view->object, &tensor->dl_tensor)) {
            item = Py_NewRef(view->object);
            tensor->deleter(tensor);
            ++tte_counters.reused_views;
            break;
          }
          const uint64_t flags = tensor->flags;
          /* Takes the tensor, on failure too. */
          if (api->managed_tensor_to_py_object_no_sync(tensor, &made) == 0) {
            item = made;
            ++tte_counters.exchange_outputs;
            if (view != NULL) {
              PyObject* previous = view->object;
              view->object = Py_NewRef(item);
              Py_XDECREF(previous);
              view->flags = flags;
            }
          }
        } else {
          item = tte_output_new(output->tensor);
          output->tensor = NULL;
          *has_outputs_to_convert = 1;
          ++tte_counters.converted_outputs;
        }
        break;
      case TTE_VALUE_INT:
        item = PyLong_FromLongLong(output->int_value);
        break;
      case TTE_VALUE_DOUBLE:
        item = PyFloat_FromDouble(output->double_value);
        break;
      case TTE_VALUE_BOOL:
        item = PyBool_FromLong(output->bool_value);
        break;
      default:
        item = Py_NewRef(Py_None);
        break;
    }
    if (item == NULL) {
      Py_CLEAR(results);
      ++i;
      break;
    }
    PyList_SetItem(results, (Py_ssize_t)i, item);
  }
  for (; i < run->num_outputs; ++i) {
    DLManagedTensorVersioned* tensor = run->outputs[i].tensor;
    if (tensor != NULL && tensor->deleter != NULL) {
      tensor->deleter(tensor);
    }
    run->outputs[i].tensor = NULL;
  }
  return results;
}

/* run(inputs, stream, copy) -> list. inputs: a tuple or list of tensors and
 * scalars, or one tensor; stream: an int cudaStream_t or None; copy: owned
 * outputs (True) or views of the program's memory (False). */
static PyObject* method_run(PyObject* object, PyObject* const* args, Py_ssize_t nargs) {
  MethodObject* self = (MethodObject*)object;
  if (nargs != 3) {
    PyErr_SetString(PyExc_TypeError, "run(inputs, stream, copy) takes 3 arguments");
    return NULL;
  }
  PyObject* values;
  if (PyTuple_Check(args[0])) {
    values = Py_NewRef(args[0]);
  } else if (PyList_Check(args[0])) {
    values = PyList_AsTuple(args[0]);
  } else if (tte_exchange_api(Py_TYPE(args[0])) != NULL ||
             PyObject_HasAttrString(args[0], "__dlpack__")) {
    values = PyTuple_Pack(1, args[0]);
  } else {
    values = PySequence_Tuple(args[0]);
  }
  if (values == NULL) {
    return NULL;
  }
  const int copy = PyObject_IsTrue(args[2]);
  if (copy < 0) {
    Py_DECREF(values);
    return NULL;
  }
  RunStream stream = {0, 0, NULL};
  if (args[1] != Py_None) {
    stream.decided = 1;
    stream.has_stream = 1;
    stream.stream = PyLong_AsVoidPtr(args[1]);
    if (PyErr_Occurred()) {
      Py_DECREF(values);
      return NULL;
    }
  }
  Run run;
  const size_t num_inputs = (size_t)PyTuple_Size(values);
  const DLPackExchangeAPI* api = NULL;
  PyObject* results = NULL;
  if (run_init(&run, num_inputs, self->num_outputs) == 0 &&
      prepare_inputs(self, values, &run, &stream, &api) == 0) {
    TteRunOptions options;
    options.struct_size = sizeof(TteRunOptions);
    options.copy_outputs = copy;
    options.has_stream = stream.has_stream;
    options.stream = stream.stream;
    options.allocate_output = api != NULL ? tte_allocate_with_exchange : NULL;
    options.allocator_context = (void*)api;
    TteError error;
    TteStatus status;
    Py_BEGIN_ALLOW_THREADS
      status = tte_api.method_run(self->method, run.inputs, num_inputs, &options, run.outputs,
                                  self->num_outputs, &error);
    Py_END_ALLOW_THREADS
    if (status != TTE_OK) {
      tte_raise_status(status, error.message);
    } else {
      int to_convert = 0;
      results = collect_outputs(&run, api, copy ? NULL : self->views, &to_convert);
      if (results != NULL && to_convert) {
        PyObject* converted =
            PyObject_CallFunctionObjArgs(tte_convert_outputs, values, results, self->name, NULL);
        Py_DECREF(results);
        results = converted;
      }
    }
  }
  run_release(&run);
  Py_DECREF(values);
  return results;
}

static PyObject* method_get_name(PyObject* object, void* closure) {
  (void)closure;
  return Py_NewRef(((MethodObject*)object)->name);
}

static PyObject* method_get_num_inputs(PyObject* object, void* closure) {
  (void)closure;
  return PyLong_FromSize_t(((MethodObject*)object)->num_inputs);
}

static PyObject* method_get_num_outputs(PyObject* object, void* closure) {
  (void)closure;
  return PyLong_FromSize_t(((MethodObject*)object)->num_outputs);
}

static PyMethodDef method_methods[] = {
    {"run", (PyCFunction)(void (*)(void))method_run, METH_FASTCALL,
     "run(inputs, stream, copy) -> list of outputs."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef method_getset[] = {
    {"name", method_get_name, NULL, "The method's name.", NULL},
    {"num_inputs", method_get_num_inputs, NULL, "How many inputs the method takes.", NULL},
    {"num_outputs", method_get_num_outputs, NULL, "How many outputs the method returns.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot method_slots[] = {
    {Py_tp_new, method_new},
    {Py_tp_dealloc, method_dealloc},
    {Py_tp_methods, method_methods},
    {Py_tp_getset, method_getset},
    {Py_tp_doc,
     "Method(program, name): a loaded method of an open program (a TteProgram* as int)."},
    {0, NULL},
};

static PyType_Spec method_spec = {
    "torch_tensorrt_executorch_runtime._native._compiled.Method",
    sizeof(MethodObject),
    0,
    Py_TPFLAGS_DEFAULT,
    method_slots,
};

int tte_method_register(PyObject* module) {
  method_type = (PyTypeObject*)PyType_FromSpec(&method_spec);
  if (method_type == NULL) {
    return -1;
  }
  Py_INCREF(method_type);
  if (PyModule_AddObject(module, "Method", (PyObject*)method_type) < 0) {
    Py_DECREF(method_type);
    return -1;
  }
  return 0;
}
