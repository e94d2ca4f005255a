"""`torch-tensorrt-executorch triton-repo`: a Triton model repository from a .pte (serving/triton_repository)."""

from __future__ import annotations

from pathlib import Path

from .. import _activation
from ..serving.signature import SignatureError
from ..serving.triton_repository import write_triton_repository
from .usage import UsageError


def command_triton_repo(args) -> int:
    _activation.activate()
    if args.instances < 1:
        raise UsageError(f"--instances must be at least 1, got {args.instances}")
    if args.max_batch < 0:
        raise UsageError(f"--max-batch must be 0 (no batching) or more, got {args.max_batch}")
    try:
        model_dir = write_triton_repository(
            args.model,
            args.out_dir,
            args.name,
            method=args.method,
            instances=args.instances,
            provider=args.provider,
            provider_libraries=args.provider_library or (),
            max_batch=args.max_batch,
            kind=args.instance_kind,
        )
    except SignatureError as exc:
        raise UsageError(str(exc)) from exc
    print(f"wrote Triton model '{args.name}' to {model_dir}")
    print(f"serve it: tritonserver --model-repository={Path(args.out_dir).resolve()}")
    return 0


def add_parser(sub) -> None:
    cmd = sub.add_parser("triton-repo", help="write a Triton model repository (Python backend) serving a .pte")
    cmd.add_argument("model", type=Path, help="the .pte file")
    cmd.add_argument("out_dir", type=Path, help="the model repository (created; other models in it are kept)")
    cmd.add_argument("--name", required=True, help="the model's name in Triton")
    cmd.add_argument("--method", default="forward", help="the method served (default: forward)")
    cmd.add_argument("--instances", type=int, default=1, help="model instances Triton runs (default: 1)")
    cmd.add_argument("--provider", help="engine provider for every TensorRTBackend delegate")
    cmd.add_argument(
        "--provider-library", action="append", help="a provider library the model loads first (repeatable)"
    )
    cmd.add_argument(
        "--max-batch",
        type=int,
        default=0,
        help="batch requests along dim 0 up to N (every input's dim 0 must vary up to N); default 0: no batching",
    )
    cmd.add_argument(
        "--instance-kind",
        choices=("cpu", "gpu"),
        help="Triton instance kind (default: cpu for a host provider, such as test-host; gpu otherwise)",
    )
    cmd.set_defaults(handler=command_triton_repo)
