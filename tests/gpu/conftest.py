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
