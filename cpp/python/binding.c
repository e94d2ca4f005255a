/* What every unit of the binding uses (binding.h): the C API functions and
 * Python helpers bind() sets, and raising the exception of a C API status. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "binding.h"

TteApi tte_api;
PyObject* tte_error_for_status;
PyObject* tte_stream_of;
PyObject* tte_convert_outputs;

PyObject* tte_raise_status(TteStatus status, const char* message) {
  PyObject* text = PyUnicode_DecodeUTF8(message, (Py_ssize_t)strlen(message), "replace");
  if (text == NULL) {
    return NULL;
  }
  if (tte_error_for_status == NULL) {
    PyErr_SetObject(PyExc_RuntimeError, text);
    Py_DECREF(text);
    return NULL;
  }
  PyObject* code = PyLong_FromLong(status);
  PyObject* error =
      code == NULL ? NULL : PyObject_CallFunctionObjArgs(tte_error_for_status, code, text, NULL);
  Py_XDECREF(code);
  Py_DECREF(text);
  if (error != NULL) {
    PyErr_SetObject((PyObject*)Py_TYPE(error), error);
    Py_DECREF(error);
  }
  return NULL;
}

PyObject* tte_raise_invalid(const char* format, ...) {
  char message[TTE_ERROR_MESSAGE_CAPACITY];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  return tte_raise_status(TTE_ERROR_INVALID_ARGUMENT, message);
}

PyObject* tte_type_name(PyObject* value) {
  PyObject* name = PyObject_GetAttrString((PyObject*)Py_TYPE(value), "__name__");
  if (name == NULL) {
    PyErr_Clear();
    name = PyUnicode_FromString("object");
  }
  return name;
}
