"""The integrated-GPU (Jetson) path of host programs, forced on this discrete GPU with
TORCH_TENSORRT_EXECUTORCH_MAPPED_STAGING=1 (read when a delegate loads, so each case runs in a
process of its own): the Program API plans host tensors in page-locked arenas, which the engine
then reads and writes where they lie: right answers with no host-device copy at all, in-place
updates, data-dependent outputs resized. (Pageable host tensors, which go through mapped staging
buffers, are covered by test_backend_gpu's MappedStaging cases.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SCRIPT = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    import torch_tensorrt_executorch_runtime as tte

    tte.providers.register_provider_library(sys.argv[1])
    programs = sys.argv[2]
    report = {}

    def counted(run):
        run()  # the first call loads and warms up
        tte.reset_runtime_stats()
        result = run()
        s = tte.runtime_stats()
        return result, {k: s[k] for k in ("h2d_copies", "d2h_copies", "d2d_copies", "mapped_copies")}

    add_one = tte.load(programs + "/add_one_host.pte")
    x = np.arange(1 << 20, dtype=np.float32)
    (y,), report["add_one"] = counted(lambda: add_one.forward(x))
    report["add_one_right"] = bool(np.array_equal(np.asarray(y), x + 1))

    # The engine updates its staged copy of the cache in place; the write-back
    # reaches the program's outputs (a host program keeps its own copy of the
    # caller's cache, so the caller's array stays as it is).
    kv = tte.load(programs + "/kv_update_host.pte")
    cache = np.zeros(1024, dtype=np.float32)
    ones = np.ones(1024, dtype=np.float32)
    outs, report["kv"] = counted(lambda: kv.forward(cache, ones))
    report["kv_outs"] = [sorted(set(np.asarray(o).tolist())) for o in outs]

    keep = tte.load(programs + "/keep_positive64_host.pte")
    v = np.array([3, -1, 0, 5, -2, 7], dtype=np.float32)
    (kept,), report["keep_positive"] = counted(lambda: keep.forward(v))
    report["keep_positive_result"] = np.asarray(kept).tolist()
    print(json.dumps(report))
    """
)


def _run(provider, programs: Path, mapped: str) -> tuple[dict, str]:
    """The script in a process of its own with the variable at `mapped`; `provider` is the
    cuda_provider fixture's library (its path is the one the process registers)."""
    env = dict(os.environ, TORCH_TENSORRT_EXECUTORCH_MAPPED_STAGING=mapped)
    lib = provider._name
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(lib), str(programs)],
        env=env, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1]), done.stderr


def test_host_programs_run_on_their_arenas_where_they_lie_when_asked(cuda_provider, programs):
    report, _ = _run(cuda_provider, programs, "1")
    none = {"h2d_copies": 0, "d2h_copies": 0, "d2d_copies": 0, "mapped_copies": 0}
    assert report["add_one_right"] and report["add_one"] == none
    # The engine updated the cache in place in its arena; both outputs see it. The
    # delegate's own cache_out tensor is other memory than the cache it aliases: one
    # CPU copy from the mapped cache, no DMA (it was a device-to-host copy before).
    assert report["kv_outs"] == [[1.0], [1.0]] and report["kv"] == dict(none, mapped_copies=1)
    assert report["keep_positive_result"] == [3.0, 5.0, 7.0] and report["keep_positive"] == none


def test_a_discrete_gpu_stages_through_device_memory_by_default(cuda_provider, programs):
    report, _ = _run(cuda_provider, programs, "")
    assert report["add_one_right"] and report["kv_outs"] == [[1.0], [1.0]]
    assert report["add_one"]["mapped_copies"] == 0
    assert report["add_one"]["h2d_copies"] >= 1 and report["add_one"]["d2h_copies"] >= 1
    assert report["keep_positive_result"] == [3.0, 5.0, 7.0]


@pytest.mark.parametrize("value", ["yes", "2"])
def test_a_value_other_than_0_or_1_is_ignored_with_a_warning(cuda_provider, programs, value):
    report, stderr = _run(cuda_provider, programs, value)
    # The default kept: a discrete GPU copies through device memory.
    assert report["add_one"]["h2d_copies"] >= 1 and report["add_one_right"]
    assert f"ignoring TORCH_TENSORRT_EXECUTORCH_MAPPED_STAGING='{value}' (expected 1 or 0)" in stderr
