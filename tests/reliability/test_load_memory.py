"""Peak memory of loading a program with a large engine, against its file size.

The file is read, not mapped or locked: the engine's bytes are copied once
into private memory when its method loads, handed to the provider, and freed
when the delegate has initialized. So loading costs about the file's size at
its peak and little after. The engine is a test-engine plan padded with
trailing spaces (its JSON parser skips them) to TTE_LOAD_MEMORY_MB MiB
(default 64; docs/reliability.md records a 512 MiB run). Measured in a fresh
interpreter from /proc/self/status: the peak resident set (VmHWM, reset
through /proc/self/clear_refs) and the resident set (VmRSS).
"""

from __future__ import annotations

import dataclasses
import os

import pytest

SIZE_MB = int(os.environ.get("TTE_LOAD_MEMORY_MB", "64"))

MEASURE = """
import re
import numpy as np
import torch_tensorrt_executorch_runtime as tte
tte.register_provider_library({provider!r})

def status(field):
    return int(re.search(field + r":\\s+(\\d+) kB", open("/proc/self/status").read()).group(1)) * 1024

x = np.ones((2, 4), np.float32)
open("/proc/self/clear_refs", "w").write("5")
before = status("VmRSS")
program = tte.load({path!r})
(y,) = program.forward(x)
assert (y == x + 1).all()
print(status("VmHWM") - before, status("VmRSS") - before)
"""


@pytest.fixture(scope="module")
def large_program(tmp_path_factory):
    from torch_tensorrt_executorch_runtime.pack import TensorSpec, pack_program
    from torch_tensorrt_executorch_runtime.testing import test_engine_spec

    spec = test_engine_spec("add_one", [TensorSpec("x", "float32", [2, 4])], [TensorSpec("y", "float32", ["x:0", "x:1"])])
    padded = dataclasses.replace(spec, engine=spec.engine + b" " * (SIZE_MB << 20))
    path = tmp_path_factory.mktemp("large-engine") / "large.pte"
    pack_program(path, [padded])
    return path


def test_loading_a_large_engine_costs_about_its_file_size(run_python, host_provider_file, large_program):
    size = large_program.stat().st_size
    result = run_python(MEASURE.format(provider=str(host_provider_file), path=str(large_program)), timeout=600)
    assert result.returncode == 0, result.stderr
    peak, after = map(int, result.stdout.split())
    print(f"file {size} bytes; peak resident growth {peak} ({peak / size:.3f}x); after loading {after} "
          f"({after / size:.3f}x)")
    assert peak <= 1.1 * size, f"peak {peak} bytes for a {size}-byte file"
    # The engine's bytes are released once the delegate has initialized.
    assert after <= 0.1 * size, f"{after} bytes still resident after loading a {size}-byte file"
