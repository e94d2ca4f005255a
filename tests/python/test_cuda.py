"""The Python API on a CUDA device: torch, cupy and numpy tensors, streams, views,
a Python provider on device memory, and the TensorRT provider without TensorRT.

Skips without a CUDA device. The programs are packed here when the packer can
run (torch + ExecuTorch's exir), else read from TTE_CUDA_PROGRAMS, a folder
written beforehand with `python tests/python/test_cuda.py OUT_DIR` (a GPU
machine whose torch the exporter does not support).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROWS, COLS = 4, 256
SCALE_MAGIC = b"PY-CUDA-SCALE\n"
PROGRAMS = ("resident", "host", "scale_resident", "fake_tensorrt")


def write_programs(out: Path) -> None:
    from torch_tensorrt_executorch_runtime.pack import EngineSpec, TensorSpec, pack_program
    from torch_tensorrt_executorch_runtime.testing import test_engine_spec

    out.mkdir(parents=True, exist_ok=True)
    x = TensorSpec("x", "float32", [ROWS, COLS])
    y = TensorSpec("y", "float32", ["x:0", "x:1"])
    pack_program(out / "resident.pte", [test_engine_spec("add_one", [x], [y])], placement="device_resident")
    pack_program(out / "host.pte", [test_engine_spec("add_one", [x], [y])], placement="host")
    scale = EngineSpec(SCALE_MAGIC + json.dumps({"factor": 3.0}).encode(), [x],
                       [TensorSpec("y", "float32", [ROWS, COLS])])
    pack_program(out / "scale_resident.pte", [scale], placement="device_resident")
    fake = EngineSpec(b"\x00" * 256, [x], [TensorSpec("y", "float32", [ROWS, COLS])])
    pack_program(out / "fake_tensorrt.pte", [fake])


if __name__ == "__main__":
    write_programs(Path(sys.argv[1]))
    sys.exit(0)

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device: these tests run on a GPU machine", allow_module_level=True)


@pytest.fixture(scope="module")
def cuda_programs(tmp_path_factory) -> dict[str, Path]:
    given = os.environ.get("TTE_CUDA_PROGRAMS")
    if given:
        folder = Path(given)
    else:
        folder = tmp_path_factory.mktemp("cuda_programs")
        try:
            write_programs(folder)
        except Exception as exc:  # the exporter does not run with every torch
            pytest.skip(f"cannot pack programs here ({exc}); write them elsewhere and set TTE_CUDA_PROGRAMS")
    return {name: folder / f"{name}.pte" for name in PROGRAMS}


@pytest.fixture(scope="module")
def cuda_provider(tte) -> str:
    folder = os.environ.get("TTE_TEST_PROVIDER_DIR")
    library = Path(folder or ".") / "libtte_test_provider_cuda.so"
    if not folder or not library.exists():
        pytest.skip("TTE_TEST_PROVIDER_DIR has no libtte_test_provider_cuda.so")
    if "test-cuda" not in tte.providers.providers():
        tte.register_provider_library(library)
    return "test-cuda"


def test_torch_cuda_in_cuda_out_without_host_copies(tte, cuda_provider, cuda_programs):
    program = tte.load(cuda_programs["resident"], options={"provider": cuda_provider})
    assert program.method().inputs[0].device == "cuda:0"
    x = torch.arange(ROWS * COLS, dtype=torch.float32, device="cuda").reshape(ROWS, COLS)
    program.forward(x)  # load and warm up
    tte.reset_runtime_stats()
    (y,) = program.forward(x)
    stats = tte.runtime_stats()
    assert y.is_cuda and y.device.index == 0
    assert torch.equal(y, x + 1)
    assert stats["h2d_copies"] == 0 and stats["d2h_copies"] == 0, stats


def test_torch_streams(tte, cuda_provider, cuda_programs):
    program = tte.load(cuda_programs["resident"], options={"provider": cuda_provider})
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        x = torch.full((ROWS, COLS), 2.0, device="cuda")  # made on the side stream
        (y,) = program.forward(x)  # runs on torch's current stream: the side one
    assert torch.equal(y, torch.full((ROWS, COLS), 3.0, device="cuda"))
    (z,) = program.run([x], stream=side)
    (w,) = program.run([x], stream=side.cuda_stream)
    assert torch.equal(z, y) and torch.equal(w, y)


def test_copy_false_views_on_device(tte, cuda_provider, cuda_programs):
    program = tte.load(cuda_programs["resident"], options={"provider": cuda_provider})
    x = torch.zeros(ROWS, COLS, device="cuda")
    (view,) = program.run([x], copy=False)
    assert view.is_cuda and torch.equal(view, x + 1)


def test_numpy_on_a_host_program_with_a_device_provider(tte, cuda_provider, cuda_programs):
    import numpy as np

    program = tte.load(cuda_programs["host"], options={"provider": cuda_provider})
    x = np.arange(ROWS * COLS, dtype=np.float32).reshape(ROWS, COLS)
    (y,) = program.run([x])
    assert isinstance(y, np.ndarray)
    np.testing.assert_array_equal(y, x + 1)


def test_numpy_in_device_results_out(tte, cuda_provider, cuda_programs):
    import numpy as np

    program = tte.load(cuda_programs["resident"], options={"provider": cuda_provider})
    x = np.ones((ROWS, COLS), np.float32)
    try:
        import cupy
    except ImportError:
        with pytest.raises(tte.errors.OutputConversionError, match="cupy"):
            program.run([x])
        return
    (y,) = program.run([x])
    assert isinstance(y, cupy.ndarray)
    np.testing.assert_array_equal(cupy.asnumpy(y), x + 1)


def test_cupy_in_cupy_out(tte, cuda_provider, cuda_programs):
    cupy = pytest.importorskip("cupy")
    program = tte.load(cuda_programs["resident"], options={"provider": cuda_provider})
    x = cupy.arange(ROWS * COLS, dtype=cupy.float32).reshape(ROWS, COLS)
    (y,) = program.run([x])
    assert isinstance(y, cupy.ndarray)
    assert bool((y == x + 1).all())


class CupyScaleEngine:
    """y = factor * x, launched by cupy on the stream the backend gives."""

    def __init__(self, factor):
        from torch_tensorrt_executorch_runtime.providers import IoTensor

        self.factor = factor
        self.io_tensors = [IoTensor("x", True, "float32", 2), IoTensor("y", False, "float32", 2)]
        self.num_profiles = 1
        self.addresses = {}
        self.streams = []

    def profile_shape(self, profile, name):
        return (ROWS, COLS), (ROWS, COLS), (ROWS, COLS)

    def set_input_shape(self, name, shape):
        self.shape = shape

    def get_output_shape(self, name):
        return self.shape

    def set_tensor_address(self, name, address):
        self.addresses[name] = address

    def enqueue(self, stream):
        import cupy

        def view(address):
            memory = cupy.cuda.UnownedMemory(address, ROWS * COLS * 4, owner=None)
            return cupy.ndarray((ROWS, COLS), cupy.float32, cupy.cuda.MemoryPointer(memory, 0))

        self.streams.append(stream)
        with cupy.cuda.ExternalStream(stream):
            cupy.multiply(view(self.addresses["x"]), self.factor, out=view(self.addresses["y"]))


class CupyScaleProvider:
    def __init__(self):
        self.engines = []

    def deserialize(self, plan, device_id, options):
        data = bytes(plan)
        if not data.startswith(SCALE_MAGIC):
            return None
        engine = CupyScaleEngine(json.loads(data[len(SCALE_MAGIC) :])["factor"])
        self.engines.append(engine)
        return engine


def test_python_provider_on_device_memory(tte, cuda_programs):
    pytest.importorskip("cupy")
    provider = CupyScaleProvider()
    tte.register_provider(provider, name="py-cupy-scale", memory="device", capturable=True)
    try:
        program = tte.load(cuda_programs["scale_resident"], options={"provider": "py-cupy-scale"})
        x = torch.arange(ROWS * COLS, dtype=torch.float32, device="cuda").reshape(ROWS, COLS)
        side = torch.cuda.Stream()
        with torch.cuda.stream(side):
            (y,) = program.forward(x)
        assert torch.equal(y, x * 3.0)
        (engine,) = provider.engines
        assert engine.streams and engine.streams[-1] == side.cuda_stream
        program.close()
    finally:
        tte.unregister_provider("py-cupy-scale")


def test_tensorrt_provider_without_tensorrt_names_the_fix(tte, cuda_programs):
    import importlib.util

    if any(importlib.util.find_spec(m) for m in ("tensorrt", "tensorrt_lean", "tensorrt_dispatch", "tensorrt_rtx")):
        pytest.skip("a TensorRT Python runtime is installed here")
    program = tte.load(cuda_programs["fake_tensorrt"], options={"provider": "tensorrt-python"})
    with pytest.raises(tte.errors.Error, match="pip install"):
        program.forward(torch.zeros(ROWS, COLS, device="cuda"))


def test_doctor_lists_the_gpu():
    result = subprocess.run(
        [sys.executable, "-m", "torch_tensorrt_executorch_runtime", "doctor", "--json"], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout)
    assert report["cuda_devices"] >= 1
    assert report["cuda_driver"]["gpus"] and report["cuda_driver"]["gpus"][0]["compute_capability"]


def test_exit_with_cuda_programs_alive(run_python, cuda_programs, cuda_provider):
    library = Path(os.environ["TTE_TEST_PROVIDER_DIR"]) / "libtte_test_provider_cuda.so"
    result = run_python(
        f"""
        import torch, torch_tensorrt_executorch_runtime as tte
        tte.register_provider_library({str(library)!r})
        program = tte.load({str(cuda_programs["resident"])!r}, options={{"provider": "test-cuda"}})
        (y,) = program.forward(torch.zeros({ROWS}, {COLS}, device="cuda"))
        keep = [program, y]
        print(float(y.sum()))
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(float(ROWS * COLS))
    assert "Traceback" not in result.stderr and "Exception ignored" not in result.stderr, result.stderr
