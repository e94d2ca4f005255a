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
