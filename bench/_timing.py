"""The timing loops of the benchmarks (bench_cpu.py, bench_gpu.py, bench_serving.py), by
`time.perf_counter_ns`, and how each reports: the JSON record, then its table.

Every comparison runs in interleaved rounds: each round times every path of
the comparison once, one after the other, so all of them see the same
machine state; a figure is the median over the rounds, with the spread
(lowest and highest round) beside it. A ratio is taken within each round
first, then its median and spread over the rounds.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path


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


def summary(values: list[float]) -> dict:
    """Median and spread of per-round figures."""
    return {"median": statistics.median(values), "min": min(values), "max": max(values),
            "rounds": len(values)}


def interleaved_rounds(measures: Mapping[str, Callable[[], float]], rounds: int) -> dict[str, list[float]]:
    """Calls every measure once per round, in turn, `rounds` times: name -> its figure in each round.

    A measure returns one figure (microseconds per call, say); warm-up is the
    caller's, before the first round."""
    figures: dict[str, list[float]] = {name: [] for name in measures}
    for _ in range(rounds):
        for name, measure in measures.items():
            figures[name].append(measure())
    return figures


def ratio(figures: Mapping[str, list[float]], measured: str | Callable[[int], float],
          baseline: str | Callable[[int], float]) -> dict:
    """Median and spread of measured / baseline, each round against its own round.

    Either side is a name in `figures` or a function of the round index (a
    baseline made of several figures)."""
    def value(side, r: int) -> float:
        return figures[side][r] if isinstance(side, str) else side(r)

    count = len(next(iter(figures.values())))
    per_round = [value(measured, r) / value(baseline, r) for r in range(count)]
    return summary(per_round)


def per_call_us(call: Callable[[], object], calls: int) -> float:
    """Mean microseconds per call of a loop of `calls` calls (a loop's own cost, for steps that
    are not independent, like a decode loop)."""
    start = time.perf_counter_ns()
    for _ in range(calls):
        call()
    return (time.perf_counter_ns() - start) / calls / 1000.0


def report(results: dict, table: Iterable[str], out: Path | None) -> None:
    """Print `results` as JSON, then the table's lines; write the JSON to `out` when given."""
    text = json.dumps(results, indent=2)
    print(text)
    print()
    for line in table:
        print(line)
    if out:
        Path(out).write_text(text)
