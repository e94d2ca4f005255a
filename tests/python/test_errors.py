"""Every error path a user can reach: a named exception with a useful message, never a crash."""

from __future__ import annotations

import errno
import shutil

import numpy as np
import pytest

torch = pytest.importorskip("torch")


def test_memory_errors_are_told_apart_by_status_not_message(tte):
    errors = tte.errors
    host = errors.error_for_status(11, "cannot allocate 64 bytes")
    assert type(host) is errors.HostOutOfMemoryError
    assert host.status == errors.TTE_ERROR_HOST_OUT_OF_MEMORY == 11
    assert host.status_name == "out of host memory"
    assert isinstance(host, MemoryError) and not isinstance(host, errors.DeviceOutOfMemoryError)
    # Status 4 is device memory, whatever its message says.
    device = errors.error_for_status(4, "method 'forward' plans 64 bytes of host memory, more than ...")
    assert type(device) is errors.DeviceOutOfMemoryError
    assert device.status == errors.TTE_ERROR_OUT_OF_MEMORY == 4
    # A code this package does not know stays the base Error, with its code.
    unknown = errors.error_for_status(12, "")
    assert type(unknown) is errors.Error and unknown.status == 12 and "status 12" in unknown.status_name
    # A Python provider's MemoryError is host memory; the classes keep their own codes.
    assert errors.status_of(MemoryError()) == 11
    assert errors.status_of(errors.HostOutOfMemoryError("x")) == 11
    assert errors.status_of(errors.DeviceOutOfMemoryError("x")) == 4


def test_missing_file(tte, tmp_path):
    with pytest.raises(tte.errors.MissingFileError, match="nope.pte': it does not exist") as info:
        tte.load(tmp_path / "nope.pte")
    # Code written for the builtin error keeps working.
    assert isinstance(info.value, FileNotFoundError) and info.value.errno == errno.ENOENT
    assert isinstance(info.value, tte.errors.NotFoundError)


def test_missing_data_file(tte, programs, tmp_path):
    with pytest.raises(FileNotFoundError, match="missing.ptd"):
        tte.load(programs["add_one"], data_path=tmp_path / "missing.ptd")


@pytest.mark.parametrize("damage", ["empty", "garbage", "truncated", "bitflip"])
def test_corrupt_pte(tte, host_provider, programs, tmp_path, damage):
    data = programs["add_one"].read_bytes()
    if damage == "empty":
        data = b""
    elif damage == "garbage":
        data = b"this is not a program" * 10
    elif damage == "truncated":
        data = data[: len(data) // 3]
    else:
        data = bytearray(data)
        data[4] ^= 0xFF  # the ET12 file identifier
        data = bytes(data)
    path = tmp_path / f"{damage}.pte"
    path.write_bytes(data)
    with pytest.raises(tte.errors.Error) as info:
        program = tte.load(path)
        program.forward(torch.zeros(2, 3))
    assert isinstance(info.value, tte.errors.InvalidProgramError | tte.errors.NotFoundError | tte.errors.ExecutionError)
    assert str(info.value)


def test_wrong_dtype(tte, host_provider, programs):
    program = tte.load(programs["add_one"])
    # The plugin checks inputs and names the one at fault.
    with pytest.raises(tte.errors.InvalidArgumentError, match=r"input 0\b[^:]*: expected float32, got int64"):
        program.forward(torch.zeros(2, 3, dtype=torch.int64))


def test_wrong_rank(tte, host_provider, programs):
    program = tte.load(programs["add_one"])
    with pytest.raises(tte.errors.InvalidArgumentError,
                       match=r"input 0\b[^:]*: expected rank 2 \(shape \[2, 3\]\), got rank 1"):
        program.forward(torch.zeros(6))


def test_wrong_input_count(tte, host_provider, programs):
    program = tte.load(programs["add"])
    with pytest.raises(tte.errors.InvalidArgumentError, match="takes 2 inputs, got 1"):
        program.run([np.zeros(4, np.int32)])


def test_out_of_profile_shape(tte, host_provider, programs):
    program = tte.load(programs["dynamic"])
    with pytest.raises(tte.errors.Error) as info:
        program.forward(torch.zeros(9, 4))
    text = str(info.value)
    assert "9" in text and ("profile" in text or "bound" in text or "exceeds" in text or "max" in text)
    # The program is still usable afterwards.
    (y,) = program.forward(torch.zeros(3, 4))
    assert y.shape == (3, 4)


def test_unknown_method(tte, host_provider, programs):
    program = tte.load(programs["add_one"])
    with pytest.raises(tte.errors.UnknownMethodError, match="no method 'backward'.*forward"):
        program.run([torch.zeros(2, 3)], "backward")
    # Upstream raised ValueError for an unknown method.
    with pytest.raises(ValueError):
        program.run([torch.zeros(2, 3)], "backward")


def test_not_a_tensor(tte, host_provider, programs):
    program = tte.load(programs["add_one"])
    with pytest.raises(tte.errors.InvalidArgumentError, match="expected a tensor"):
        program.forward([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])


def test_missing_ptd(tte, host_provider, programs, tmp_path):
    pte = tmp_path / "lonely.pte"
    shutil.copy(programs["external"], pte)
    with pytest.raises(tte.errors.MissingDataError, match="epilogue_0") as info:
        tte.load(pte)
    assert isinstance(info.value, FileNotFoundError)
    assert "data_path" in str(info.value)


def test_unknown_provider_option(tte, host_provider, programs):
    program = tte.load(programs["add_one"], options={"provider": "no-such-provider"})
    with pytest.raises(tte.errors.Error, match="no-such-provider"):
        program.forward(torch.zeros(2, 3))


def test_bad_option_type(tte, programs):
    with pytest.raises(TypeError, match="cuda_graphs"):
        tte.load(programs["add_one"], options={"cuda_graphs": 1.5})


def test_no_provider_at_all(programs, run_python):
    # A fresh process with no provider registered: the delegate cannot load.
    result = run_python(
        f"""
        import torch, torch_tensorrt_executorch_runtime as tte
        for name in tte.providers.providers():
            tte.unregister_provider(name)
        program = tte.load({str(programs["add_one"])!r})
        try:
            program.forward(torch.zeros(2, 3))
        except tte.errors.Error as exc:
            print("ERROR", type(exc).__name__, exc)
        """
    )
    assert result.returncode == 0, result.stderr
    assert "ERROR" in result.stdout
    assert "provider" in result.stdout


def test_only_the_tensorrt_provider_for_a_test_plan(programs, run_python, tte):
    # tensorrt-python never accepts a test plan; without a GPU the backend says so first.
    result = run_python(
        f"""
        import torch, torch_tensorrt_executorch_runtime as tte
        program = tte.load({str(programs["add_one"])!r})
        try:
            program.forward(torch.zeros(2, 3))
        except tte.errors.Error as exc:
            print("ERROR", type(exc).__name__, exc)
        """
    )
    assert result.returncode == 0, result.stderr
    assert "ERROR" in result.stdout
    if tte.cuda_device_count() == 0:
        assert "NoDeviceError" in result.stdout and "no CUDA device" in result.stdout
    else:
        assert "provider" in result.stdout


def test_tensorrt_provider_without_gpu_is_a_named_error(tte, tmp_path):
    """A real (non-test) plan through the TensorRT provider on a machine with no GPU."""
    if tte.cuda_device_count() > 0:
        pytest.skip("this machine has a CUDA device")
    from torch_tensorrt_executorch_runtime.pack import EngineSpec, TensorSpec, pack_program

    path = tmp_path / "fake_trt.pte"
    pack_program(
        path,
        [EngineSpec(b"ftrt" + bytes(64), [TensorSpec("x", "float32", [2])], [TensorSpec("y", "float32", [2])])],
    )
    first = tte.providers.providers()[0]  # the native provider where installed, else the Python one
    assert first in ("tensorrt-native-11", "tensorrt-native-10", "tensorrt-python")
    program = tte.load(path, options={"provider": first})
    with pytest.raises(tte.errors.NoDeviceError, match="no CUDA device"):
        program.forward(torch.zeros(2))
    program = tte.load(path)
    with pytest.raises(tte.errors.Error) as info:
        program.forward(torch.zeros(2))
    assert "CUDA" in str(info.value) or "device" in str(info.value)


def test_host_provider_library_missing(tte, tmp_path):
    with pytest.raises(FileNotFoundError):
        tte.register_provider_library(tmp_path / "libnothing.so")


def test_host_provider_library_not_a_provider(tte):
    # The plugin itself exports no provider entry point.
    from torch_tensorrt_executorch_runtime import _native

    with pytest.raises(tte.errors.Error):
        tte.register_provider_library(_native.plugin_path())


def test_provider_error_message_reaches_the_user(tte, host_provider, tmp_path):
    from torch_tensorrt_executorch_runtime.pack import TensorSpec, pack_program
    from torch_tensorrt_executorch_runtime.testing import test_engine_spec

    path = tmp_path / "failing.pte"
    pack_program(
        path,
        [
            test_engine_spec(
                "add_one",
                [TensorSpec("x", "float32", [2])],
                [TensorSpec("y", "float32", ["x:0"])],
                fail={"enqueue": "the engine refused to run today"},
            )
        ],
    )
    program = tte.load(path)
    with pytest.raises(tte.errors.Error, match="refused to run today"):
        program.forward(torch.zeros(2))
