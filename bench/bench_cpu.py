"""CPU benchmark: `Program.forward` against ExecuTorch's own `Method.execute`.

The same tiny program (x + 1 on 256 float32, one TensorRTBackend delegate run
by the host test provider) is run in one process through this package and
through the stock `executorch.runtime` (ExecuTorch's pybind extension), with
torch tensors, and each figure is printed as a ratio against ExecuTorch's.
Calls of the two are interleaved in rounds, so both see the same machine
state; the p50 of every round is kept, and each figure and ratio is reported
as the median round with the spread (lowest and highest round) beside it.
It also reports "load_host_memory" (bench/load_memory.py: peak and kept
resident memory of loading a 64 MiB engine over the file size, and the load
time over reading the file once) for the host test provider.
Needs torch (ExecuTorch's extension takes torch tensors) and the host test
provider library of a build. Prints one JSON document and a table; never
asserts.

  python bench/bench_cpu.py --provider build/wheel/cpp/libtte_test_provider_host.so [--out FILE]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

from _timing import interleaved_rounds, p50_us, ratio, report, summary
from load_memory import load_host_memory, pack_large_program

ELEMENTS = 256


def pack_add_one(folder: Path) -> Path:
    from torch_tensorrt_executorch_runtime.pack import TensorSpec, pack_program
    from torch_tensorrt_executorch_runtime.testing import test_engine_spec

    path = folder / "add_one_256.pte"
    spec = test_engine_spec("add_one", [TensorSpec("x", "float32", [ELEMENTS])], [TensorSpec("y", "float32", ["x:0"])])
    pack_program(path, [spec])
    return path


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--provider", type=Path, required=True, help="libtte_test_provider_host.so")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--calls", type=int, default=2000, help="calls per path per round")
    ap.add_argument("--load-memory-mb", type=int, default=64, help="engine size of the load-memory measurement")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()

    import numpy
    import torch

    import torch_tensorrt_executorch_runtime as tte
    from torch_tensorrt_executorch_runtime._native import methods

    if "test-host" not in tte.providers.providers():
        tte.register_provider_library(args.provider)
    folder = Path(tempfile.mkdtemp())
    path = pack_add_one(folder)

    program = tte.load(path)
    runtime = tte.get_runtime()
    et_method = runtime.load_program(str(path)).load_method("forward")

    x = torch.arange(ELEMENTS, dtype=torch.float32)
    x_numpy = x.numpy()
    expected = x + 1
    (y,) = program.forward(x)
    (y_et,) = et_method.execute([x])
    assert torch.equal(y, expected) and torch.equal(y_et, expected), "the two paths disagree"

    paths = {
        "executorch_method_execute": lambda: et_method.execute([x]),
        "program_forward": lambda: program.forward(x),
        "program_run_views": lambda: program.run([x], copy=False),
        "program_forward_numpy": lambda: program.forward(x_numpy),
    }
    for call in paths.values():  # warm up
        for _ in range(200):
            call()
    rounds = interleaved_rounds(
        {name: (lambda call=call: p50_us(call, args.calls, warmup=0))  # warmed up above
         for name, call in paths.items()},
        args.rounds)
    p50 = {name: statistics.median(values) for name, values in rounds.items()}
    ratios = {name: ratio(rounds, name, "executorch_method_execute") for name in paths}
    memory = load_host_memory(pack_large_program(folder / "large.pte", args.load_memory_mb), args.provider,
                              "test-host")

    results = {
        "program": f"add_one on {ELEMENTS} float32, host test provider",
        "python": sys.version.split()[0],
        "torch": torch.__version__,
        "numpy": numpy.__version__,
        # Which DLPack path the binding took: the C exchange API of torch's
        # tensors when this torch publishes one, else `__dlpack__`.
        "torch_dlpack_exchange_api": methods.exchange_api_version(torch.Tensor),
        "binding_paths": methods.stats(),
        "rounds": args.rounds,
        "p50_us": p50,
        "p50_us_spread": {name: summary(values) for name, values in rounds.items()},
        "ratios_vs_executorch": {name: r["median"] for name, r in ratios.items()},
        "ratios_vs_executorch_spread": ratios,
        "goal": "program_forward / executorch_method_execute <= 1.0",
        "load_host_memory": memory,
    }
    table = [f"{'path':32} {'p50 us':>8} {'/ ExecuTorch':>13} {'(rounds: lowest .. highest)':>28}"]
    for name, value in p50.items():
        r = ratios[name]
        table.append(f"{name:32} {value:8.2f} {r['median']:13.2f} {r['min']:13.2f} .. {r['max']:.2f}")
    table.append("")
    table.append(f"load_host_memory ({memory['plan_bytes']} bytes, {memory['rounds']} rounds): kept "
                 f"{memory['kept_over_plan']:.3f} (<= 0.05), peak {memory['peak_over_plan']:.3f} (<= 1.1), "
                 f"load / read {memory['load_over_read']:.2f} (<= 1.3): {'met' if memory['met'] else 'MISSED'}")
    report(results, table, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
