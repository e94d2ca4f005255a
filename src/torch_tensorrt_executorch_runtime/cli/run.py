"""`torch-tensorrt-executorch run`: run a method and report its outputs and latency.

Runs through this package (`Program`), so every provider Python can register
serves it: the Python TensorRT provider (full, lean, dispatch, TensorRT-RTX),
Python-protocol providers and provider libraries. `tte-run` is the same job as
a C++ process over the C API, for machines and measurements without Python.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

from .. import _activation, _dtypes
from ..program import load, load_options
from ..program.load_options import parse_option_text
from ..providers import register_provider_library
from .usage import UsageError

# Dtypes numpy makes under the same name.
_NUMPY_DTYPES = _dtypes.names_accepted_by(_dtypes.NUMPY)


class ProgressBar:
    """A one-line progress bar on stderr; mode "auto" shows it once a run takes over a second."""

    WIDTH = 30

    def __init__(self, total: int, label: str, mode: str = "auto", stream=None):
        self.total = total
        self.label = label
        self.stream = stream or sys.stderr
        self.enabled = mode != "off" and total > 1
        self.delay = 0.0 if mode == "on" else 1.0
        self.start = time.perf_counter()
        self.last_draw = 0.0
        self.shown = False
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.next_mark = 0.1

    def update(self, done: int) -> None:
        if not self.enabled:
            return
        now = time.perf_counter()
        if not self.shown and now - self.start < self.delay:
            return
        fraction = done / self.total
        if self.tty:
            if now - self.last_draw < 0.1 and done < self.total:
                return
            filled = int(self.WIDTH * fraction)
            eta = (now - self.start) / max(done, 1) * (self.total - done)
            self.stream.write(
                f"\r{self.label} [{'#' * filled}{'.' * (self.WIDTH - filled)}] {done}/{self.total} ETA {eta:5.1f}s"
            )
        elif fraction >= self.next_mark or done == self.total:
            self.stream.write(f"{self.label}: {done}/{self.total}\n")
            self.next_mark = math.floor(fraction * 10 + 1) / 10
        self.stream.flush()
        self.last_draw = now
        self.shown = True

    def finish(self) -> None:
        if self.enabled and self.shown and self.tty:
            self.stream.write("\n")
            self.stream.flush()


def _shape_of(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(d) for d in text.lower().replace(",", "x").split("x") if d != "")
    except ValueError:
        raise UsageError(f"bad shape '{text}': expected dims like 2x3x4") from None


def _make_input(spec: str | None, info, index: int, use_torch: bool, device: str | None):
    import numpy as np

    where = f"input {index}"
    if info.kind in ("int", "double", "bool"):
        text = spec if spec is not None else {"int": "1", "double": "1.0", "bool": "true"}[info.kind]
        if info.kind == "int":
            return int(text)
        if info.kind == "double":
            return float(text)
        return text.lower() in ("1", "true", "yes")
    if info.kind == "none":
        return None
    if info.kind != "tensor":
        raise UsageError(f"{where} is a {info.kind}; the CLI can only make tensors and scalars")
    spec_text = spec or "ones"
    kind, _, shape_text = spec_text.partition(":")
    shape = _shape_of(shape_text) if shape_text else tuple(info.shape)
    if kind.endswith(".npy") or Path(kind).suffix == ".npy":
        array = np.load(spec_text)
    elif kind in ("ones", "zeros", "random", "rand"):
        if info.dtype == "bfloat16":
            if not use_torch:
                raise UsageError(f"{where} is bfloat16, which numpy cannot make: install torch")
            import torch

            maker = {"ones": torch.ones, "zeros": torch.zeros}.get(kind, torch.rand)
            return maker(shape, dtype=torch.bfloat16, device=device or "cpu")
        if info.dtype not in _NUMPY_DTYPES:
            raise UsageError(f"{where} has dtype {info.dtype}, which the CLI cannot make; pass a .npy file")
        dtype = np.dtype(info.dtype)
        if kind == "ones":
            array = np.ones(shape, dtype)
        elif kind == "zeros":
            array = np.zeros(shape, dtype)
        elif dtype.kind == "f":
            array = np.random.default_rng(index).random(shape).astype(dtype)
        elif dtype.kind == "b":
            array = np.random.default_rng(index).integers(0, 2, shape).astype(dtype)
        else:
            array = np.random.default_rng(index).integers(0, 10, shape).astype(dtype)
    else:
        raise UsageError(f"bad --input '{spec}': expected FILE.npy, ones, zeros or random (optionally :SHAPE)")
    if use_torch:
        import torch

        return torch.from_numpy(np.ascontiguousarray(array)).to(device or "cpu")
    return np.ascontiguousarray(array)


def _summary(value) -> dict:
    if value is None or isinstance(value, bool | int | float):
        return {"kind": type(value).__name__, "value": value}
    import numpy as np

    entry: dict[str, Any] = {"kind": "tensor"}
    if type(value).__module__.startswith("torch"):
        entry["device"] = str(value.device)
        host = value.detach().float().cpu().numpy() if value.dtype.is_floating_point else value.cpu().numpy()
        entry["dtype"] = str(value.dtype).removeprefix("torch.")
    else:
        entry["device"] = "cuda" if type(value).__module__.startswith("cupy") else "cpu"
        host = value.get() if hasattr(value, "get") and entry["device"] == "cuda" else np.asarray(value)
        entry["dtype"] = str(host.dtype)
    entry["shape"] = list(host.shape)
    flat = host.reshape(-1)
    entry["checksum"] = float(flat.astype(np.float64).sum()) if flat.size else 0.0
    entry["first"] = [v.item() for v in flat[:4]]
    return entry


def _percentile(sorted_values: list[float], q: float) -> float:
    """Linear interpolation between the closest ranks (numpy's default), as tte-run computes it."""
    position = (len(sorted_values) - 1) * q
    low, high = math.floor(position), math.ceil(position)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (position - low)


def latency_summary(seconds: list[float]) -> dict:
    """Runs, mean, min, p50, p90, p99 and max in milliseconds (NaN when there were no runs)."""
    ordered = sorted(t * 1e3 for t in seconds)
    if not ordered:
        nan = float("nan")
        return {"runs": 0, "mean_ms": nan, "min_ms": nan, "p50_ms": nan, "p90_ms": nan, "p99_ms": nan, "max_ms": nan}
    return {
        "runs": len(ordered),
        "mean_ms": sum(ordered) / len(ordered),
        "min_ms": ordered[0],
        "p50_ms": _percentile(ordered, 0.50),
        "p90_ms": _percentile(ordered, 0.90),
        "p99_ms": _percentile(ordered, 0.99),
        "max_ms": ordered[-1],
    }


def _make_inputs(args, info) -> list:
    specs = list(args.input or ())
    if len(specs) > len(info.inputs):
        raise UsageError(f"method '{args.method}' takes {len(info.inputs)} inputs, got {len(specs)} --input")
    specs += [None] * (len(info.inputs) - len(specs))
    use_torch = args.torch
    if use_torch is None:
        use_torch = importlib.util.find_spec("torch") is not None
    device = args.device
    if device is None:
        wants_device = any(v.device and v.device.startswith("cuda") and not v.memory_planned for v in info.inputs)
        device = "cuda" if wants_device else "cpu"
    if device.startswith("cuda") and not use_torch:
        raise UsageError("CUDA inputs need torch here (pip install torch), or use --device cpu")
    return [
        _make_input(spec, v, i, use_torch, device)
        for i, (spec, v) in enumerate(zip(specs, info.inputs, strict=True))
    ]


def command_run(args) -> int:
    _activation.activate()
    for library in args.provider_library or ():
        register_provider_library(library)
    options = {}
    if args.provider:
        options["provider"] = args.provider
    if args.cuda_graphs:
        options["cuda_graphs"] = True
    for text in args.option or ():
        try:
            key, value = parse_option_text(text)
        except ValueError as exc:
            raise UsageError(f"bad --option: {exc}") from None
        options[key] = value
    program = load(args.model, data_path=args.data or None, options=options or None)
    if args.method not in program.method_names:
        raise UsageError(
            f"the program has no method '{args.method}'; its methods are: {', '.join(program.method_names)}"
        )
    inputs = _make_inputs(args, program.method(args.method))

    for _ in range(max(0, args.warmup)):
        program.run(inputs, args.method)
    times = []
    outputs = []
    progress = ProgressBar(args.num_runs, f"running '{args.method}'", args.progress)
    for i in range(args.num_runs):
        start = time.perf_counter()
        outputs = program.run(inputs, args.method)
        times.append(time.perf_counter() - start)
        progress.update(i + 1)
    progress.finish()
    latency = latency_summary(times)
    result = {
        "ok": True,
        "model": str(args.model),
        "method": args.method,
        "data_files": [str(p) for p in program.data_paths],
        "outputs": [_summary(v) for v in outputs],
        "latency": latency,
    }
    program.close()
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"{args.model}: method '{args.method}', {len(outputs)} output(s)")
    for i, entry in enumerate(result["outputs"]):
        if entry["kind"] != "tensor":
            print(f"  output {i}: {entry['kind']} {entry['value']}")
            continue
        print(
            f"  output {i}: {entry['dtype']}{entry['shape']} on {entry['device']}, "
            f"checksum {entry['checksum']:.6g}, first {entry['first']}"
        )
    print(
        f"latency over {latency['runs']} run(s): mean {latency['mean_ms']:.3f} ms, p50 {latency['p50_ms']:.3f}, "
        f"p90 {latency['p90_ms']:.3f}, p99 {latency['p99_ms']:.3f}, min {latency['min_ms']:.3f}, "
        f"max {latency['max_ms']:.3f}"
    )
    return 0


def _load_options_help() -> str:
    """The epilog of `run --help`: the plugin's load options, from its own table."""
    try:
        options = load_options()
    except Exception as exc:  # noqa: BLE001 (help must print; doctor says why the plugin did not load)
        return f"The load options are listed once the plugin loads ({exc}); see `doctor`."
    lines = ["TensorRTBackend load options (--option KEY=VALUE; bools are true or false):"]
    for option in options:
        lines.append(f"  {option.name} ({option.type}; default: {option.default})")
        lines.append(f"      {option.doc}")
    return "\n".join(lines)


def add_parser(sub) -> None:
    run = sub.add_parser(
        "run",
        help="run a method and report outputs and latency",
        epilog=_load_options_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("model", type=Path, help="the .pte file")
    run.add_argument(
        "--data", action="append", type=Path, help="a .ptd file (repeatable; default: found beside the .pte)"
    )
    run.add_argument("--method", default="forward")
    run.add_argument(
        "--input",
        action="append",
        help="one per method input, in order: FILE.npy, ones, zeros or random, optionally :SHAPE (e.g. ones:2x3); "
        "a number for scalar inputs. Default: ones of the planned shape",
    )
    run.add_argument("--num-runs", type=int, default=1)
    run.add_argument("--warmup", type=int, default=0)
    run.add_argument("--provider", help="engine provider for every TensorRTBackend delegate")
    run.add_argument("--provider-library", action="append", help="load a provider library first (repeatable)")
    run.add_argument("--cuda-graphs", action="store_true", help="replay engines through CUDA graphs")
    run.add_argument(
        "--option",
        action="append",
        metavar="KEY=VALUE",
        help="a TensorRTBackend load option (repeatable; listed below); wins over --provider and --cuda-graphs",
    )
    run.add_argument("--device", help="where inputs are made: cpu or cuda[:N] (default: where the program wants them)")
    torch_group = run.add_mutually_exclusive_group()
    torch_group.add_argument("--torch", dest="torch", action="store_true", default=None, help="make torch tensors")
    torch_group.add_argument("--numpy", dest="torch", action="store_false", help="make numpy arrays")
    run.add_argument(
        "--progress", choices=("auto", "on", "off"), default="auto", help="progress bar on stderr (auto: runs over 1 s)"
    )
    run.add_argument("--json", action="store_true")
    run.set_defaults(handler=command_run)
