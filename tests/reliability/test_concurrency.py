"""Several threads on one program (serialized by its lock) and on several
programs (in parallel) give the results of one thread; programs loaded and
dropped while others run do not disturb them."""

from __future__ import annotations

import ctypes
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

THREADS = 8
RUNS = 50


def _inputs(seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((2, 4)).astype(np.float32) for _ in range(RUNS)]


def _run_all(program, inputs) -> list[np.ndarray]:
    return [program.forward(x)[0] for x in inputs]


def test_eight_threads_share_one_program(tte, host_provider, packed):
    per_thread = [_inputs(seed) for seed in range(THREADS)]
    with tte.load(packed["add_one"]) as program:
        expected = [_run_all(program, inputs) for inputs in per_thread]
        start = threading.Barrier(THREADS)

        def work(index):
            start.wait()
            return _run_all(program, per_thread[index])

        with ThreadPoolExecutor(THREADS) as pool:
            results = list(pool.map(work, range(THREADS)))
    for got, want, inputs in zip(results, expected, per_thread, strict=True):
        for g, w, x in zip(got, want, inputs, strict=True):
            np.testing.assert_array_equal(g, w)
            np.testing.assert_array_equal(g, x + 1)


def test_eight_threads_on_eight_programs(tte, host_provider, packed):
    per_thread = [_inputs(100 + seed) for seed in range(THREADS)]
    programs = [tte.load(packed["add_one"]) for _ in range(THREADS)]
    try:
        expected = [_run_all(programs[0], inputs) for inputs in per_thread]
        start = threading.Barrier(THREADS)

        def work(index):
            start.wait()
            return _run_all(programs[index], per_thread[index])

        with ThreadPoolExecutor(THREADS) as pool:
            results = list(pool.map(work, range(THREADS)))
    finally:
        for program in programs:
            program.close()
    for got, want in zip(results, expected, strict=True):
        for g, w in zip(got, want, strict=True):
            np.testing.assert_array_equal(g, w)


def test_loading_and_dropping_while_others_run(tte, host_provider, packed):
    data = packed["add_one"].read_bytes()
    stop = threading.Event()
    errors = []

    def churn():
        x = np.ones((2, 4), dtype=np.float32)
        while not stop.is_set():
            try:
                program = tte.load(data)
                np.testing.assert_array_equal(program.forward(x)[0], x + 1)
                program.close()
            except Exception as error:  # reported below, not lost in the thread
                errors.append(error)
                return

    churners = [threading.Thread(target=churn) for _ in range(3)]
    for thread in churners:
        thread.start()
    try:
        per_thread = [_inputs(200 + seed) for seed in range(4)]
        with tte.load(packed["add_one"]) as program, ThreadPoolExecutor(4) as pool:
            results = list(pool.map(lambda i: _run_all(program, per_thread[i]), range(4)))
    finally:
        stop.set()
        for thread in churners:
            thread.join()
    assert not errors, errors
    for got, inputs in zip(results, per_thread, strict=True):
        for g, x in zip(got, inputs, strict=True):
            np.testing.assert_array_equal(g, x + 1)


def test_programs_sharing_a_dynamic_engine_never_run_one_profile_at_once(tte, host_provider, host_provider_file,
                                                                      provider_stats, tmp_path):
    """Two programs with one plan share its deserialized engine, each with a context of its own; TensorRT:
    "If the engine supports dynamic shapes, each execution context in concurrent use must use a separate
    optimization profile" (NvInferRuntime.h, class IExecutionContext). Their calls on one profile take
    turns; they would overlap without the backend's per-profile lock."""
    from torch_tensorrt_executorch_runtime.pack import TensorSpec, pack_program
    from torch_tensorrt_executorch_runtime.testing import test_engine_spec

    path = tmp_path / "dynamic_slow.pte"
    spec = test_engine_spec("add_one", [TensorSpec("x", "float32", [(1, 2, 8), 4])],
                            [TensorSpec("y", "float32", ["x:0", 4])], spin_us=20_000)
    pack_program(path, [spec])
    library = ctypes.CDLL(str(host_provider_file))
    tte.reset_runtime_stats()
    programs = [tte.load(path), tte.load(path)]
    try:
        x = np.ones((2, 4), dtype=np.float32)
        for program in programs:
            program.forward(x)
        assert tte.runtime_stats()["shared_engine_reuses"] >= 1, "the second load did not share the engine"
        library.tte_test_provider_reset_stats()
        start = threading.Barrier(len(programs))

        def work(program):
            start.wait()
            return [program.forward(x)[0] for _ in range(5)]

        with ThreadPoolExecutor(len(programs)) as pool:
            results = list(pool.map(work, programs))
        for outputs in results:
            for y in outputs:
                np.testing.assert_array_equal(y, x + 1)
        stats = provider_stats(library)
        assert stats.enqueues == 10
        assert stats.max_profile_overlap == 1
    finally:
        for program in programs:
            program.close()
