"""The CUDA driver, asked directly through libcuda.so.1 for what `doctor` reports."""

from __future__ import annotations

import ctypes

from .library import cuda_driver

_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75
_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76


def driver_report() -> dict:
    """The NVIDIA driver's version and GPUs, asked from libcuda directly (no CUDA runtime, no TensorRT)."""
    driver = cuda_driver()
    if driver is None:
        return {"found": False, "version": None, "gpus": [], "detail": "libcuda.so.1 not found (no NVIDIA driver)"}
    version = ctypes.c_int()
    result = {"found": True, "version": None, "gpus": [], "detail": ""}
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
