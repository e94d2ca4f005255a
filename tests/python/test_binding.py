"""The compiled binding (`_native._compiled`): which DLPack path inputs and
outputs take, the stream a producer is asked to order its work before, the
shapes `inputs` may take, and the result objects of libraries without the
DLPack C exchange API."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

torch = pytest.importorskip("torch")

KDL_CUDA = 2


def _stats():
    from torch_tensorrt_executorch_runtime._native import methods

    return methods.stats()


def _delta(before: dict, after: dict) -> dict:
    return {key: after[key] - before[key] for key in before}


def test_torch_tensors_take_the_exchange_api(tte, host_provider, programs):
    from torch_tensorrt_executorch_runtime._native import methods

    if methods.exchange_api_version(torch.Tensor) is None:
        pytest.skip(f"torch {torch.__version__} publishes no DLPack C exchange API")
    program = tte.load(programs["add_one"])
    x = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    program.forward(x)  # loads the method
    before = _stats()
    (y,) = program.forward(x)
    assert torch.equal(y, x + 1)
    assert _delta(before, _stats()) == {
        "exchange_inputs": 1, "protocol_inputs": 0, "exchange_outputs": 1, "converted_outputs": 0,
        "reused_views": 0}


def test_numpy_arrays_take_the_dlpack_protocol(tte, host_provider, programs):
    program = tte.load(programs["add_one"])
    x = np.zeros((2, 3), dtype=np.float32)
    program.forward(x)
    before = _stats()
    (y,) = program.forward(x)
    np.testing.assert_array_equal(y, x + 1)
    assert _delta(before, _stats()) == {
        "exchange_inputs": 0, "protocol_inputs": 1, "exchange_outputs": 0, "converted_outputs": 1,
        "reused_views": 0}


def _exchange_or_skip():
    from torch_tensorrt_executorch_runtime._native import methods

    if methods.exchange_api_version(torch.Tensor) is None:
        pytest.skip(f"torch {torch.__version__} publishes no DLPack C exchange API")


def test_a_view_that_has_not_moved_comes_back_as_the_same_object(tte, host_provider, programs):
    _exchange_or_skip()
    program = tte.load(programs["add_one"])
    x = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    (first,) = program.run([x], copy=False)
    before = _stats()
    (second,) = program.run([x + 1], copy=False)
    assert second is first
    assert torch.equal(second, x + 2)
    assert _delta(before, _stats())["reused_views"] == 1
    # Owned outputs are always new objects.
    (owned,) = program.forward(x)
    assert owned is not second and torch.equal(owned, x + 1)


@pytest.mark.parametrize(
    "change",
    [
        lambda t: t.unsqueeze_(0),
        lambda t: t.t_(),
        lambda t: t.set_(torch.zeros(2, 3)),
        lambda t: t.resize_(6),
    ],
    ids=["unsqueeze_", "t_", "set_", "resize_"],
)
def test_a_view_changed_in_place_by_the_caller_is_not_returned_again(tte, host_provider, programs, change):
    _exchange_or_skip()
    program = tte.load(programs["add_one"])
    x = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    (first,) = program.run([x], copy=False)
    change(first)
    before = _stats()
    (second,) = program.run([x], copy=False)
    assert second is not first
    assert second.shape == (2, 3) and torch.equal(second, x + 1)
    assert _delta(before, _stats())["reused_views"] == 0


class CudaTagged:
    """Claims CUDA memory and records the stream `__dlpack__` is asked for; exports host memory."""

    def __init__(self, array: np.ndarray):
        self.array = array
        self.streams: list = []

    def __dlpack_device__(self):
        return (KDL_CUDA, 0)

    def __dlpack__(self, *, stream=None, max_version=None, **kwargs):
        self.streams.append(stream)
        return self.array.__dlpack__(max_version=max_version)


@pytest.mark.parametrize(
    "stream, asked",
    # DLPack reserves 0: the legacy default stream is 1, and -1 (no stream
    # known) asks the producer not to synchronize.
    [(None, -1), (0, 1), (0x7F00, 0x7F00)],
    ids=["no-stream", "legacy-default", "a-stream"],
)
def test_stream_a_cuda_producer_is_asked_for(tte, host_provider, programs, stream, asked):
    program = tte.load(programs["add_one"])
    x = CudaTagged(np.zeros((2, 3), dtype=np.float32))
    (y,) = program.run([x], stream=stream)
    np.testing.assert_array_equal(y, np.ones((2, 3), dtype=np.float32))
    assert x.streams == [asked]


def test_host_producers_are_asked_for_no_stream(tte, host_provider, programs):
    class Recording(CudaTagged):
        def __dlpack_device__(self):
            return (1, 0)

    program = tte.load(programs["add_one"])
    x = Recording(np.zeros((2, 3), dtype=np.float32))
    program.run([x], stream=0x7F00)
    assert x.streams == [None]


def test_inputs_as_one_tensor_a_list_a_tuple_or_an_iterable(tte, host_provider, programs):
    program = tte.load(programs["add_one"])
    x = torch.zeros(2, 3)
    for inputs in (x, [x], (x,), iter([x])):
        (y,) = program.run(inputs)
        assert torch.equal(y, torch.ones(2, 3))


def test_an_input_that_is_no_tensor_is_named(tte, host_provider, programs):
    program = tte.load(programs["add_one"])
    with pytest.raises(tte.errors.InvalidArgumentError, match="input 0 of 'forward' is a object; expected a tensor"):
        program.forward(object())
    with pytest.raises(tte.errors.InvalidArgumentError, match="takes 1 inputs, got 2"):
        program.run([torch.zeros(2, 3), torch.zeros(2, 3)])


def _capsule_name(capsule) -> bytes:
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    return get_name(capsule)


@pytest.fixture
def raw_outputs(tte):
    """Runs hand back `Output` objects unconverted while the fixture is active."""
    from torch_tensorrt_executorch_runtime import _native
    from torch_tensorrt_executorch_runtime.program import tensors

    _native.set_tensor_library_hooks(tensors.stream_of, lambda inputs, results, method: results)
    yield
    _native.set_tensor_library_hooks(tensors.stream_of, tensors.convert_outputs)


def test_output_objects_give_their_tensor_once(tte, host_provider, programs, raw_outputs):
    from torch_tensorrt_executorch_runtime import _native

    program = tte.load(programs["add_one"])
    x = np.zeros((2, 3), dtype=np.float32)
    (versioned,) = program.forward(x)
    assert isinstance(versioned, _native.Output)
    assert versioned.shape == (2, 3) and versioned.device == (1, 0)
    assert _capsule_name(versioned.__dlpack__(max_version=(1, 0))) == b"dltensor_versioned"
    with pytest.raises(BufferError, match="already exported"):
        versioned.__dlpack__(max_version=(1, 0))
    (legacy,) = program.forward(x)
    assert _capsule_name(legacy.__dlpack__()) == b"dltensor"
    (consumed,) = program.forward(x)
    np.testing.assert_array_equal(np.from_dlpack(consumed), np.ones((2, 3), dtype=np.float32))
    (refused,) = program.forward(x)
    with pytest.raises(BufferError, match="not"):
        refused.__dlpack__(max_version=(1, 0), dl_device=(KDL_CUDA, 0))
    with pytest.raises(BufferError, match="copy=True"):
        refused.__dlpack__(max_version=(1, 0), copy=True)
    refused.release()
    with pytest.raises(BufferError, match="already exported"):
        refused.__dlpack__(max_version=(1, 0))


def _unplanned_output_spec():
    """add_one on [2, 3] whose output is not planned (alloc_graph_output=False):
    the program gives it memory, or an owned run the caller's tensor."""
    from torch_tensorrt_executorch_runtime.pack import TensorSpec
    from torch_tensorrt_executorch_runtime.testing import test_engine_spec

    return test_engine_spec("add_one", [TensorSpec("x", "float32", [2, 3])],
                            [TensorSpec("y", "float32", ["x:0", "x:1"])])


def test_unplanned_outputs_are_owned_by_the_callers_library(tte, host_provider, pack_unplanned_outputs):
    # torch's allocator makes the tensor the engine writes into; each result is
    # the caller's, untouched by later runs and alive after close; numpy callers
    # and views keep working on the same program.
    program = tte.load(pack_unplanned_outputs([_unplanned_output_spec()]))
    assert program.method("forward").outputs[0].memory_planned is False
    x = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    (first,) = program.forward(x)
    (second,) = program.forward(x + 10)
    assert isinstance(first, torch.Tensor)
    assert first.data_ptr() != second.data_ptr()
    assert torch.equal(first, x + 1) and torch.equal(second, x + 11)
    (view,) = program.run([x], copy=False)
    assert torch.equal(view, x + 1)
    (array,) = program.forward(x.numpy() + 20)
    assert isinstance(array, np.ndarray)
    np.testing.assert_array_equal(array, x.numpy() + 21)
    program.close()
    del view
    assert torch.equal(first, x + 1) and torch.equal(second, x + 11)
