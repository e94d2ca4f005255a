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


# ---- a Python provider on device memory (cupy): the protocol's set_output_capacity /
# output_result, and DeviceBlock for a request past the bound, as tensorrt-python does ----


class CupyKeepPositiveEngine:
    def __init__(self):
        from torch_tensorrt_executorch_runtime.providers import IoTensor

        self.io_tensors = [IoTensor("x", True, "float32", 1), IoTensor("y", False, "float32", 1)]
        self.num_profiles = 1
        self.addresses = {}
        self.count = 0
        self.capacity = 0
        self.own = tte._native.DeviceBlock(0)
        self.result = None

    def profile_shape(self, profile, name):
        return (1,), (8,), (64,)

    def set_input_shape(self, name, shape):
        self.count = shape[0]

    def get_output_shape(self, name):
        return (-1,)

    def set_tensor_address(self, name, address):
        self.addresses[name] = address

    def set_output_capacity(self, name, nbytes):
        self.capacity = nbytes

    def enqueue(self, stream):
        import cupy

        def view(address, count):
            memory = cupy.cuda.UnownedMemory(address, max(count, 1) * 4, owner=None)
            return cupy.ndarray((count,), cupy.float32, cupy.cuda.MemoryPointer(memory, 0))

        request = self.count * 4  # as TensorRT asks: room for every input element
        address = self.addresses["y"] if request <= self.capacity else self.own.reserve(request)
        with cupy.cuda.ExternalStream(stream):
            x = view(self.addresses["x"], self.count)
            kept = x[x > 0]
            view(address, kept.size)[...] = kept
        self.result = ((int(kept.size),), address)

    def output_result(self, name):
        return self.result

    def close(self):
        self.own.free()


class CupyKeepPositiveProvider:
    def __init__(self):
        self.engines = []

    def deserialize(self, plan, device_id, options):
        from torch_tensorrt_executorch_runtime.testing import MAGIC, parse_test_engine

        if bytes(plan[: len(MAGIC)]) != MAGIC or parse_test_engine(plan).get("op") != "keep_positive":
            return None
        self.engines.append(CupyKeepPositiveEngine())
        return self.engines[-1]


def test_a_python_provider_on_the_device(programs):
    pytest.importorskip("cupy")
    provider = CupyKeepPositiveProvider()
    tte.register_provider(provider, name="py-cupy-keep-positive", memory="device")
    try:
        program = tte.load(programs / "keep_positive16_planned.pte", options={"provider": "py-cupy-keep-positive"})
        for case in ("full", "empty", "partial"):
            x = torch.tensor(CASES[case], device="cuda")
            (y,) = program.forward(x)
            assert torch.equal(y.to(x.device), x[x > 0]), case
        x = torch.full((32,), -1.0, device="cuda")
        x[:10] = torch.arange(1, 11, dtype=torch.float32, device="cuda")
        (y,) = program.forward(x)  # 128 bytes asked for, the bound holds 64: the engine's DeviceBlock
        assert torch.equal(y.to(x.device), x[x > 0]) and y.shape == (10,)
        (engine,) = provider.engines
        assert engine.own.nbytes == 128 and engine.own.address % 256 == 0
        with pytest.raises(ExecutionError, match=r"\[32\].*upper bound \[16\]"):
            program.forward(torch.arange(1, 33, dtype=torch.float32, device="cuda"))
        program.close()
        assert engine.own.address == 0, "freed when the backend closed the engine"
    finally:
        tte.unregister_provider("py-cupy-keep-positive")
