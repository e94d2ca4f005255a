/* `Output` (output.c): a tensor result for a library's `from_dlpack`. */
#ifndef TTE_PYTHON_OUTPUT_H_
#define TTE_PYTHON_OUTPUT_H_

#include "binding.h"

/* A DLPack result object owning `tensor` (consumable once through
 * `__dlpack__`); NULL with an exception set (the tensor is then deleted). */
PyObject* tte_output_new(DLManagedTensorVersioned* tensor);
int tte_output_register(PyObject* module);

#endif /* TTE_PYTHON_OUTPUT_H_ */
