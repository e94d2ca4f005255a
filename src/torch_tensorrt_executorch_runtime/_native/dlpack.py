"""Tensors across the C API through DLPack, without any framework types.

Inputs: any object with `__dlpack__` (torch, numpy, cupy, jax, ...) is asked
for a DLPack 1.x capsule ("dltensor_versioned"), falling back to a legacy
"dltensor" capsule for older producers. The capsule stays unconsumed and is
kept alive for the call, so its own destructor releases the tensor after.

Outputs: the C API returns DLManagedTensorVersioned pointers the caller owns.
`DLPackResult` hands one to a consumer's `from_dlpack` exactly once, as a
versioned capsule, or as a legacy capsule for consumers that ask for DLPack
< 1.0; if nobody takes it, it calls the deleter itself.
"""

from __future__ import annotations

import ctypes
import threading
from ctypes import POINTER, c_char_p, c_int, c_void_p, cast

from . import abi
from .abi import DLManagedTensor, DLManagedTensorVersioned, DLTensor

VERSIONED_NAME = b"dltensor_versioned"
LEGACY_NAME = b"dltensor"

# Private prototypes over the C-level capsule API, so that nothing here
# changes the shared `ctypes.pythonapi` function objects other code may use.
_api = ctypes.pythonapi
_CapsuleDestructor = ctypes.CFUNCTYPE(None, c_void_p)
_PyCapsule_New = ctypes.PYFUNCTYPE(ctypes.py_object, c_void_p, c_char_p, _CapsuleDestructor)(
    ("PyCapsule_New", _api)
)
_PyCapsule_IsValid = ctypes.PYFUNCTYPE(c_int, ctypes.py_object, c_char_p)(("PyCapsule_IsValid", _api))
_PyCapsule_GetPointer = ctypes.PYFUNCTYPE(c_void_p, ctypes.py_object, c_char_p)(
    ("PyCapsule_GetPointer", _api)
)
# Used from the destructor, where the capsule's refcount is already zero: raw
# pointers only, never a py_object.
_RawIsValid = ctypes.PYFUNCTYPE(c_int, c_void_p, c_char_p)(("PyCapsule_IsValid", _api))
_RawGetPointer = ctypes.PYFUNCTYPE(c_void_p, c_void_p, c_char_p)(("PyCapsule_GetPointer", _api))

_DL_TENSOR_OFFSET = DLManagedTensorVersioned.dl_tensor.offset


# ---- inputs ------------------------------------------------------------------


class BorrowedTensor:
    """A DLTensor* borrowed from a producer's capsule, valid while this lives."""

    __slots__ = ("capsule", "address", "versioned")

    def __init__(self, capsule, address: int, versioned: bool):
        self.capsule = capsule
        self.address = address
        self.versioned = versioned

    @property
    def dl_tensor(self) -> DLTensor:
        return DLTensor.from_address(self.address)

    def pointer(self):
        return cast(c_void_p(self.address), POINTER(DLTensor))

    @property
    def read_only(self) -> bool:
        if not self.versioned:
            return False
        managed = DLManagedTensorVersioned.from_address(self.address - _DL_TENSOR_OFFSET)
        return bool(managed.flags & abi.DLPACK_FLAG_BITMASK_READ_ONLY)


# DLDeviceTypes whose memory a CUDA stream orders.
CUDA_DEVICE_TYPES = (abi.KDL_CUDA, abi.KDL_CUDA_MANAGED)


def device_of(obj) -> tuple[int, int]:
    """(DLDeviceType, device id) of an object that speaks DLPack."""
    device = obj.__dlpack_device__()
    return int(device[0]), int(device[1])


def producer_stream(stream: int | None) -> int:
    """The `stream` argument of `__dlpack__` for a run on `stream`.

    The producer orders its pending work before that stream. DLPack reserves
    0 for CUDA: the legacy default stream (handle 0) is spelled 1, and -1
    (no known stream) asks the producer not to synchronize.
    """
    if stream is None:
        return -1
    return 1 if stream == 0 else stream


def borrow(obj, stream: int | None) -> BorrowedTensor:
    """Export `obj` through its `__dlpack__` for the duration of one call.

    `stream` is the CUDA stream the call will use (the producer orders its
    pending work before it), or None for host tensors.
    """
    kwargs = {"stream": stream}
    try:
        capsule = obj.__dlpack__(max_version=(1, 0), **kwargs)
    except TypeError:
        # A producer from before DLPack 1.0 has no max_version keyword.
        capsule = obj.__dlpack__(**kwargs)
    if _PyCapsule_IsValid(capsule, VERSIONED_NAME):
        managed = _PyCapsule_GetPointer(capsule, VERSIONED_NAME)
        version = DLManagedTensorVersioned.from_address(managed).version
        if version.major != 1:
            raise BufferError(
                f"{type(obj).__name__} exported DLPack {version.major}.{version.minor}; "
                "this package reads DLPack 1.x"
            )
        return BorrowedTensor(capsule, managed + _DL_TENSOR_OFFSET, True)
    if _PyCapsule_IsValid(capsule, LEGACY_NAME):
        managed = _PyCapsule_GetPointer(capsule, LEGACY_NAME)
        return BorrowedTensor(capsule, managed, False)
    raise BufferError(f"{type(obj).__name__}.__dlpack__ did not return a DLPack capsule")


# ---- outputs -----------------------------------------------------------------

_legacy_lock = threading.Lock()
# Legacy managed tensors handed out, by address: (struct, versioned pointer).
_legacy_alive: dict[int, tuple[DLManagedTensor, int]] = {}


def _delete_versioned(address: int) -> None:
    managed = DLManagedTensorVersioned.from_address(address)
    if managed.deleter:
        managed.deleter(cast(c_void_p(address), POINTER(DLManagedTensorVersioned)))


@_CapsuleDestructor
def _versioned_capsule_destructor(capsule: int) -> None:
    # A consumer renames the capsule when it takes ownership; only a capsule
    # nobody consumed still owns its tensor.
    if _RawIsValid(capsule, VERSIONED_NAME):
        _delete_versioned(_RawGetPointer(capsule, VERSIONED_NAME))


@_CapsuleDestructor
def _legacy_capsule_destructor(capsule: int) -> None:
    if _RawIsValid(capsule, LEGACY_NAME):
        _legacy_deleter_impl(_RawGetPointer(capsule, LEGACY_NAME))


def _legacy_deleter_impl(address: int) -> None:
    with _legacy_lock:
        entry = _legacy_alive.pop(address, None)
    if entry is not None:
        _delete_versioned(entry[1])


@abi.DLManagedTensorDeleter
def _legacy_deleter(managed) -> None:
    _legacy_deleter_impl(ctypes.addressof(managed.contents))


class DLPackResult:
    """One output tensor of a run, consumable once through `from_dlpack`."""

    def __init__(self, address: int):
        self._address = address
        managed = DLManagedTensorVersioned.from_address(address)
        tensor = managed.dl_tensor
        self.device = (int(tensor.device.device_type), int(tensor.device.device_id))
        self.shape = tuple(tensor.shape[i] for i in range(tensor.ndim))
        self.dtype = (tensor.dtype.code, tensor.dtype.bits, tensor.dtype.lanes)

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        # The run has finished all its work before returning, so the data is
        # ready on every stream: nothing to order against `stream`.
        if self._address is None:
            raise BufferError("this output was already exported through DLPack")
        if dl_device is not None and tuple(int(v) for v in dl_device) != self.device:
            raise BufferError(f"output lives on DLPack device {self.device}, not {tuple(dl_device)}")
        if copy:
            raise BufferError("the output is already an owned tensor; ask without copy=True")
        address, self._address = self._address, None
        if max_version is not None and tuple(max_version)[0] >= 1:
            return _PyCapsule_New(address, VERSIONED_NAME, _versioned_capsule_destructor)
        return self._legacy_capsule(address)

    @staticmethod
    def _legacy_capsule(address: int):
        versioned = DLManagedTensorVersioned.from_address(address)
        legacy = DLManagedTensor()
        legacy.dl_tensor = versioned.dl_tensor
        legacy.manager_ctx = None
        legacy.deleter = _legacy_deleter
        with _legacy_lock:
            _legacy_alive[ctypes.addressof(legacy)] = (legacy, address)
        return _PyCapsule_New(ctypes.addressof(legacy), LEGACY_NAME, _legacy_capsule_destructor)

    def release(self) -> None:
        if self._address is not None:
            address, self._address = self._address, None
            _delete_versioned(address)

    def __del__(self):
        try:
            self.release()
        except Exception:
            pass
