"""`torch-tensorrt-executorch pack`: serialized engines into a .pte, from flags or a JSON spec."""

from __future__ import annotations

import json
from pathlib import Path

from ..pack import EngineSpec, TensorSpec, pack_program
from .usage import UsageError


def _parse_dims(text: str):
    dims: list[int | tuple[int, ...] | str] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        if ":" in part or part.startswith("<="):
            dims.append(part)  # "INPUT:DIM", or "<=N" (data-dependent, at most N): TensorSpec checks it
        elif "-" in part:
            values = part.split("-")
            if len(values) != 3:
                raise UsageError(f"bad dim '{part}': a range is MIN-OPT-MAX")
            dims.append(tuple(int(v) for v in values))
        else:
            try:
                dims.append(int(part))
            except ValueError:
                raise UsageError(f"bad dim '{part}': expected N, MIN-OPT-MAX, INPUT:DIM or <=N") from None
    return dims


def _parse_tensor(text: str, is_input: bool):
    parts = text.split(":", 2)
    if len(parts) < 2:
        raise UsageError(f"bad tensor '{text}': expected NAME:DTYPE:DIMS (dims comma-separated)")
    name, dtype = parts[0], parts[1]
    dims = _parse_dims(parts[2]) if len(parts) == 3 else []
    return TensorSpec(name, dtype, dims)


def _engine_from_json(entry: dict, base: Path):
    plan = (base / entry["engine"]).read_bytes()
    inputs = [_parse_tensor(t, True) if isinstance(t, str) else _tensor_from_json(t) for t in entry["inputs"]]
    outputs = [_parse_tensor(t, False) if isinstance(t, str) else _tensor_from_json(t) for t in entry["outputs"]]
    extra = {k: v for k, v in entry.items() if k not in ("engine", "inputs", "outputs")}
    if "aliased_io" in extra:
        extra["aliased_io"] = [tuple(a) for a in extra["aliased_io"]]
    return EngineSpec(plan, inputs, outputs, **extra)


def _tensor_from_json(entry: dict):
    shape = [tuple(d) if isinstance(d, list) else d for d in entry["shape"]]
    return TensorSpec(entry["name"], entry["dtype"], shape)


def command_pack(args) -> int:
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


def add_parser(sub) -> None:
    pack = sub.add_parser("pack", help="pack serialized engines into a .pte")
    pack.add_argument("out", type=Path, help="the .pte to write (.ptd files go beside it)")
    pack.add_argument("--spec", help="JSON: {\"methods\": {name: [{engine, inputs, outputs, ...}]}, \"placement\"}")
    pack.add_argument("--engine", help="a serialized engine (plan) file")
    pack.add_argument("--input", action="append", help="NAME:DTYPE:DIMS, dims comma-separated, each N or MIN-OPT-MAX")
    pack.add_argument(
        "--output", action="append", help="NAME:DTYPE:DIMS, dims each N, INPUT:DIM or <=N (data-dependent, at most N)"
    )
    pack.add_argument("--alias", action="append", help="OUTPUT:INPUT[:KIND], an output written into an input in place")
    pack.add_argument("--method", default="forward")
    pack.add_argument("--placement", default="host", choices=("host", "device_planned", "device_resident"))
    pack.add_argument("--device-id", type=int, default=0)
    pack.add_argument("--hardware-compatible", action="store_true")
    pack.add_argument("--target-platform")
    pack.add_argument("--weight-streaming-budget", type=int)
    pack.set_defaults(handler=command_pack)
