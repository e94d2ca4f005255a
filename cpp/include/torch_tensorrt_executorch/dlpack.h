/*
 * DLPack tensor structs, written from the public DLPack specification
 * (version 1.x, with the pre-1.0 DLManagedTensor kept for legacy producers),
 * and the C exchange API of DLPack 1.3 that array libraries publish for
 * native extensions (`type(x).__dlpack_c_exchange_api__`).
 * The include guard is the one the reference header uses, so a translation
 * unit that includes both gets one set of definitions; their layouts are the
 * specification's and therefore identical.
 */
#ifndef DLPACK_DLPACK_H_
#define DLPACK_DLPACK_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DLPACK_MAJOR_VERSION 1
#define DLPACK_MINOR_VERSION 3

typedef struct {
  uint32_t major;
  uint32_t minor;
} DLPackVersion;

typedef enum {
  kDLCPU = 1,
  kDLCUDA = 2,
  kDLCUDAHost = 3,
  kDLOpenCL = 4,
  kDLVulkan = 7,
  kDLMetal = 8,
  kDLVPI = 9,
  kDLROCM = 10,
  kDLROCMHost = 11,
  kDLExtDev = 12,
  kDLCUDAManaged = 13,
  kDLOneAPI = 14,
  kDLWebGPU = 15,
  kDLHexagon = 16,
  kDLMAIA = 17,
  kDLTrn = 18
} DLDeviceType;

typedef struct {
  DLDeviceType device_type;
  int32_t device_id;
} DLDevice;

typedef enum {
  kDLInt = 0U,
  kDLUInt = 1U,
  kDLFloat = 2U,
  kDLOpaqueHandle = 3U,
  kDLBfloat = 4U,
  kDLComplex = 5U,
  kDLBool = 6U,
  kDLFloat8_e3m4 = 7U,
  kDLFloat8_e4m3 = 8U,
  kDLFloat8_e4m3b11fnuz = 9U,
  kDLFloat8_e4m3fn = 10U,
  kDLFloat8_e4m3fnuz = 11U,
  kDLFloat8_e5m2 = 12U,
  kDLFloat8_e5m2fnuz = 13U,
  kDLFloat8_e8m0fnu = 14U,
  kDLFloat6_e2m3fn = 15U,
  kDLFloat6_e3m2fn = 16U,
  kDLFloat4_e2m1fn = 17U
} DLDataTypeCode;

typedef struct {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
} DLDataType;

typedef struct {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  /* In elements, not bytes. NULL means compact row-major. */
  int64_t* strides;
  uint64_t byte_offset;
} DLTensor;

/* Pre-1.0 managed tensor (PyCapsule name "dltensor"). */
typedef struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(struct DLManagedTensor* self);
} DLManagedTensor;

#define DLPACK_FLAG_BITMASK_READ_ONLY (1UL << 0UL)
#define DLPACK_FLAG_BITMASK_IS_COPIED (1UL << 1UL)
#define DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED (1UL << 2UL)

/* 1.x managed tensor (PyCapsule name "dltensor_versioned"). */
typedef struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(struct DLManagedTensorVersioned* self);
  uint64_t flags;
  DLTensor dl_tensor;
} DLManagedTensorVersioned;

/*
 * The C exchange API (DLPack 1.3). A library publishes one static table per
 * array type, as a PyCapsule named "dlpack_exchange_api" in the type
 * attribute `__dlpack_c_exchange_api__`, so a native extension can borrow its
 * arrays, allocate arrays with the library's own allocator and hand arrays
 * back without Python-level `__dlpack__`/`from_dlpack` calls. None of these
 * functions synchronizes streams: the consumer runs on the producer's
 * current work stream. They return 0 on success; on failure -1 with a Python
 * exception set (the allocator reports through `set_error` instead).
 * `py_object` is a PyObject* of the type the table came from.
 */

/* A new array of `prototype`'s dtype, ndim, shape and device, owned by the
 * caller through the returned managed tensor. */
typedef int (*DLPackManagedTensorAllocator)(DLTensor* prototype, DLManagedTensorVersioned** out,
                                            void* error_ctx,
                                            void (*set_error)(void* error_ctx, const char* kind,
                                                              const char* message));
/* An owning managed tensor of the array. */
typedef int (*DLPackManagedTensorFromPyObjectNoSync)(void* py_object,
                                                     DLManagedTensorVersioned** out);
/* Takes ownership of `tensor` and returns it as an array of the library. */
typedef int (*DLPackManagedTensorToPyObjectNoSync)(DLManagedTensorVersioned* tensor,
                                                   void** out_py_object);
/* Fills `out` with a non-owning view of the array, valid while the array is
 * alive and the caller has not returned control to Python. */
typedef int (*DLPackDLTensorFromPyObjectNoSync)(void* py_object, DLTensor* out);
/* The library's current stream for a device (NULL for host devices). */
typedef int (*DLPackCurrentWorkStream)(DLDeviceType device_type, int32_t device_id,
                                       void** out_current_stream);

typedef struct DLPackExchangeAPIHeader {
  /* The DLPack version of the table; a consumer checks the major version. */
  DLPackVersion version;
  /* An older table of the same library, or NULL. */
  struct DLPackExchangeAPIHeader* prev_api;
} DLPackExchangeAPIHeader;

typedef struct DLPackExchangeAPI {
  DLPackExchangeAPIHeader header;
  DLPackManagedTensorAllocator managed_tensor_allocator;
  DLPackManagedTensorFromPyObjectNoSync managed_tensor_from_py_object_no_sync;
  DLPackManagedTensorToPyObjectNoSync managed_tensor_to_py_object_no_sync;
  /* May be NULL. */
  DLPackDLTensorFromPyObjectNoSync dltensor_from_py_object_no_sync;
  DLPackCurrentWorkStream current_work_stream;
} DLPackExchangeAPI;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DLPACK_DLPACK_H_ */
