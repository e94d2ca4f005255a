"""Peak memory of loading a program with a large engine, against its file size.

The measurement itself (a fresh interpreter reading /proc/self/status around
`tte.load` and the first run) lives in bench/load_memory.py, which the
benchmarks report as "load_host_memory"; this test asserts its bounds with
the host test provider. The engine is padded to TTE_LOAD_MEMORY_MB MiB
(default 64; docs/reliability.md records a 512 MiB run).
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

SIZE_MB = int(os.environ.get("TTE_LOAD_MEMORY_MB", "64"))
BENCH = Path(__file__).resolve().parents[2] / "bench" / "load_memory.py"


def _load_memory_module():
    spec = importlib.util.spec_from_file_location("tte_bench_load_memory", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def load_memory():
    return _load_memory_module()


@pytest.fixture(scope="module")
def large_program(tmp_path_factory, load_memory):
    return load_memory.pack_large_program(tmp_path_factory.mktemp("large-engine") / "large.pte", SIZE_MB)


def test_loading_a_large_engine_costs_about_its_file_size(load_memory, host_provider_file, large_program):
    size = large_program.stat().st_size
    result = load_memory.measure_once(large_program, host_provider_file, "test-host")
    peak, after = result["peak"], result["kept"]
    print(f"file {size} bytes; peak resident growth {peak} ({peak / size:.3f}x); after loading {after} "
          f"({after / size:.3f}x); load {result['load_s'] / result['read_s']:.2f}x reading the file")
    assert peak <= 1.1 * size, f"peak {peak} bytes for a {size}-byte file"
    # The engine's bytes are released once the delegate has initialized.
    assert after <= 0.05 * size, f"{after} bytes still resident after loading a {size}-byte file"
