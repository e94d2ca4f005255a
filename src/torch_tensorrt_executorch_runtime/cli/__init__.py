"""The `torch-tensorrt-executorch` command (also `python -m torch_tensorrt_executorch_runtime`).

    torch-tensorrt-executorch run MODEL.pte [--data F.ptd ...] [--method M] [--input SPEC ...] [--num-runs N]
    torch-tensorrt-executorch inspect MODEL.pte [--json]
    torch-tensorrt-executorch doctor [--json]
    torch-tensorrt-executorch pack OUT.pte --engine PLAN --input x:float32:1-2-8,4 --output y:float32:x:0,4
    torch-tensorrt-executorch triton-repo MODEL.pte OUT_DIR --name NAME [--instances N] [--max-batch N]

One module per command (`run`, `inspect`, `doctor`, `pack`, `triton_repo`), each adding its
parser. Exit status: 0 on success; 1 when the command failed (doctor: the
installation is not sound); 2 for a usage error. With `--json`, stdout holds
one JSON document either way: the command's report, or {"ok": false,
"error": {"type", "message"}, ...} when it failed.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys

from .. import _logging
from . import doctor, inspect, pack, run, triton_repo
from .usage import UsageError

PROG = "torch-tensorrt-executorch"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description="Run and inspect TensorRT ExecuTorch programs.")
    parser.add_argument("--log-level", default=None, help="debug, info, warning, error or off")
    sub = parser.add_subparsers(dest="command", required=True)
    for command in (run, inspect, doctor, pack, triton_repo):
        command.add_parser(sub)
    return parser


def _print_json_failure(args, exc: BaseException, status: int) -> None:
    """With --json, a failed command still prints one JSON document on stdout."""
    if getattr(args, "json", False):
        error = {"type": type(exc).__name__, "message": str(exc) or type(exc).__name__}
        print(json.dumps({"ok": False, "command": args.command, "exit_status": status, "error": error}, indent=2))


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.log_level:
        _logging.set_log_level(args.log_level)
    if not logging.getLogger().handlers:
        logging.basicConfig(format=f"{PROG}: %(levelname)s: %(message)s")
    try:
        return args.handler(args)
    except UsageError as exc:
        _print_json_failure(args, exc, 2)
        parser.print_usage(sys.stderr)
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        _print_json_failure(args, exc, 130)
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        if _logging.get_log_level() == "debug":
            raise
        _print_json_failure(args, exc, 1)
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 1


__all__ = ["build_parser", "main"]
