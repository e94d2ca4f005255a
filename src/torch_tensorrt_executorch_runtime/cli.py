"""The `torch-tensorrt-executorch` command (also `python -m torch_tensorrt_executorch_runtime`).

    torch-tensorrt-executorch run MODEL.pte [--data F.ptd ...] [--method M] [--input SPEC ...] [--num-runs N]
    torch-tensorrt-executorch inspect MODEL.pte [--json]
    torch-tensorrt-executorch doctor [--json]
    torch-tensorrt-executorch pack OUT.pte --engine PLAN --input x:float32:1-2-8,4 --output y:float32:x:0,4

Exit status: 0 on success; 1 when the command failed (doctor: the installation
is not sound); 2 for a usage error.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import sys
import time
from pathlib import Path

PROG = "torch-tensorrt-executorch"

# numpy dtype names of the ExecuTorch dtypes a CLI input can be made of.
_NUMPY_DTYPES = {
    "float32": "float32",
    "float16": "float16",
    "float64": "float64",
    "int8": "int8",
    "int16": "int16",
    "int32": "int32",
    "int64": "int64",
    "uint8": "uint8",
    "uint16": "uint16",
    "uint32": "uint32",
    "uint64": "uint64",
    "bool": "bool",
}


class UsageError(Exception):
    pass


# ---- progress -------------------------------------------------------------------


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


# ---- run ------------------------------------------------------------------------------


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
    kind, _, shape_text = (spec or "ones").partition(":")
    shape = _shape_of(shape_text) if shape_text else tuple(info.shape)
    if kind.endswith(".npy") or Path(kind).suffix == ".npy":
        array = np.load(spec)
    elif kind in ("ones", "zeros", "random", "rand"):
        if info.dtype == "bfloat16":
            if not use_torch:
                raise UsageError(f"{where} is bfloat16, which numpy cannot make: install torch")
            import torch

            maker = {"ones": torch.ones, "zeros": torch.zeros}.get(kind, torch.rand)
            return maker(shape, dtype=torch.bfloat16, device=device or "cpu")
        if info.dtype not in _NUMPY_DTYPES:
            raise UsageError(f"{where} has dtype {info.dtype}, which the CLI cannot make; pass a .npy file")
        dtype = np.dtype(_NUMPY_DTYPES[info.dtype])
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

    entry = {"kind": "tensor"}
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
    if not sorted_values:
        return float("nan")
    position = (len(sorted_values) - 1) * q
    low, high = math.floor(position), math.ceil(position)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (position - low)


def command_run(args) -> int:
    import torch_tensorrt_executorch_runtime as tte

    tte.activate()
    for library in args.provider_library or ():
        tte.register_provider_library(library)
    options = {}
    if args.provider:
        options["provider"] = args.provider
    if args.cuda_graphs:
        options["cuda_graphs"] = True
    program = tte.load(args.model, data_path=args.data or None, options=options or None)
    if args.method not in program.method_names:
        raise UsageError(f"the program has no method '{args.method}'; its methods are: {', '.join(program.method_names)}")
    info = program.method(args.method)
    specs = list(args.input or ())
    if len(specs) > len(info.inputs):
        raise UsageError(f"method '{args.method}' takes {len(info.inputs)} inputs, got {len(specs)} --input")
    specs += [None] * (len(info.inputs) - len(specs))
    use_torch = args.torch
    if use_torch is None:
        use_torch = _torch_available()
    device = args.device
    if device is None:
        wants_device = any(v.device and v.device.startswith("cuda") and not v.memory_planned for v in info.inputs)
        device = "cuda" if wants_device else "cpu"
    if device.startswith("cuda") and not use_torch:
        raise UsageError("CUDA inputs need torch here (pip install torch), or use --device cpu")
    inputs = [_make_input(spec, v, i, use_torch, device) for i, (spec, v) in enumerate(zip(specs, info.inputs))]

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
    ordered = sorted(t * 1e3 for t in times)
    latency = {
        "runs": len(ordered),
        "mean_ms": sum(ordered) / len(ordered) if ordered else float("nan"),
        "min_ms": ordered[0] if ordered else float("nan"),
        "p50_ms": _percentile(ordered, 0.50),
        "p90_ms": _percentile(ordered, 0.90),
        "p99_ms": _percentile(ordered, 0.99),
        "max_ms": ordered[-1] if ordered else float("nan"),
    }
    result = {
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


def _torch_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("torch") is not None


# ---- inspect / doctor ------------------------------------------------------------


def command_inspect(args) -> int:
    from . import _inspect

    report = _inspect.collect(Path(args.model), try_load=not args.no_load)
    print(json.dumps(report, indent=2, default=str) if args.json else _inspect.format_text(report))
    return 0


def command_doctor(args) -> int:
    from . import _doctor

    return _doctor.run(args.json)


# ---- pack -------------------------------------------------------------------------------


def _parse_dims(text: str):
    dims = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        if ":" in part:
            dims.append(part)
        elif "-" in part:
            values = part.split("-")
            if len(values) != 3:
                raise UsageError(f"bad dim '{part}': a range is MIN-OPT-MAX")
            dims.append(tuple(int(v) for v in values))
        else:
            dims.append(int(part))
    return dims


def _parse_tensor(text: str, is_input: bool):
    from .pack import TensorSpec

    parts = text.split(":", 2)
    if len(parts) < 2:
        raise UsageError(f"bad tensor '{text}': expected NAME:DTYPE:DIMS (dims comma-separated)")
    name, dtype = parts[0], parts[1]
    dims = _parse_dims(parts[2]) if len(parts) == 3 else []
    return TensorSpec(name, dtype, dims)


def _engine_from_json(entry: dict, base: Path):
    from .pack import EngineSpec

    plan = (base / entry["engine"]).read_bytes()
    inputs = [_parse_tensor(t, True) if isinstance(t, str) else _tensor_from_json(t) for t in entry["inputs"]]
    outputs = [_parse_tensor(t, False) if isinstance(t, str) else _tensor_from_json(t) for t in entry["outputs"]]
    extra = {k: v for k, v in entry.items() if k not in ("engine", "inputs", "outputs")}
    if "aliased_io" in extra:
        extra["aliased_io"] = [tuple(a) for a in extra["aliased_io"]]
    return EngineSpec(plan, inputs, outputs, **extra)


def _tensor_from_json(entry: dict):
    from .pack import TensorSpec

    shape = [tuple(d) if isinstance(d, list) else d for d in entry["shape"]]
    return TensorSpec(entry["name"], entry["dtype"], shape)


def command_pack(args) -> int:
    from .pack import EngineSpec, pack_program

    if args.spec:
        spec_path = Path(args.spec)
        spec = json.loads(spec_path.read_text())
        methods = {
            name: [_engine_from_json(e, spec_path.parent) for e in engines]
            for name, engines in spec.get("methods", {}).items()
        }
        placement = spec.get("placement", args.placement)
    else:
        if not args.engine or not args.input or not args.output:
            raise UsageError("pack needs --spec FILE.json, or --engine PLAN with --input and --output")
        aliases = []
        for alias in args.alias or ():
            parts = alias.split(":")
            if len(parts) not in (2, 3):
                raise UsageError(f"bad --alias '{alias}': expected OUTPUT:INPUT[:KIND]")
            aliases.append(tuple(parts))
        extra = {}
        if args.target_platform:
            extra["target_platform"] = args.target_platform
        engine = EngineSpec(
            Path(args.engine).read_bytes(),
            [_parse_tensor(t, True) for t in args.input],
            [_parse_tensor(t, False) for t in args.output],
            aliased_io=aliases,
            device_id=args.device_id,
            hardware_compatible=args.hardware_compatible,
            weight_streaming_budget=args.weight_streaming_budget,
            **extra,
        )
        methods = {args.method: [engine]}
        placement = args.placement
    data = pack_program(args.out, methods, placement=placement)
    print(f"wrote {args.out} ({len(data)} bytes, methods: {', '.join(methods)}, placement {placement})")
    return 0


# ---- entry point ---------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description="Run and inspect TensorRT ExecuTorch programs.")
    parser.add_argument("--log-level", default=None, help="debug, info, warning, error or off")
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="run a method and report outputs and latency")
    run.add_argument("model", type=Path, help="the .pte file")
    run.add_argument("--data", action="append", type=Path, help="a .ptd file (repeatable; default: found beside the .pte)")
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
    run.add_argument("--device", help="where inputs are made: cpu or cuda[:N] (default: where the program wants them)")
    torch_group = run.add_mutually_exclusive_group()
    torch_group.add_argument("--torch", dest="torch", action="store_true", default=None, help="make torch tensors")
    torch_group.add_argument("--numpy", dest="torch", action="store_false", help="make numpy arrays")
    run.add_argument(
        "--progress", choices=("auto", "on", "off"), default="auto", help="progress bar on stderr (auto: runs over 1 s)"
    )
    run.add_argument("--json", action="store_true")
    run.set_defaults(handler=command_run)

    inspect = sub.add_parser("inspect", help="describe a .pte and say whether it can run here")
    inspect.add_argument("model", type=Path)
    inspect.add_argument("--json", action="store_true")
    inspect.add_argument("--no-load", action="store_true", help="only static checks; do not try to load the methods")
    inspect.set_defaults(handler=command_inspect)

    doctor = sub.add_parser("doctor", help="check the installation")
    doctor.add_argument("--json", action="store_true")
    doctor.set_defaults(handler=command_doctor)

    pack = sub.add_parser("pack", help="pack serialized engines into a .pte")
    pack.add_argument("out", type=Path, help="the .pte to write (.ptd files go beside it)")
    pack.add_argument("--spec", help="JSON: {\"methods\": {name: [{engine, inputs, outputs, ...}]}, \"placement\"}")
    pack.add_argument("--engine", help="a serialized engine (plan) file")
    pack.add_argument("--input", action="append", help="NAME:DTYPE:DIMS, dims comma-separated, each N or MIN-OPT-MAX")
    pack.add_argument("--output", action="append", help="NAME:DTYPE:DIMS, dims each N or INPUT:DIM")
    pack.add_argument("--alias", action="append", help="OUTPUT:INPUT[:KIND], an output written into an input in place")
    pack.add_argument("--method", default="forward")
    pack.add_argument("--placement", default="host", choices=("host", "device_planned", "device_resident"))
    pack.add_argument("--device-id", type=int, default=0)
    pack.add_argument("--hardware-compatible", action="store_true")
    pack.add_argument("--target-platform")
    pack.add_argument("--weight-streaming-budget", type=int)
    pack.set_defaults(handler=command_pack)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    from . import _logging

    if args.log_level:
        _logging.set_log_level(args.log_level)
    if not logging.getLogger().handlers:
        logging.basicConfig(format=f"{PROG}: %(levelname)s: %(message)s")
    try:
        return args.handler(args)
    except UsageError as exc:
        parser.print_usage(sys.stderr)
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        if _logging.get_log_level() == "debug":
            raise
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
