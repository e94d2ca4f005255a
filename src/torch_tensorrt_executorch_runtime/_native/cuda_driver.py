"""The CUDA driver, asked directly through libcuda.so.1: what `doctor` reports, and
device memory for Python providers (`DeviceBlock`), which have no CUDA runtime of
their own."""

from __future__ import annotations

import ctypes
import threading
from typing import Any

from ..errors import DeviceOutOfMemoryError, NoDeviceError
from .library import cuda_driver

_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75
_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76


def driver_report() -> dict:
    """The NVIDIA driver's version and GPUs, asked from libcuda directly (no CUDA runtime, no TensorRT)."""
    driver = cuda_driver()
    if driver is None:
        return {"found": False, "version": None, "gpus": [], "detail": "libcuda.so.1 not found (no NVIDIA driver)"}
    version = ctypes.c_int()
    result: dict[str, Any] = {"found": True, "version": None, "gpus": [], "detail": ""}
    if driver.cuDriverGetVersion(ctypes.byref(version)) == 0:
        result["version"] = f"{version.value // 1000}.{version.value % 1000 // 10}"
    status = driver.cuInit(0)
    if status != 0:
        result["detail"] = f"cuInit failed with CUresult {status} (no usable GPU)"
        return result
    count = ctypes.c_int()
    driver.cuDeviceGetCount(ctypes.byref(count))
    for index in range(count.value):
        device = ctypes.c_int()
        if driver.cuDeviceGet(ctypes.byref(device), index) != 0:
            continue
        name = ctypes.create_string_buffer(256)
        driver.cuDeviceGetName(name, 256, device)
        major, minor = ctypes.c_int(), ctypes.c_int()
        driver.cuDeviceGetAttribute(ctypes.byref(major), _CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device)
        driver.cuDeviceGetAttribute(ctypes.byref(minor), _CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device)
        memory = ctypes.c_size_t()
        driver.cuDeviceTotalMem_v2(ctypes.byref(memory), device)
        result["gpus"].append(
            {
                "index": index,
                "name": name.value.decode(errors="replace"),
                "compute_capability": f"{major.value}.{minor.value}",
                "memory_bytes": memory.value,
            }
        )
    return result


def synchronize_current_context() -> None:
    """Wait for all work of the CUDA context current on this thread (no-op without a driver)."""
    driver = cuda_driver()
    if driver is not None:
        driver.cuCtxSynchronize()


_CUDA_ERROR_OUT_OF_MEMORY = 2


class DeviceBlock:
    """Device memory of one CUDA device, allocated in its primary context (the one the CUDA
    runtime, torch and TensorRT use), grown on demand and never shrunk; freed by `free()`.

    Each call makes the primary context current for itself and restores what was current,
    so it may run on any thread, inside a TensorRT callback or at teardown alike.
    """

    def __init__(self, device: int):
        self.device = int(device)
        self.address = 0
        self.nbytes = 0
        self._lock = threading.Lock()

    def _call(self, action) -> int:
        driver = cuda_driver()
        if driver is None:
            raise NoDeviceError("libcuda.so.1 not found: device memory needs the NVIDIA driver")
        driver.cuInit(0)
        device, context = ctypes.c_int(), ctypes.c_void_p()
        status = driver.cuDeviceGet(ctypes.byref(device), self.device)
        if status != 0:
            raise NoDeviceError(f"CUDA device {self.device} is not available (CUresult {status})")
        status = driver.cuDevicePrimaryCtxRetain(ctypes.byref(context), device)
        if status != 0:
            raise NoDeviceError(f"CUDA device {self.device}: no primary context (CUresult {status})")
        try:
            driver.cuCtxPushCurrent_v2(context)
            try:
                return action(driver)
            finally:
                driver.cuCtxPopCurrent_v2(ctypes.byref(ctypes.c_void_p()))
        finally:
            driver.cuDevicePrimaryCtxRelease_v2(device)

    def reserve(self, nbytes: int) -> int:
        """At least `nbytes` bytes (aligned to 256 bytes or more, as cuMemAlloc gives); returns the
        address. The old block is freed first: callers make sure no queued work still uses it."""
        with self._lock:
            if nbytes <= self.nbytes and self.address:
                return self.address

            def grow(driver) -> int:
                if self.address:
                    driver.cuMemFree_v2(ctypes.c_uint64(self.address))
                    self.address, self.nbytes = 0, 0
                pointer = ctypes.c_uint64()
                status = driver.cuMemAlloc_v2(ctypes.byref(pointer), ctypes.c_size_t(nbytes))
                if status != 0:
                    error = DeviceOutOfMemoryError if status == _CUDA_ERROR_OUT_OF_MEMORY else NoDeviceError
                    raise error(f"could not allocate {nbytes} bytes on CUDA device {self.device} (CUresult {status})")
                self.address, self.nbytes = pointer.value, int(nbytes)
                return self.address

            return self._call(grow)

    def free(self) -> None:
        with self._lock:
            if not self.address:
                return
            address, self.address, self.nbytes = self.address, 0, 0
            self._call(lambda driver: driver.cuMemFree_v2(ctypes.c_uint64(address)))
