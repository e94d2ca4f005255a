/* The module: bind() to the loaded plugin and the binding's helpers,
 * stats(), and the registration of the other units' types. */
#include <dlfcn.h>

#include "binding.h"
#include "dlpack_bridge.h"
#include "method.h"
#include "output.h"
#include "provider_bridge.h"

static void* find_symbol(void* library, const char* name, int* missing) {
  void* symbol = dlsym(library, name);
  if (symbol == NULL) {
    *missing = 1;
  }
  return symbol;
}

static PyObject* bind(PyObject* module, PyObject* args) {
  (void)module;
  const char* path = NULL;
  PyObject* error_for_status = NULL;
  PyObject* stream_of = NULL;
  PyObject* convert_outputs = NULL;
  if (!PyArg_ParseTuple(args, "sOOO:bind", &path, &error_for_status, &stream_of,
                        &convert_outputs)) {
    return NULL;
  }
  /* The binding loaded the plugin already: take its handle, load nothing. */
  void* library = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
  if (library == NULL) {
    PyErr_Format(PyExc_ImportError, "the TensorRTBackend plugin %s is not loaded in this process",
                 path);
    return NULL;
  }
  int missing = 0;
  TteApi api;
  api.program_get_method = find_symbol(library, "tte_program_get_method", &missing);
  api.method_release = find_symbol(library, "tte_method_release", &missing);
  api.method_io_count = find_symbol(library, "tte_method_io_count", &missing);
  api.method_run = find_symbol(library, "tte_method_run", &missing);
  /* dlopen counted a reference; the plugin stays loaded for the process anyway. */
  dlclose(library);
  if (missing) {
    PyErr_Format(PyExc_ImportError,
                 "the TensorRTBackend plugin %s lacks the method functions of C API version 2; "
                 "reinstall torch-tensorrt-executorch-runtime",
                 path);
    return NULL;
  }
  tte_api = api;
  PyObject* previous[] = {tte_error_for_status, tte_stream_of, tte_convert_outputs};
  tte_error_for_status = Py_NewRef(error_for_status);
  tte_stream_of = Py_NewRef(stream_of);
  tte_convert_outputs = Py_NewRef(convert_outputs);
  for (size_t i = 0; i < sizeof(previous) / sizeof(previous[0]); ++i) {
    Py_XDECREF(previous[i]);
  }
  Py_RETURN_NONE;
}

static PyObject* stats(PyObject* module, PyObject* unused) {
  (void)module;
  (void)unused;
  return Py_BuildValue("{s:K,s:K,s:K,s:K,s:K}", "exchange_inputs", tte_counters.exchange_inputs,
                       "protocol_inputs", tte_counters.protocol_inputs, "exchange_outputs",
                       tte_counters.exchange_outputs, "converted_outputs",
                       tte_counters.converted_outputs, "reused_views", tte_counters.reused_views);
}

static PyObject* exchange_api_version(PyObject* module, PyObject* type) {
  (void)module;
  if (!PyType_Check(type)) {
    PyErr_SetString(PyExc_TypeError, "exchange_api_version takes a type");
    return NULL;
  }
  const DLPackExchangeAPI* api = tte_exchange_api((PyTypeObject*)type);
  if (api == NULL) {
    Py_RETURN_NONE;
  }
  return Py_BuildValue("(II)", api->header.version.major, api->header.version.minor);
}

static PyMethodDef module_methods[] = {
    {"bind", bind, METH_VARARGS,
     "bind(plugin_path, error_for_status, stream_of, convert_outputs): use the loaded plugin."},
    {"stats", stats, METH_NOARGS, "Counts of the DLPack paths inputs and outputs took."},
    {"exchange_api_version", exchange_api_version, METH_O,
     "The (major, minor) DLPack C exchange API version a type offers and this module uses, or "
     "None."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    "_compiled",
    "The hot path of the binding: method handles and runs over the plugin's C API, and the batched "
    "entry of Python providers.",
    -1,
    module_methods,
    NULL,
    NULL,
    NULL,
    NULL,
};

PyMODINIT_FUNC PyInit__compiled(void) {
  PyObject* module = PyModule_Create(&module_def);
  if (module == NULL) {
    return NULL;
  }
  if (tte_output_register(module) < 0 || tte_method_register(module) < 0 ||
      tte_bridge_register(module) < 0 ||
      PyModule_AddIntConstant(module, "C_API_VERSION", TTE_C_API_VERSION) < 0) {
    Py_DECREF(module);
    return NULL;
  }
  return module;
}
