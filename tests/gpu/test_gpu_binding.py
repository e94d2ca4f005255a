"""The compiled binding on a real GPU: torch's allocator and stream for torch
callers, ordering against work on another stream, the pool for other
libraries, page-locked planned arenas and page-locked inputs that stand in
for their arena slot."""

from __future__ import annotations

import pytest
import torch

import torch_tensorrt_executorch_runtime as tte
from torch_tensorrt_executorch_runtime import reset_runtime_stats, runtime_stats
from torch_tensorrt_executorch_runtime._native import methods

N = 1 << 20


def exchange_api() -> bool:
    return methods.exchange_api_version(torch.Tensor) is not None


def test_owned_outputs_come_from_torchs_caching_allocator(cuda_provider, programs):
    if not exchange_api():
        pytest.skip(f"torch {torch.__version__} publishes no DLPack C exchange API: outputs come from the pool")
    program = tte.load(programs / "add_one_device_resident.pte")
    x = torch.arange(N, dtype=torch.float32, device="cuda")
    program.forward(x)
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    (y,) = program.forward(x)
    assert torch.equal(y, x + 1)
    assert torch.cuda.memory_allocated() - before >= 4 * N, "the output is not memory of torch's allocator"
    del y
    assert torch.cuda.memory_allocated() == before


def test_torch_inputs_run_on_torchs_current_stream_without_dlpack_calls(cuda_provider, programs):
    program = tte.load(programs / "add_one_device_resident.pte")
    x = torch.arange(N, dtype=torch.float32, device="cuda")
    program.forward(x)
    before = methods.stats()
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        (y,) = program.forward(x)
    after = methods.stats()
    assert torch.equal(y, x + 1)
    if exchange_api():
        assert after["protocol_inputs"] == before["protocol_inputs"]
        assert after["exchange_inputs"] == before["exchange_inputs"] + 1


def test_inputs_made_on_another_stream_are_ready_before_the_run(cuda_provider, programs):
    # DLPack's contract (and torch's): the work queued on the producer's
    # current stream is ordered before the consumer's stream. A tensor written
    # on a stream that is no longer current is the caller's to synchronize, as
    # in torch itself.
    program = tte.load(programs / "add_one_device_resident.pte")
    producer, consumer = torch.cuda.Stream(), torch.cuda.Stream()
    for _ in range(3):
        with torch.cuda.stream(producer):
            torch.cuda._sleep(20_000_000)  # the input is written only after a long wait
            x = torch.full((N,), 5.0, device="cuda")
            (y,) = program.run([x], stream=consumer)
        consumer.synchronize()
        assert torch.equal(y.cpu(), torch.full((N,), 6.0))


def test_cupy_outputs_are_correct_across_runs(cuda_provider, programs):
    cupy = pytest.importorskip("cupy")
    program = tte.load(programs / "add_one_device_resident.pte")
    x = cupy.arange(N, dtype=cupy.float32)
    for step in range(5):
        (y,) = program.forward(x + step)
        assert isinstance(y, cupy.ndarray)
        assert bool((y == x + step + 1).all())
        del y


def test_planned_host_arenas_are_page_locked(cuda_provider, programs):
    program = tte.load(programs / "add_one_host.pte")
    x = torch.arange(N, dtype=torch.float32)
    (y,) = program.run([x], copy=False)
    assert torch.equal(y, x + 1)
    assert y.is_pinned(), "the method's output arena is not page-locked memory"


def test_page_locked_inputs_stand_in_for_their_arena_slot(cuda_provider, programs):
    program = tte.load(programs / "add_one_host.pte")
    pinned = torch.arange(N, dtype=torch.float32).pin_memory()
    pageable = torch.full((N,), 7.0)
    for x in (pinned, pageable, (pinned + 3).pin_memory(), pinned):
        reset_runtime_stats()
        (y,) = program.forward(x)
        assert torch.equal(y, x + 1)
        assert runtime_stats()["h2d_bytes"] >= 4 * N
    # A view is never the caller's memory.
    (view,) = program.run([pinned], copy=False)
    assert view.data_ptr() != pinned.data_ptr()
    assert torch.equal(view, pinned + 1)
