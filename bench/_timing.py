"""The timing loop of the benchmarks (bench_cpu.py, bench_gpu.py): the median
wall time of single calls, by `time.perf_counter_ns`."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def p50_us(call: Callable[[], object], calls: int, *, warmup: int) -> float:
    """Median microseconds of `calls` timed calls of `call`, after `warmup` untimed ones."""
    for _ in range(warmup):
        call()
    samples = []
    for _ in range(calls):
        start = time.perf_counter_ns()
        call()
        samples.append(time.perf_counter_ns() - start)
    return statistics.median(samples) / 1000.0
