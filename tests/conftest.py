"""Fixtures every test folder shares."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import textwrap

import pytest


def _run_python(code: str, *, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=full_env,
        timeout=timeout,
    )


@pytest.fixture
def run_python():
    """Runs a fresh interpreter on some code (import order, exit behaviour, anything that may crash)."""
    return _run_python


def _pack_unplanned_outputs(specs) -> bytes:
    from torch_tensorrt_executorch_runtime.pack import exir, pack_program

    planning = exir.MemoryPlanningPass
    exir.MemoryPlanningPass = lambda **kwargs: planning(**{**kwargs, "alloc_graph_output": False})
    try:
        return pack_program(None, specs)
    finally:
        exir.MemoryPlanningPass = planning


class TestProviderStats(ctypes.Structure):
    """TteTestProviderStats of cpp/providers/testing/test_provider_api.h (append-only)."""

    __test__ = False  # not a test class
    _fields_ = [
        ("struct_size", ctypes.c_uint32), ("last_device_id", ctypes.c_int32),
        ("deserializes", ctypes.c_uint64), ("destroys", ctypes.c_uint64), ("enqueues", ctypes.c_uint64),
        ("select_profiles", ctypes.c_uint64), ("last_stream", ctypes.c_void_p), ("last_profile", ctypes.c_int32),
        ("last_has_weight_streaming_budget", ctypes.c_int32), ("last_weight_streaming_budget", ctypes.c_int64),
        ("executes", ctypes.c_uint64), ("input_shapes_set", ctypes.c_uint64),
        ("execution_contexts", ctypes.c_uint64), ("device_memory_sets", ctypes.c_uint64),
        ("live_weight_bytes", ctypes.c_int64), ("live_own_scratch_bytes", ctypes.c_int64),
        ("max_profile_overlap", ctypes.c_uint64),
    ]


def _provider_stats(library) -> TestProviderStats:
    stats = TestProviderStats(struct_size=ctypes.sizeof(TestProviderStats))
    library.tte_test_provider_stats(ctypes.byref(stats))
    assert stats.struct_size == ctypes.sizeof(TestProviderStats), "the test provider's stats are older than these"
    return stats


@pytest.fixture
def provider_stats():
    """Reads a test provider library's counters (a ctypes.CDLL of it): provider_stats(library)."""
    return _provider_stats


@pytest.fixture
def pack_unplanned_outputs():
    """pack_program's bytes with the methods' outputs left unplanned (alloc_graph_output=False):
    the Program API gives them memory at run, or an owned run the caller's tensor."""
    return _pack_unplanned_outputs
