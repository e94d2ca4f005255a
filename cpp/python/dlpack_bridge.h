/* Tensors in through DLPack (dlpack_bridge.c): the C exchange API of a type,
 * else the `__dlpack__` protocol; owned outputs from an exchange API's
 * allocator. */
#ifndef TTE_PYTHON_DLPACK_BRIDGE_H_
#define TTE_PYTHON_DLPACK_BRIDGE_H_

#include "binding.h"

/* The C exchange API of `type` (cached per type), or NULL when it offers
 * none this module can use. Never raises. */
const DLPackExchangeAPI* tte_exchange_api(PyTypeObject* type);

/* One input tensor as the run borrows it. `owner` is what must stay alive
 * until the run returns (a capsule, a detached tensor); `managed` a managed
 * tensor to delete then; `flags` the DLPack 1.x flags of the producer's
 * managed tensor (0 where it gave none: a legacy capsule, a bare DLTensor),
 * passed to the C API so read-only memory is never written. */
typedef struct TteBorrowed {
  DLTensor view;
  PyObject* owner;
  DLManagedTensorVersioned* managed;
  uint64_t flags;
} TteBorrowed;

/* Borrows `value` through its `__dlpack__` (DLPack 1.x, else legacy),
 * asking the producer to order its work before `stream` for CUDA memory
 * (`has_stream` 0: no ordering). Sets *tensor to the DLTensor to pass.
 * Returns 0, or -1 with an exception set. */
int tte_borrow_protocol(PyObject* value, int has_stream, void* stream, TteBorrowed* out,
                        const DLTensor** tensor);
/* The DLPack device of `value` through `__dlpack_device__`; -1 on error. */
int tte_dlpack_device(PyObject* value, int32_t* device_type, int32_t* device_id);
/* Releases what tte_borrow_* kept. */
void tte_release_borrowed(TteBorrowed* borrowed);

/* The adapter from the C API's output allocator to an exchange API's. */
TteStatus tte_allocate_with_exchange(void* api, const DLTensor* prototype,
                                     DLManagedTensorVersioned** out, TteError* error);

#endif /* TTE_PYTHON_DLPACK_BRIDGE_H_ */
