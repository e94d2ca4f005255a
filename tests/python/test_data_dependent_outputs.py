"""Data-dependent output shapes (keep_positive, the test providers' nonzero)
through the host test provider: the real shape reaches Python for empty,
partial and full results, as owned copies and as views; an engine asking for
more than the planned bound gets the program's own memory; a result past the
bound fails, never truncated."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")


def _keep_positive(bound: int):
    from torch_tensorrt_executorch_runtime.pack import TensorSpec
    from torch_tensorrt_executorch_runtime.testing import test_engine_spec

    return test_engine_spec(
        "keep_positive", [TensorSpec("x", "float32", [(1, 8, 64)])], [TensorSpec("y", "float32", [f"<={bound}"])]
    )


@pytest.fixture(scope="module")
def keep_positive_programs(tmp_path_factory):
    from torch_tensorrt_executorch_runtime.pack import pack_program

    folder = tmp_path_factory.mktemp("keep_positive")
    paths = {}
    for bound in (64, 16):
        paths[bound] = folder / f"keep_positive_{bound}.pte"
        pack_program(paths[bound], [_keep_positive(bound)])
    return paths


CASES = {
    "empty": [-1.0, 0.0, -2.0, -3.0],
    "partial": [-1.0, 2.0, 0.0, 3.0, -4.0, 5.0],
    "full": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0],
}


def test_the_output_is_planned_with_its_upper_bound(tte, host_provider, keep_positive_programs):
    program = tte.load(keep_positive_programs[64])
    (output,) = program.method("forward").outputs
    assert output.shape == (64,)


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("copy", [True, False])
def test_real_shape_and_values_reach_python(tte, host_provider, keep_positive_programs, case, copy):
    program = tte.load(keep_positive_programs[64])
    x = torch.tensor(CASES[case])
    (y,) = program.run([x], copy=copy)
    expected = x[x > 0]
    assert tuple(y.shape) == tuple(expected.shape)
    assert torch.equal(y, expected)


def test_shapes_follow_each_run_and_numpy_sees_them_too(tte, host_provider, keep_positive_programs):
    program = tte.load(keep_positive_programs[64])
    for case in ("full", "empty", "partial", "full"):
        values = np.array(CASES[case], dtype=np.float32)
        (y,) = program.forward(values)
        np.testing.assert_array_equal(y, values[values > 0])


def test_a_request_past_the_bound_gets_the_programs_memory(tte, host_provider, keep_positive_programs):
    # 32 elements: the engine asks for 128 bytes, the planned bound holds 16
    # floats (64 bytes); 10 positives fit the bound and come back whole.
    program = tte.load(keep_positive_programs[16])
    x = torch.tensor([(-1.0) ** i * i for i in range(32)])[:32]
    x[21:] = -1.0
    (y,) = program.forward(x)
    assert torch.equal(y, x[x > 0])
    assert y.shape == (10,)
    # The memory stays with the program: a second, smaller request runs too.
    (small,) = program.forward(torch.tensor([3.0, -1.0, 4.0]))
    assert torch.equal(small, torch.tensor([3.0, 4.0]))


def test_a_result_past_the_bound_fails_instead_of_truncating(tte, host_provider, keep_positive_programs):
    program = tte.load(keep_positive_programs[16])
    x = torch.arange(1, 33, dtype=torch.float32)  # 32 positives, room for 16
    with pytest.raises(tte.errors.ExecutionError, match=r"output 'y'.*\[32\].*upper bound \[16\]"):
        program.forward(x)
    # The program is still usable afterwards.
    (y,) = program.forward(torch.tensor([1.0, -1.0]))
    assert torch.equal(y, torch.tensor([1.0]))


def test_unplanned_outputs_get_the_real_shape(tte, host_provider, pack_unplanned_outputs):
    # The program gives the output memory (its bound's size) before the run.
    program = tte.load(pack_unplanned_outputs([_keep_positive(64)]))
    assert program.method("forward").outputs[0].memory_planned is False
    for case in ("full", "empty", "partial"):
        x = torch.tensor(CASES[case])
        for copy in (True, False):
            (y,) = program.run([x], copy=copy)
            assert torch.equal(y, x[x > 0]), (case, copy)


# ---- through a Python provider (the protocol's set_output_capacity / output_result) ----


class KeepPositiveEngine:
    """keep_positive on host memory the way TensorRT runs a data-dependent output: its shape is -1
    until the run, the engine asks for as many bytes as the input has and takes memory of its own,
    grown and never shrunk, when the bound is smaller."""

    def __init__(self, log: list):
        from torch_tensorrt_executorch_runtime.providers import IoTensor

        self.io_tensors = [IoTensor("x", True, "float32", 1), IoTensor("y", False, "float32", 1)]
        self.num_profiles = 1
        self.log = log
        self.addresses = {}
        self.count = 0
        self.capacity = None
        self.own = np.zeros(0, dtype=np.float32)
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
        self.log.append(("capacity", name, nbytes))
        self.capacity = nbytes

    def enqueue(self, stream):
        import ctypes

        assert self.capacity is not None, "set_output_capacity comes before every enqueue"
        x = np.ctypeslib.as_array((ctypes.c_float * self.count).from_address(self.addresses["x"]))
        kept = x[x > 0].copy()
        request = self.count * 4
        if request <= self.capacity:
            address = self.addresses["y"]
        else:
            if self.own.nbytes < request:
                self.own = np.zeros(self.count, dtype=np.float32)
            address = self.own.ctypes.data
        if kept.size:
            np.ctypeslib.as_array((ctypes.c_float * kept.size).from_address(address))[:] = kept
        self.result = ((kept.size,), address)
        self.capacity = None

    def output_result(self, name):
        return self.result


class KeepPositiveProvider:
    def __init__(self):
        self.log = []

    def deserialize(self, plan, device_id, options):
        from torch_tensorrt_executorch_runtime.testing import MAGIC, parse_test_engine

        if not bytes(plan[: len(MAGIC)]) == MAGIC or parse_test_engine(plan).get("op") != "keep_positive":
            return None
        return KeepPositiveEngine(self.log)


class PlainShapeEngine(KeepPositiveEngine):
    """An engine of a provider written before data-dependent outputs: no capacity, no result."""

    set_output_capacity = None
    output_result = None


@pytest.fixture
def python_provider(tte):
    registered = []

    def register(provider, name):
        tte.register_provider(provider, name=name, memory="host")
        registered.append(name)
        return name

    yield register
    for name in registered:
        tte.unregister_provider(name)


@pytest.mark.parametrize("copy", [True, False])
def test_a_python_provider_gives_the_real_shape(tte, python_provider, keep_positive_programs, copy):
    provider = KeepPositiveProvider()
    name = python_provider(provider, "py-keep-positive")
    program = tte.load(keep_positive_programs[64], options={"provider": name})
    for case in ("full", "empty", "partial", "full"):
        x = torch.tensor(CASES[case])
        (y,) = program.run([x], copy=copy)
        assert torch.equal(y, x[x > 0]), case
    # The capacity the backend gave is the planned bound: 64 floats.
    assert ("capacity", "y", 256) in provider.log


def test_a_python_provider_past_the_bound_uses_its_own_memory(tte, python_provider, keep_positive_programs):
    name = python_provider(KeepPositiveProvider(), "py-keep-positive-past")
    program = tte.load(keep_positive_programs[16], options={"provider": name})
    x = torch.full((32,), -1.0)
    x[:10] = torch.arange(1, 11, dtype=torch.float32)  # 128 bytes asked for, 10 positives fit the 16
    (y,) = program.forward(x)
    assert torch.equal(y, x[x > 0])
    with pytest.raises(tte.errors.ExecutionError, match=r"output 'y'.*\[32\].*upper bound \[16\]"):
        program.forward(torch.arange(1, 33, dtype=torch.float32))
    (y,) = program.forward(torch.tensor([2.0, -1.0]))
    assert torch.equal(y, torch.tensor([2.0]))


def test_a_python_provider_without_the_entries_says_so(tte, python_provider, keep_positive_programs):
    class Provider(KeepPositiveProvider):
        def deserialize(self, plan, device_id, options):
            return PlainShapeEngine(self.log) if super().deserialize(plan, device_id, options) else None

    name = python_provider(Provider(), "py-keep-positive-plain")
    program = tte.load(keep_positive_programs[64], options={"provider": name})
    with pytest.raises(tte.errors.NotSupportedError, match="no set_output_capacity/output_result"):
        program.forward(torch.tensor([1.0, -1.0]))
