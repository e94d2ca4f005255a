"""Fixtures every test folder shares."""

from __future__ import annotations

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


@pytest.fixture
def pack_unplanned_outputs():
    """pack_program's bytes with the methods' outputs left unplanned (alloc_graph_output=False):
    the Program API gives them memory at run, or an owned run the caller's tensor."""
    return _pack_unplanned_outputs
