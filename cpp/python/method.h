/* `Method` (method.c): a method handle and its run. */
#ifndef TTE_PYTHON_METHOD_H_
#define TTE_PYTHON_METHOD_H_

#include "binding.h"

/* Counters of which DLPack path the runs' inputs and outputs took (stats()). */
typedef struct TteBindingCounters {
  unsigned long long exchange_inputs;
  unsigned long long protocol_inputs;
  unsigned long long exchange_outputs;
  unsigned long long converted_outputs;
  /* copy=False outputs returned as the previous run's object */
  unsigned long long reused_views;
} TteBindingCounters;
extern TteBindingCounters tte_counters;

int tte_method_register(PyObject* module);

#endif /* TTE_PYTHON_METHOD_H_ */
