/* The batched entry of Python providers (provider_bridge.c). */
#ifndef TTE_PYTHON_PROVIDER_BRIDGE_H_
#define TTE_PYTHON_PROVIDER_BRIDGE_H_

#include "binding.h"

int tte_bridge_register(PyObject* module);

#endif /* TTE_PYTHON_PROVIDER_BRIDGE_H_ */
