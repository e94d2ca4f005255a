"""Memory safety of the binding, each case in its own interpreter (a failure
crashes it): views that outlive their Program, and DLPack producers that
report a rank their shape array does not hold."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from .conftest import add_one_spec, host_provider_library

# 256 KiB per tensor: ExecuTorch's arena for it comes from mmap, so memory
# freed too early is unmapped and touching it crashes instead of reading
# stale bytes.
BIG = 1 << 16


@pytest.fixture(scope="module")
def big_program(tmp_path_factory):
    from torch_tensorrt_executorch_runtime.pack import pack_program

    path = tmp_path_factory.mktemp("binding-memory") / "add_one_big.pte"
    pack_program(path, [add_one_spec(shape=(BIG,))])
    return path


def run_isolated(code: str, **values) -> subprocess.CompletedProcess:
    prologue = textwrap.dedent(
        f"""
        import gc, sys
        import numpy as np
        import torch_tensorrt_executorch_runtime as tte
        tte.register_provider_library({str(host_provider_library())!r})
        """
    )
    body = textwrap.dedent(code).format(**{k: v if isinstance(v, int) else repr(str(v)) for k, v in values.items()})
    env = {k: v for k, v in os.environ.items() if not k.startswith("TTE_")}
    return subprocess.run([sys.executable, "-c", prologue + body], capture_output=True, text=True, env=env,
                          timeout=300)


def test_view_of_a_temporary_program_stays_valid(big_program):
    """`(y,) = tte.load(p).run([x], copy=False)`: the Program is collected at once."""
    result = run_isolated(
        """
        torch = __import__("torch")
        x = torch.arange({n}, dtype=torch.float32)
        (y,) = tte.load({path}).run([x], copy=False)
        gc.collect()
        junk = [torch.full(({n},), 7.0) for _ in range(64)]  # reuse what was freed, if it was
        assert torch.equal(y, x + 1), "the view changed under us"
        y += 1  # writable
        assert torch.equal(y, x + 2)
        print("ok")
        """,
        path=big_program,
        n=BIG,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "ok"


def test_views_outlive_close_with_torch_and_numpy(big_program):
    result = run_isolated(
        """
        torch = __import__("torch")
        program = tte.load({path})
        (t,) = program.run([torch.zeros({n})], copy=False)
        (a,) = program.run([np.zeros({n}, dtype=np.float32)], copy=False)
        program.close()
        del program
        gc.collect()
        junk = [np.full({n}, 7.0, dtype=np.float32) for _ in range(64)]
        # Both views are of the same arena: the second run wrote it last.
        assert float(t.sum()) == {n} and float(a.sum()) == {n}
        t.fill_(3.0)
        assert float(a[0]) == 3.0
        del t
        gc.collect()
        a[:] = 5.0  # the numpy view alone keeps the memory now
        assert float(a.sum()) == 5.0 * {n}
        print("ok")
        """,
        path=big_program,
        n=BIG,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "ok"


def test_closed_program_refuses_runs_through_an_old_method(big_program):
    result = run_isolated(
        """
        program = tte.load({path})
        runner = program._handle.method("forward")
        program.close()
        try:
            runner.run([np.zeros({n}, dtype=np.float32)], None, True)
        except tte.errors.InvalidStateError as error:
            print(error)
        """,
        path=big_program,
        n=BIG,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "closed" in result.stdout


HOSTILE_PRODUCER = """
import ctypes
from torch_tensorrt_executorch_runtime._native import abi

class Hostile:
    '''Reports rank {ndim} but holds a shape array of two values.'''

    def __init__(self):
        self.data = np.zeros(6, dtype=np.float32)
        self.shape = (ctypes.c_int64 * 2)(2, 3)
        self.managed = abi.DLManagedTensorVersioned()
        self.managed.version.major = 1
        tensor = self.managed.dl_tensor
        tensor.data = self.data.ctypes.data
        tensor.device.device_type = abi.KDL_CPU
        tensor.ndim = {ndim}
        tensor.dtype.code, tensor.dtype.bits, tensor.dtype.lanes = 2, 32, 1
        tensor.shape = ctypes.cast(self.shape, ctypes.POINTER(ctypes.c_int64))

    def __dlpack_device__(self):
        return (abi.KDL_CPU, 0)

    def __dlpack__(self, **kwargs):
        new = ctypes.pythonapi.PyCapsule_New
        new.restype, new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        return new(ctypes.addressof(self.managed), b"dltensor_versioned", None)

program = tte.load({path})
try:
    program.forward(Hostile())
except tte.errors.InvalidArgumentError as error:
    print(error)
"""


@pytest.mark.parametrize("ndim", [17, 2**31 - 1, -1])
def test_rank_a_shape_does_not_hold_is_refused_without_reading_it(tmp_path, ndim):
    from torch_tensorrt_executorch_runtime.pack import pack_program

    path = tmp_path / "add_one.pte"
    pack_program(path, [add_one_spec(shape=(2, 3))])
    result = run_isolated(HOSTILE_PRODUCER.replace("{ndim}", str(ndim)), path=path)
    assert result.returncode == 0, result.stderr[-3000:]
    # Only the declared shape and the reported rank: no dims read past the array.
    assert result.stdout.strip() == f"input 0 of 'forward': expected rank 2 (shape [2, 3]), got rank {ndim}"
