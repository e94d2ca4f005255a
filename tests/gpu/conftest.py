"""Shared set-up of the GPU checks: skip without a GPU, register the CUDA test
provider, find the packed programs, read the plugin's runtime statistics."""

from __future__ import annotations

import ctypes
import os
from pathlib import Path

import pytest

tte = pytest.importorskip("torch_tensorrt_executorch_runtime")
torch = pytest.importorskip("torch")

if not torch.cuda.is_available():
    pytest.skip("no CUDA device: the GPU checks run on a GPU machine (scripts/gpu-check.sh)", allow_module_level=True)


class RuntimeStats(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32)] + [
        (name, ctypes.c_uint64)
        for name in ("h2d_copies", "h2d_bytes", "d2h_copies", "d2h_bytes", "d2d_copies", "d2d_bytes",
                     "enqueues", "graph_captures", "graph_replays", "graph_fallbacks")
    ]


def _plugin() -> ctypes.CDLL:
    from torch_tensorrt_executorch_runtime import _library

    return ctypes.CDLL(str(_library.plugin_path()))


def runtime_stats() -> RuntimeStats:
    lib = _plugin()
    stats = RuntimeStats()
    stats.struct_size = ctypes.sizeof(RuntimeStats)
    lib.tte_get_runtime_stats(ctypes.byref(stats))
    return stats


def reset_runtime_stats() -> None:
    _plugin().tte_reset_runtime_stats()


def provider_dir() -> Path:
    d = os.environ.get("TTE_TEST_PROVIDER_DIR")
    if not d:
        pytest.skip("TTE_TEST_PROVIDER_DIR is not set: it names the folder with libtte_test_provider_cuda.so")
    return Path(d)


@pytest.fixture(scope="session")
def cuda_provider():
    lib = provider_dir() / "libtte_test_provider_cuda.so"
    if not lib.exists():
        pytest.skip(f"{lib} not built (needs nvcc)")
    names = set(tte.providers.providers())
    if "test-cuda" not in names:
        tte.providers.register_provider_library(str(lib))
    return ctypes.CDLL(str(lib))


@pytest.fixture(scope="session")
def programs() -> Path:
    d = os.environ.get("TTE_GPU_PROGRAMS")
    if not d:
        pytest.skip("TTE_GPU_PROGRAMS is not set: it names the folder written by tests/gpu/make_gpu_programs.py")
    return Path(d)
