"""1000 load/run/drop cycles leave the resident set flat.

The RSS curve is printed (pytest -s shows it); the bound is generous (20 MB
past a warm-up), not a timing assertion: a leak of one program per cycle
(the plugin, its blob copy and arenas: tens of kilobytes) would pass it.
"""

from __future__ import annotations

import os

import numpy as np

CYCLES = 1000
WARMUP = 50
BOUND_BYTES = 20 * 2**20


def _rss_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_load_run_drop_cycles_keep_rss_flat(tte, host_provider, packed):
    data = packed["add_one"].read_bytes()
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    curve = []
    baseline = None
    for cycle in range(CYCLES + 1):
        if cycle == WARMUP:
            baseline = _rss_bytes()
        if cycle % 100 == 0:
            curve.append((cycle, _rss_bytes()))
        program = tte.load(data)
        (y,) = program.forward(x)
        program.close()
        del program, y
    final = _rss_bytes()
    print("\ncycle  rss_MiB")
    for cycle, rss in curve:
        print(f"{cycle:5d}  {rss / 2**20:8.2f}")
    print(f"growth after warm-up: {(final - baseline) / 2**20:.2f} MiB over {CYCLES - WARMUP} cycles")
    assert final - baseline < BOUND_BYTES
