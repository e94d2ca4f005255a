"""CPU benchmark: `Program.forward` against ExecuTorch's own `Method.execute`.

The same tiny program (x + 1 on 256 float32, one TensorRTBackend delegate run
by the host test provider) is run in one process through this package and
through the stock `executorch.runtime` (ExecuTorch's pybind extension), with
torch tensors, and each figure is printed as a ratio against ExecuTorch's.
Calls of the two are interleaved in rounds, so both see the same machine
state; the p50 of every round is kept and the median round is reported.
Needs torch (ExecuTorch's extension takes torch tensors) and the host test
provider library of a build. Prints one JSON document and a table; never
asserts.

  python bench/bench_cpu.py --provider build/wheel/cpp/libtte_test_provider_host.so [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

from _timing import p50_us

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
    rounds: dict[str, list[float]] = {name: [] for name in paths}
    for _ in range(args.rounds):
        for name, call in paths.items():
            rounds[name].append(p50_us(call, args.calls, warmup=0))  # warmed up above
    p50 = {name: statistics.median(values) for name, values in rounds.items()}
    baseline = p50["executorch_method_execute"]

    results = {
        "program": f"add_one on {ELEMENTS} float32, host test provider",
        "python": sys.version.split()[0],
        "torch": torch.__version__,
        "numpy": numpy.__version__,
        # Which DLPack path the binding took: the C exchange API of torch's
        # tensors when this torch publishes one, else `__dlpack__`.
        "torch_dlpack_exchange_api": methods.exchange_api_version(torch.Tensor),
        "binding_paths": methods.stats(),
        "p50_us": p50,
        "ratios_vs_executorch": {name: value / baseline for name, value in p50.items()},
        "goal": "program_forward / executorch_method_execute <= 1.0",
    }
    print(json.dumps(results, indent=2))
    print(f"\n{'path':32} {'p50 us':>8} {'/ ExecuTorch':>13}")
    for name, value in p50.items():
        print(f"{name:32} {value:8.2f} {value / baseline:13.2f}")
    if args.out:
        args.out.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
