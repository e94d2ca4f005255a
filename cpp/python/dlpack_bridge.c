/* Tensors in: the DLPack C exchange API of a type when it has one (torch:
 * a borrowed DLTensor, no Python call), else the `__dlpack__` protocol. And
 * the adapter that lets the C API allocate owned outputs with an exchange
 * API's allocator (torch's caching allocator). */
#include <stdio.h>
#include <string.h>

#include "dlpack_bridge.h"

#define TYPE_CACHE_SIZE 16
#define VERSIONED_NAME "dltensor_versioned"
#define LEGACY_NAME "dltensor"
/* The handle value of cudaStreamPerThread (CUDA's driver_types.h). */
#define cudaStreamPerThreadHandle ((void*)0x2)

typedef struct TypeEntry {
  PyTypeObject* type; /* a strong reference */
  const DLPackExchangeAPI* api;
} TypeEntry;

static TypeEntry type_cache[TYPE_CACHE_SIZE];
static int type_cache_used;

/* The table `type` publishes, if this module can use it. The table was
 * defined in DLPack 1.2 and published as a capsule from 1.3 on, with the
 * same layout; a table of another major version is not read. */
static const DLPackExchangeAPI* lookup_api(PyTypeObject* type) {
  PyObject* capsule = PyObject_GetAttrString((PyObject*)type, "__dlpack_c_exchange_api__");
  if (capsule == NULL) {
    PyErr_Clear();
    return NULL;
  }
  const DLPackExchangeAPI* api = NULL;
  if (PyCapsule_IsValid(capsule, "dlpack_exchange_api")) {
    api = (const DLPackExchangeAPI*)PyCapsule_GetPointer(capsule, "dlpack_exchange_api");
  }
  /* Tables are static for the process (the specification's rule). */
  Py_DECREF(capsule);
  if (api == NULL || api->header.version.major != 1 || api->header.version.minor < 2 ||
      api->managed_tensor_allocator == NULL || api->managed_tensor_to_py_object_no_sync == NULL ||
      api->current_work_stream == NULL ||
      (api->dltensor_from_py_object_no_sync == NULL &&
       api->managed_tensor_from_py_object_no_sync == NULL)) {
    PyErr_Clear();
    return NULL;
  }
  return api;
}

const DLPackExchangeAPI* tte_exchange_api(PyTypeObject* type) {
  for (int i = 0; i < type_cache_used; ++i) {
    if (type_cache[i].type == type) {
      return type_cache[i].api;
    }
  }
  const DLPackExchangeAPI* api = lookup_api(type);
  if (type_cache_used < TYPE_CACHE_SIZE) {
    Py_INCREF(type);
    type_cache[type_cache_used].type = type;
    type_cache[type_cache_used].api = api;
    ++type_cache_used;
  }
  return api;
}

int tte_dlpack_device(PyObject* value, int32_t* device_type, int32_t* device_id) {
  PyObject* device = PyObject_CallMethod(value, "__dlpack_device__", NULL);
  if (device == NULL) {
    return -1;
  }
  int ok = PyTuple_Check(device) && PyTuple_Size(device) == 2;
  long type = ok ? PyLong_AsLong(PyTuple_GetItem(device, 0)) : -1;
  long id = ok ? PyLong_AsLong(PyTuple_GetItem(device, 1)) : -1;
  Py_DECREF(device);
  if (!ok) {
    PyObject* name = tte_type_name(value);
    PyErr_Format(PyExc_BufferError,
                 "%S.__dlpack_device__ did not return a (device_type, device_id) tuple", name);
    Py_DECREF(name);
    return -1;
  }
  if (PyErr_Occurred()) {
    return -1;
  }
  *device_type = (int32_t)type;
  *device_id = (int32_t)id;
  return 0;
}

/* `__dlpack__` with a stream and, first, max_version=(1, 0); a producer from
 * before DLPack 1.0 has no max_version keyword. */
static PyObject* call_dlpack(PyObject* value, PyObject* stream) {
  PyObject* method = PyObject_GetAttrString(value, "__dlpack__");
  if (method == NULL) {
    return NULL;
  }
  PyObject* empty = PyTuple_New(0);
  PyObject* kwargs = Py_BuildValue("{s:O,s:(ii)}", "stream", stream, "max_version", 1, 0);
  PyObject* capsule = NULL;
  if (empty != NULL && kwargs != NULL) {
    capsule = PyObject_Call(method, empty, kwargs);
    if (capsule == NULL && PyErr_ExceptionMatches(PyExc_TypeError)) {
      PyErr_Clear();
      PyDict_DelItemString(kwargs, "max_version");
      capsule = PyObject_Call(method, empty, kwargs);
    }
  }
  Py_XDECREF(kwargs);
  Py_XDECREF(empty);
  Py_DECREF(method);
  return capsule;
}

/* Torch refuses to export a tensor that requires grad: borrow it detached. */
static PyObject* detached_if_needed(PyObject* value) {
  PyObject* flag = PyObject_GetAttrString(value, "requires_grad");
  if (flag == NULL) {
    PyErr_Clear();
    return Py_NewRef(value);
  }
  const int needs = PyObject_IsTrue(flag);
  Py_DECREF(flag);
  if (needs <= 0) {
    PyErr_Clear();
    return Py_NewRef(value);
  }
  return PyObject_CallMethod(value, "detach", NULL);
}

int tte_borrow_protocol(PyObject* value, int has_stream, void* stream, TteBorrowed* out,
                        const DLTensor** tensor) {
  int32_t device_type = 0;
  int32_t device_id = 0;
  if (tte_dlpack_device(value, &device_type, &device_id) < 0) {
    return -1;
  }
  /* DLPack reserves 0 for CUDA: the legacy default stream (handle 0) is 1,
   * and -1 asks the producer not to synchronize. Host memory takes None. */
  PyObject* stream_arg;
  if (device_type == kDLCUDA || device_type == kDLCUDAManaged) {
    stream_arg =
        !has_stream ? PyLong_FromLong(-1) : PyLong_FromVoidPtr(stream == NULL ? (void*)1 : stream);
  } else {
    stream_arg = Py_NewRef(Py_None);
  }
  PyObject* exported = stream_arg == NULL ? NULL : detached_if_needed(value);
  PyObject* capsule = exported == NULL ? NULL : call_dlpack(exported, stream_arg);
  if (capsule == NULL && exported != NULL && has_stream && stream == cudaStreamPerThreadHandle &&
      PyErr_ExceptionMatches(PyExc_BufferError)) {
    /* DLPack names the per-thread default stream 2, and some producers
     * (torch) refuse it. The legacy default stream (1) orders the same way
     * here: the per-thread default stream is a blocking stream, so its later
     * work waits for the legacy stream's ("Stream synchronization behavior",
     * CUDA Runtime API). */
    PyErr_Clear();
    Py_DECREF(stream_arg);
    stream_arg = PyLong_FromLong(1);
    capsule = stream_arg == NULL ? NULL : call_dlpack(exported, stream_arg);
  }
  Py_XDECREF(exported);
  Py_XDECREF(stream_arg);
  if (capsule == NULL) {
    return -1;
  }
  if (PyCapsule_IsValid(capsule, VERSIONED_NAME)) {
    DLManagedTensorVersioned* managed = PyCapsule_GetPointer(capsule, VERSIONED_NAME);
    if (managed->version.major != 1) {
      PyObject* name = tte_type_name(value);
      PyErr_Format(PyExc_BufferError, "%S exported DLPack %u.%u; this package reads DLPack 1.x",
                   name, managed->version.major, managed->version.minor);
      Py_DECREF(name);
      Py_DECREF(capsule);
      return -1;
    }
    out->owner = capsule;
    out->flags = managed->flags;
    *tensor = &managed->dl_tensor;
    return 0;
  }
  if (PyCapsule_IsValid(capsule, LEGACY_NAME)) {
    DLManagedTensor* managed = PyCapsule_GetPointer(capsule, LEGACY_NAME);
    out->owner = capsule;
    *tensor = &managed->dl_tensor;
    return 0;
  }
  Py_DECREF(capsule);
  PyObject* name = tte_type_name(value);
  PyErr_Format(PyExc_BufferError, "%S.__dlpack__ did not return a DLPack capsule", name);
  Py_DECREF(name);
  return -1;
}

void tte_release_borrowed(TteBorrowed* borrowed) {
  /* An unconsumed capsule's own destructor releases the producer's tensor. */
  Py_XDECREF(borrowed->owner);
  borrowed->owner = NULL;
  if (borrowed->managed != NULL && borrowed->managed->deleter != NULL) {
    borrowed->managed->deleter(borrowed->managed);
  }
  borrowed->managed = NULL;
}

static void set_allocation_error(void* context, const char* kind, const char* message) {
  TteError* error = context;
  snprintf(error->message, sizeof(error->message), "%s: %s", kind != NULL ? kind : "error",
           message != NULL ? message : "");
}

TteStatus tte_allocate_with_exchange(void* api, const DLTensor* prototype,
                                     DLManagedTensorVersioned** out, TteError* error) {
  const DLPackExchangeAPI* exchange = api;
  error->message[0] = '\0';
  /* The prototype is only read: the specification's signature is not const. */
  if (exchange->managed_tensor_allocator((DLTensor*)prototype, out, error, set_allocation_error) !=
          0 ||
      *out == NULL) {
    if (error->message[0] == '\0') {
      snprintf(error->message, sizeof(error->message), "the tensor library's allocator failed");
    }
    /* The library was asked for memory on the prototype's device. */
    error->code = prototype->device.device_type == kDLCPU ? TTE_ERROR_HOST_OUT_OF_MEMORY
                                                          : TTE_ERROR_OUT_OF_MEMORY;
    return error->code;
  }
  return TTE_OK;
}
