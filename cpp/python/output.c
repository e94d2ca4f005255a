/* `Output`: one tensor result handed to a library's `from_dlpack` when the
 * library has no DLPack C exchange API (numpy, cupy, ...). It owns a
 * DLManagedTensorVersioned and gives it away once, as a versioned capsule,
 * or as a legacy one to consumers that ask for DLPack < 1.0; if nobody takes
 * it, it deletes the tensor itself. */
#include <stdlib.h>

#include "output.h"

#define VERSIONED_NAME "dltensor_versioned"
#define LEGACY_NAME "dltensor"

typedef struct OutputObject {
  PyObject_HEAD
  DLManagedTensorVersioned* tensor; /* NULL once given away */
  int32_t device_type;
  int32_t device_id;
  PyObject* shape; /* tuple */
} OutputObject;

static PyTypeObject* output_type;

static void delete_tensor(DLManagedTensorVersioned* tensor) {
  if (tensor != NULL && tensor->deleter != NULL) {
    tensor->deleter(tensor);
  }
}

/* A consumer renames the capsule when it takes the tensor: only a capsule
 * nobody consumed still owns it. */
static void versioned_capsule_destructor(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, VERSIONED_NAME)) {
    delete_tensor(PyCapsule_GetPointer(capsule, VERSIONED_NAME));
  }
}

/* The pre-1.0 struct over a versioned tensor: deleting it deletes both. */
static void legacy_deleter(DLManagedTensor* legacy) {
  delete_tensor(legacy->manager_ctx);
  free(legacy);
}

static void legacy_capsule_destructor(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, LEGACY_NAME)) {
    DLManagedTensor* legacy = PyCapsule_GetPointer(capsule, LEGACY_NAME);
    legacy->deleter(legacy);
  }
}

PyObject* tte_output_new(DLManagedTensorVersioned* tensor) {
  const DLTensor* dl = &tensor->dl_tensor;
  PyObject* shape = PyTuple_New(dl->ndim);
  if (shape == NULL) {
    delete_tensor(tensor);
    return NULL;
  }
  for (int32_t d = 0; d < dl->ndim; ++d) {
    PyObject* extent = PyLong_FromLongLong(dl->shape[d]);
    if (extent == NULL) {
      Py_DECREF(shape);
      delete_tensor(tensor);
      return NULL;
    }
    PyTuple_SetItem(shape, d, extent);
  }
  allocfunc alloc = (allocfunc)PyType_GetSlot(output_type, Py_tp_alloc);
  OutputObject* self = (OutputObject*)alloc(output_type, 0);
  if (self == NULL) {
    Py_DECREF(shape);
    delete_tensor(tensor);
    return NULL;
  }
  self->tensor = tensor;
  self->device_type = dl->device.device_type;
  self->device_id = dl->device.device_id;
  self->shape = shape;
  return (PyObject*)self;
}

static void output_dealloc(PyObject* object) {
  OutputObject* self = (OutputObject*)object;
  delete_tensor(self->tensor);
  self->tensor = NULL;
  Py_CLEAR(self->shape);
  PyTypeObject* type = Py_TYPE(object);
  freefunc free_slot = (freefunc)PyType_GetSlot(type, Py_tp_free);
  free_slot(object);
  Py_DECREF(type);
}

static PyObject* output_dlpack(PyObject* object, PyObject* args, PyObject* kwargs) {
  OutputObject* self = (OutputObject*)object;
  static char* keywords[] = {"stream", "max_version", "dl_device", "copy", NULL};
  PyObject* stream = Py_None;
  PyObject* max_version = Py_None;
  PyObject* dl_device = Py_None;
  PyObject* copy = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$OOOO:__dlpack__", keywords, &stream,
                                   &max_version, &dl_device, &copy)) {
    return NULL;
  }
  /* The run finished all its work before returning: the data is ready on
   * every stream, so `stream` needs nothing. */
  if (self->tensor == NULL) {
    PyErr_SetString(PyExc_BufferError, "this output was already exported through DLPack");
    return NULL;
  }
  if (dl_device != Py_None) {
    PyObject* own = Py_BuildValue("(ii)", self->device_type, self->device_id);
    if (own == NULL) {
      return NULL;
    }
    PyObject* asked = PySequence_Tuple(dl_device);
    const int same = asked == NULL ? -1 : PyObject_RichCompareBool(own, asked, Py_EQ);
    Py_XDECREF(asked);
    Py_DECREF(own);
    if (same < 0) {
      return NULL;
    }
    if (!same) {
      PyErr_Format(PyExc_BufferError, "output lives on DLPack device (%d, %d), not %S",
                   self->device_type, self->device_id, dl_device);
      return NULL;
    }
  }
  if (copy != Py_None && PyObject_IsTrue(copy) == 1) {
    PyErr_SetString(PyExc_BufferError,
                    "the output is already an owned tensor; ask without copy=True");
    return NULL;
  }
  int versioned = 0;
  if (max_version != Py_None) {
    PyObject* major = PySequence_GetItem(max_version, 0);
    if (major == NULL) {
      return NULL;
    }
    const long value = PyLong_AsLong(major);
    Py_DECREF(major);
    if (value == -1 && PyErr_Occurred()) {
      return NULL;
    }
    versioned = value >= 1;
  }
  DLManagedTensorVersioned* tensor = self->tensor;
  PyObject* capsule;
  if (versioned) {
    capsule = PyCapsule_New(tensor, VERSIONED_NAME, versioned_capsule_destructor);
  } else {
    DLManagedTensor* legacy = malloc(sizeof(DLManagedTensor));
    if (legacy == NULL) {
      return PyErr_NoMemory();
    }
    legacy->dl_tensor = tensor->dl_tensor;
    legacy->manager_ctx = tensor;
    legacy->deleter = legacy_deleter;
    capsule = PyCapsule_New(legacy, LEGACY_NAME, legacy_capsule_destructor);
    if (capsule == NULL) {
      free(legacy);
    }
  }
  if (capsule != NULL) {
    self->tensor = NULL;
  }
  return capsule;
}

static PyObject* output_dlpack_device(PyObject* object, PyObject* unused) {
  (void)unused;
  OutputObject* self = (OutputObject*)object;
  return Py_BuildValue("(ii)", self->device_type, self->device_id);
}

static PyObject* output_release(PyObject* object, PyObject* unused) {
  (void)unused;
  OutputObject* self = (OutputObject*)object;
  DLManagedTensorVersioned* tensor = self->tensor;
  self->tensor = NULL;
  delete_tensor(tensor);
  Py_RETURN_NONE;
}

static PyObject* output_device(PyObject* object, void* closure) {
  (void)closure;
  return output_dlpack_device(object, NULL);
}

static PyObject* output_shape(PyObject* object, void* closure) {
  (void)closure;
  return Py_NewRef(((OutputObject*)object)->shape);
}

static PyMethodDef output_methods[] = {
    {"__dlpack__", (PyCFunction)(void (*)(void))output_dlpack, METH_VARARGS | METH_KEYWORDS,
     "The tensor as a DLPack capsule, once."},
    {"__dlpack_device__", output_dlpack_device, METH_NOARGS, "(DLDeviceType, device id)."},
    {"release", output_release, METH_NOARGS, "Delete the tensor now, if nobody took it."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef output_getset[] = {
    {"device", output_device, NULL, "(DLDeviceType, device id) of the tensor.", NULL},
    {"shape", output_shape, NULL, "The tensor's shape.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot output_slots[] = {
    {Py_tp_dealloc, output_dealloc},
    {Py_tp_methods, output_methods},
    {Py_tp_getset, output_getset},
    {Py_tp_doc, "One tensor output of a run, consumable once through `from_dlpack`."},
    {0, NULL},
};

static PyType_Spec output_spec = {
    "torch_tensorrt_executorch_runtime._native._compiled.Output",
    sizeof(OutputObject),
    0,
    Py_TPFLAGS_DEFAULT,
    output_slots,
};

int tte_output_register(PyObject* module) {
  output_type = (PyTypeObject*)PyType_FromSpec(&output_spec);
  if (output_type == NULL) {
    return -1;
  }
  Py_INCREF(output_type);
  if (PyModule_AddObject(module, "Output", (PyObject*)output_type) < 0) {
    Py_DECREF(output_type);
    return -1;
  }
  return 0;
}
