"""What `triton-repo` writes and refuses, and the request batching, without a server."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture(scope="module")
def host(serving):
    import torch_tensorrt_executorch_runtime as tte
    from torch_tensorrt_executorch_runtime.serving.served_program import register_provider_libraries

    register_provider_libraries([serving.provider_library()], serving.provider)
    return tte


def triton_repo(*args: str) -> int:
    from torch_tensorrt_executorch_runtime.cli import main

    return main(["triton-repo", *args])


def test_signature_marks_dims_that_may_vary(host, serving_programs):
    from torch_tensorrt_executorch_runtime.serving.signature import method_signature

    with host.load(serving_programs["add_one"]) as program:
        static = method_signature(program, serving_programs["add_one"])
    with host.load(serving_programs["add_one_rows"]) as program:
        rows = method_signature(program, serving_programs["add_one_rows"])
    assert [(t.name, t.datatype, t.dims) for t in static.inputs] == [("x", "FP32", (2, 3))]
    assert [(t.name, t.datatype, t.dims, t.upper_bound) for t in rows.inputs] == [("x", "FP32", (-1, -1), (8, 4))]
    assert rows.batch_problem(8) is None
    assert "at most 8 rows" in rows.batch_problem(9)
    assert "static shape [2, 3]" in static.batch_problem(2)


def test_max_batch_beyond_the_profile_is_refused(host, serving_programs, tmp_path, serving, capsys):
    status = triton_repo(
        str(serving_programs["add_one_rows"]), str(tmp_path), "--name", "m", "--max-batch", "16",
        "--provider", serving.provider,
    )
    assert status == 2
    assert "takes at most 8 rows in dim 0, fewer than --max-batch 16" in capsys.readouterr().err
    assert not (tmp_path / "m" / "config.pbtxt").exists()


def test_bad_model_names_and_counts_are_refused(host, serving_programs, tmp_path, capsys):
    assert triton_repo(str(serving_programs["add_one"]), str(tmp_path), "--name", "a/b") == 1
    assert "Triton model names are letters" in capsys.readouterr().err
    assert triton_repo(str(serving_programs["add_one"]), str(tmp_path), "--name", "a", "--instances", "0") == 2
    assert "--instances must be at least 1" in capsys.readouterr().err


def test_instance_kind_follows_the_provider(host, serving_programs, tmp_path):
    assert triton_repo(str(serving_programs["add_one"]), str(tmp_path), "--name", "h", "--provider", "test-host") == 0
    assert "kind: KIND_CPU" in (tmp_path / "h" / "config.pbtxt").read_text()
    assert triton_repo(str(serving_programs["add_one"]), str(tmp_path), "--name", "g") == 0
    config = (tmp_path / "g" / "config.pbtxt").read_text()
    assert "kind: KIND_GPU" in config and "FORCE_CPU_ONLY_INPUT_TENSORS" in config
    assert triton_repo(
        str(serving_programs["add_one"]), str(tmp_path), "--name", "c", "--instance-kind", "cpu", "--instances", "3"
    ) == 0
    assert "count: 3\n    kind: KIND_CPU" in (tmp_path / "c" / "config.pbtxt").read_text()


def test_batches_split_back_per_request():
    from torch_tensorrt_executorch_runtime.serving import request_batching

    a, b = np.zeros((1, 4), np.float32), np.ones((3, 4), np.float32)
    (batch,) = request_batching.concatenate([[a], [b]])
    assert batch.shape == (4, 4)
    first, second = request_batching.split([batch + 1], [1, 3])
    np.testing.assert_array_equal(first[0], a + 1)
    np.testing.assert_array_equal(second[0], b + 1)
    with pytest.raises(ValueError, match="does not keep dim 0 as the batch"):
        request_batching.split([np.zeros((5, 4))], [1, 3])


def test_requests_name_their_inputs(host, serving_programs, serving):
    from torch_tensorrt_executorch_runtime.serving.served_program import RequestError, ServedProgram

    served = ServedProgram(serving_programs["add_one"], provider=serving.provider)
    try:
        with pytest.raises(RequestError, match=r"takes the inputs x; the request has z \(missing: x\) \(unknown: z\)"):
            served.ordered_inputs({"z": np.zeros((2, 3), np.float32)})
        x = np.ones((2, 3), np.float32)
        np.testing.assert_array_equal(served.run(served.ordered_inputs({"x": x}))["y"], x + 1)
    finally:
        served.close()


class _FakeDeviceTensor:
    """What `_to_triton` sees of a tensor: its DLPack device."""

    def __init__(self, device_type: int):
        self.device_type = device_type

    def __dlpack_device__(self):
        return (self.device_type, 0)


@pytest.mark.parametrize("device_type, ends_stub", [(1, False), (2, True)])
def test_an_instance_that_returned_device_outputs_ends_its_stub_at_finalize(monkeypatch, device_type, ends_stub):
    """After a device output, the Python backend's stub (releases before r26.07) may never exit
    after `finalize`; the model ends the process itself. Host outputs leave the stub's own exit."""
    from types import SimpleNamespace

    from torch_tensorrt_executorch_runtime.serving import triton_model

    exits = []
    monkeypatch.setattr(triton_model.os, "_exit", exits.append)
    model = triton_model.TritonPythonModel()
    model._pb = SimpleNamespace(Tensor=SimpleNamespace(from_dlpack=lambda name, value: (name, value)))
    model._device_outputs = False
    value = _FakeDeviceTensor(device_type)
    assert model._to_triton("y", value) == ("y", value)
    model.finalize()
    assert exits == ([0] if ends_stub else [])
