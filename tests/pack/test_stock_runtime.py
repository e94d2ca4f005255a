"""Packed host-placement programs run through the stock `executorch.runtime`.

Needs the plugin (the package activates it) and the host test provider
(TTE_TEST_PROVIDER_DIR); skips with a message when either is missing.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import torch_tensorrt_executorch_runtime as tte
from torch_tensorrt_executorch_runtime.pack import TensorSpec, pack_program
from torch_tensorrt_executorch_runtime.testing import test_engine_spec

torch = pytest.importorskip("torch")
HOST_PROVIDER = "test-host"


@pytest.fixture(scope="module")
def runtime():
    unavailable = getattr(tte, "PLUGIN_UNAVAILABLE", None)
    if unavailable:
        pytest.skip(f"the plugin is not available: {unavailable}")
    folder = os.environ.get("TTE_TEST_PROVIDER_DIR")
    if not folder:
        pytest.skip("TTE_TEST_PROVIDER_DIR is not set: it names the build folder with the test providers")
    library = Path(folder) / "libtte_test_provider_host.so"
    if not library.exists():
        pytest.skip(f"{library} is not built")
    if HOST_PROVIDER not in tte.providers.providers():
        tte.register_provider_library(library)
    return tte.get_runtime()


def _run(runtime, path, inputs, runs=1):
    method = runtime.load_program(str(path)).load_method("forward")
    results = None
    for _ in range(runs):
        results = method.execute(inputs)
    return results


def test_add_one_static(runtime, tmp_path):
    path = tmp_path / "add_one.pte"
    engine = test_engine_spec("add_one", [TensorSpec("x", "float32", [2, 3])],
                              [TensorSpec("y", "float32", ["x:0", "x:1"])])
    pack_program(path, [engine])
    x = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    (y,) = _run(runtime, path, [x])
    assert torch.equal(y, x + 1)


def test_add_one_dynamic_resizes_output(runtime, tmp_path):
    path = tmp_path / "dynamic.pte"
    engine = test_engine_spec(
        "add_one", [TensorSpec("x", "float32", [(1, 2, 8), 4])], [TensorSpec("y", "float32", ["x:0", "x:1"])]
    )
    pack_program(path, [engine])
    for rows in (1, 5, 8):
        x = torch.full((rows, 4), 2.5)
        (y,) = _run(runtime, path, [x])
        assert y.shape == (rows, 4) and torch.equal(y, x + 1)


def test_two_engines_wired_by_name(runtime, tmp_path):
    path = tmp_path / "chain.pte"
    first = test_engine_spec("add_one", [TensorSpec("x", "float32", [4])], [TensorSpec("h", "float32", ["x:0"])])
    second = test_engine_spec(
        "add", [TensorSpec("h", "float32", [4]), TensorSpec("b", "float32", [4])], [TensorSpec("y", "float32", ["h:0"])]
    )
    pack_program(path, [first, second])
    x = torch.tensor([1.0, 2.0, 3.0, 4.0])
    b = torch.tensor([10.0, 20.0, 30.0, 40.0])
    (y,) = _run(runtime, path, [x, b])
    assert torch.equal(y, x + 1 + b)


def test_xnnpack_epilogue_runs(runtime, tmp_path):
    path = tmp_path / "mixed.pte"
    engine = test_engine_spec("add_one", [TensorSpec("x", "float32", [2, 3])],
                              [TensorSpec("y", "float32", ["x:0", "x:1"])])
    pack_program(path, [engine], epilogue={"y": [1.0, 2.0, 3.0]})
    x = torch.ones(2, 3)
    (y,) = _run(runtime, path, [x])
    assert torch.equal(y, (x + 1) * torch.tensor([1.0, 2.0, 3.0]))


def _kv(alias_mode: str):
    return test_engine_spec(
        "kv_update",
        [TensorSpec("cache", "float32", [4]), TensorSpec("x", "float32", [4])],
        [TensorSpec("cache_out", "float32", ["cache:0"]), TensorSpec("y", "float32", ["x:0"])],
        aliased_io=[("cache_out", "cache")],
    )


def test_aliased_cache_as_state_accumulates(runtime, tmp_path):
    path = tmp_path / "kv_state.pte"
    pack_program(path, [_kv("buffer")])
    method = runtime.load_program(str(path)).load_method("forward")
    x = torch.tensor([1.0, 2.0, 3.0, 4.0])
    (first,) = method.execute([x])
    assert torch.equal(first, x)
    (second,) = method.execute([x])
    assert torch.equal(second, 2 * x)


def test_aliased_cache_as_method_input(runtime, tmp_path):
    path = tmp_path / "kv_input.pte"
    pack_program(path, [_kv("input")], alias_mode="input")
    cache = torch.tensor([10.0, 10.0, 10.0, 10.0])
    x = torch.tensor([1.0, 2.0, 3.0, 4.0])
    cache_out, y = _run(runtime, path, [cache, x])
    assert torch.equal(cache_out, cache + x) and torch.equal(y, cache + x)


@pytest.mark.parametrize("backend", ["xnnpack", "portable"])
def test_external_constants_load_from_the_ptd(runtime, tmp_path, backend):
    path = tmp_path / "external.pte"
    engine = test_engine_spec("add_one", [TensorSpec("x", "float32", [2, 3])],
                              [TensorSpec("y", "float32", ["x:0", "x:1"])])
    pack_program(path, [engine], epilogue={"y": 3.0}, epilogue_backend=backend, external_constants=True)
    program = runtime.load_program(str(path), data_path=str(tmp_path / "external.ptd"))
    x = torch.ones(2, 3)
    (y,) = program.load_method("forward").execute([x])
    assert torch.equal(y, (x + 1) * 3)
