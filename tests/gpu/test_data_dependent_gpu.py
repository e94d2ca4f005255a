"""keep_positive (a data-dependent output) with the CUDA test provider, from
Python and tte-run: empty, partial and full results with the real shape, as
copies and views, on device-planned and host-placed programs; a request past
the planned bound served from the program's memory; a result past it refused;
CUDA graphs asked for and not used."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch

import torch_tensorrt_executorch_runtime as tte
from torch_tensorrt_executorch_runtime.errors import ExecutionError

CASES = {
    "empty": [-1.0, 0.0, -2.0],
    "partial": [-1.0, 2.0, 0.0, 3.0, -4.0, 5.0],
    "full": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0],
}


@pytest.mark.parametrize("placement", ["planned", "host"])
@pytest.mark.parametrize("copy", [True, False])
def test_real_shapes_from_python(cuda_provider, programs, placement, copy):
    program = tte.load(programs / f"keep_positive64_{placement}.pte", options={"provider": "test-cuda"})
    for case in ("full", "empty", "partial", "full"):
        x = torch.tensor(CASES[case], device="cuda")
        (y,) = program.run([x], copy=copy)
        expected = x[x > 0]
        assert tuple(y.shape) == tuple(expected.shape), case
        assert torch.equal(y.to(expected.device), expected), case


def test_cuda_graphs_are_not_captured_for_data_dependent_outputs(cuda_provider, programs):
    program = tte.load(programs / "keep_positive64_planned.pte", options={"provider": "test-cuda", "cuda_graphs": True})
    for case in ("partial", "partial", "partial", "full", "empty"):
        x = torch.tensor(CASES[case], device="cuda")
        (y,) = program.forward(x)
        assert torch.equal(y.to(x.device), x[x > 0]), case


def test_past_the_bound_from_python(cuda_provider, programs):
    program = tte.load(programs / "keep_positive16_planned.pte", options={"provider": "test-cuda"})
    x = torch.full((32,), -1.0, device="cuda")
    x[::3] = torch.arange(1, 12, dtype=torch.float32, device="cuda")[:11]
    x[30:] = -1.0
    (y,) = program.forward(x)  # 10 positives: the engine asked for 128 bytes, the bound holds 64
    assert torch.equal(y.to(x.device), x[x > 0]) and y.shape == (10,)
    with pytest.raises(ExecutionError, match=r"\[32\].*upper bound \[16\]"):
        program.forward(torch.arange(1, 33, dtype=torch.float32, device="cuda"))


def _tte_run(program: Path, values, tmp_path: Path) -> subprocess.CompletedProcess:
    site = Path(tte.__file__).parent
    np.save(tmp_path / "x.npy", np.asarray(values, dtype=np.float32))
    providers = Path(cuda_provider_library())
    return subprocess.run(
        [str(site / "bin" / "tte-run"), "--provider", str(providers), str(program), "--input", str(tmp_path / "x.npy")],
        capture_output=True, text=True, timeout=120,
    )


def cuda_provider_library() -> str:
    return str(Path(os.environ["TTE_TEST_PROVIDER_DIR"]) / "libtte_test_provider_cuda.so")


@pytest.mark.parametrize("case,shape,checksum", [("empty", 0, 0.0), ("partial", 3, 10.0), ("full", 8, 36.0)])
def test_real_shapes_from_tte_run(cuda_provider, programs, tmp_path, case, shape, checksum):
    ran = _tte_run(programs / "keep_positive64_host.pte", CASES[case], tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert f"output 0: float32 [{shape}] on cpu, checksum {checksum:.6f}" in ran.stdout + ran.stderr


def test_past_the_bound_from_tte_run(cuda_provider, programs, tmp_path):
    ran = _tte_run(programs / "keep_positive16_host.pte", list(range(1, 33)), tmp_path)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "upper bound [16]" in ran.stderr + ran.stdout
