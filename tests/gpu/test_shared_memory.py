"""Shared scratch arenas and shared engines on a GPU, through the CUDA test
provider (docs/architecture.md): the four delegates of one method need about
the largest one's scratch, not the sum; loading a program again adds almost no
device memory; results are those of engines with scratch of their own. The
measured ratios are printed (docs/benchmarks.md); only the memory goals are
asserted."""

from __future__ import annotations

import torch

import torch_tensorrt_executorch_runtime as tte
from torch_tensorrt_executorch_runtime import reset_runtime_stats, runtime_stats

MIB = 1 << 20
# As tests/gpu/make_gpu_programs.py packs them.
FOUR_SCRATCH = (64 * MIB, 256 * MIB, 128 * MIB, 32 * MIB)
WEIGHTS = 512 * MIB
SMALL = 1 << 16


def used() -> int:
    torch.cuda.synchronize()
    free, total = torch.cuda.mem_get_info()
    return total - free


def run_four(programs, share: bool):
    x = torch.arange(SMALL, dtype=torch.float32, device="cuda")
    before = used()
    program = tte.load(programs / "four_scratch_resident.pte", options={"share_device_memory": share})
    peak = 0
    for _ in range(3):
        (y,) = program.forward(x)
        peak = max(peak, used() - before)
    result = y.clone()
    del program, y
    return peak, result


def test_four_delegates_need_the_largest_scratch(cuda_provider, programs):
    largest, total = max(FOUR_SCRATCH), sum(FOUR_SCRATCH)
    own, own_result = run_four(programs, share=False)
    reset_runtime_stats()
    shared, shared_result = run_four(programs, share=True)
    stats = runtime_stats()
    print(f"[measure] four delegates: own scratch {own / MIB:.1f} MiB, shared {shared / MIB:.1f} MiB; "
          f"shared / largest = {shared / largest:.3f} (goal <= 1.1), own / largest = {own / largest:.3f}, "
          f"sum / largest = {total / largest:.3f}; arena peak {stats['scratch_arena_peak_bytes'] / MIB:.1f} MiB")
    assert torch.equal(shared_result, own_result)
    assert torch.equal(shared_result, torch.arange(SMALL, dtype=torch.float32, device="cuda") + 4)
    assert stats["scratch_arena_peak_bytes"] == largest
    assert shared <= largest * 1.1


def test_a_second_load_adds_almost_no_device_memory(cuda_provider, programs):
    x = torch.arange(SMALL, dtype=torch.float32, device="cuda")
    reset_runtime_stats()
    before = used()
    first = tte.load(programs / "weights_resident.pte")
    (y1,) = first.forward(x)
    first_bytes = used() - before
    second = tte.load(programs / "weights_resident.pte")
    (y2,) = second.forward(x)
    second_bytes = used() - before - first_bytes
    stats = runtime_stats()
    print(f"[measure] first load {first_bytes / MIB:.1f} MiB (weights {WEIGHTS / MIB:.0f} MiB), "
          f"second load {second_bytes / MIB:.1f} MiB: second / first = {second_bytes / first_bytes:.3f} (goal < 0.1)")
    assert torch.equal(y1, y2) and torch.equal(y1, x + 1)
    assert stats["shared_engine_reuses"] == 1
    assert second_bytes < 0.1 * first_bytes
    del first, second


def test_share_engines_false_loads_twice(cuda_provider, programs):
    reset_runtime_stats()
    a = tte.load(programs / "weights_resident.pte", options={"share_engines": False})
    b = tte.load(programs / "weights_resident.pte", options={"share_engines": False})
    x = torch.arange(SMALL, dtype=torch.float32, device="cuda")
    assert torch.equal(a.forward(x)[0], b.forward(x)[0])
    assert runtime_stats()["shared_engine_reuses"] == 0
    del a, b


def test_calls_one_after_another_share_one_arena_whatever_their_thread(cuda_provider, programs):
    # A call without a caller stream borrows a stream (and its arena) from a
    # pool and gives it back when it returns: the next call takes the same
    # one, on whichever thread, so threads that come and go add no arenas.
    import threading

    program = tte.load(programs / "weights_resident.pte", options={"max_concurrent_runs": 1})
    x = torch.arange(SMALL, dtype=torch.float32, device="cuda")
    (y,) = program.forward(x)  # this thread's arena stays
    base = runtime_stats()["scratch_arenas"]
    results = []

    def work():
        (out,) = program.run([x], stream=0)
        results.append(torch.equal(out, x + 1))

    for _ in range(3):
        worker = threading.Thread(target=work)
        worker.start()
        worker.join()
        assert runtime_stats()["scratch_arenas"] == base
    assert results == [True] * 3


def test_four_threads_on_one_program(cuda_provider, programs):
    """4 threads on one program (200 us spin per call): each borrows an instance of
    the method; results per thread stay right. The throughput ratio is printed
    (goal >= 3, docs/benchmarks.md), never asserted."""
    import threading
    import time

    program = tte.load(programs / "spin200_resident.pte", options={"max_concurrent_runs": 4})
    calls = 300

    def rate(threads: int) -> float:
        xs = [torch.full((SMALL,), float(t), device="cuda") for t in range(threads)]
        bad = []
        barrier = threading.Barrier(threads + 1)

        def work(t):
            with torch.cuda.stream(torch.cuda.Stream()):
                barrier.wait()
                for _ in range(calls):
                    (y,) = program.forward(xs[t])
                if not torch.equal(y, xs[t] + 1):
                    bad.append(t)

        workers = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
        for w in workers:
            w.start()
        barrier.wait()
        start = time.perf_counter()
        for w in workers:
            w.join()
        assert not bad
        return threads * calls / (time.perf_counter() - start)

    rate(1)  # warm up
    one, four = rate(1), rate(4)
    print(f"[measure] one program, 200 us spin: 1 thread {one:.0f} calls/s, 4 threads {four:.0f} calls/s: "
          f"ratio {four / one:.2f} (goal >= 3)")
