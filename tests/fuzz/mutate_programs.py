"""A mutation campaign over whole programs through the Python API, counting
what a user would see: crashes, hangs, exceptions that are not this
package's, and errors whose message is only an ExecuTorch code.

Each mutant (.pte, sometimes with a .ptd) is loaded, described, and every
method (up to 4) is run twice with zero inputs shaped as its input info says,
in a worker process; a worker that dies is a crash (its input is saved and
the worker restarted), one that does not answer in --timeout seconds a hang.
Mutations: bytes anywhere (tests/fuzz/mutations.py), bytes inside a
TensorRTBackend blob's metadata JSON or a test-engine plan, and a program
given a .ptd written for another program (or a damaged one).

    TTE_TEST_PROVIDER_DIR=build/wheel/cpp \\
      python tests/fuzz/mutate_programs.py --seconds 600 --seed 1 SEED_DIR...

SEED_DIR holds .pte files; a .pte with a .ptd of the same stem beside it is
a program with external data (tests/fuzz/regressions/ and
cpp/fuzz/corpus/program/ hold seeds; `--pack DIR` first writes programs with
.ptd files there, which needs torch). The summary goes to stdout, and with
--json to a file. Methods may plan at most --max-planned-memory bytes (the
load option), so a campaign stays within a shared machine; 0 leaves load's
default bound (the memory available when a method loads), which is what
users get: run that under a limit on the worker's address space (`ulimit -v`)
so a mutant planning gigabytes is refused by the allocator rather than
honoured on a shared machine.

An error is *bare* when its message ends in nothing but an ExecuTorch code
("cannot load method 'forward': Error::InvalidState (0x2)"): the share of
bare errors is the figure docs/reliability.md reports, goal 0.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import pathlib
import random
import re
import select
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.fspath(pathlib.Path(__file__).resolve().parent))
from mutations import mutate, mutate_inside  # noqa: E402  (the fuzz folder is not a package)

CODE = re.compile(r"(?:Error::)?[A-Za-z]+ \(0x[0-9a-f]+\)")
BARE = re.compile(r"(?:^|: )(?:Error::)?[A-Za-z]+ \(0x[0-9a-f]+\)(?: \(the log says which step\))?$")
MAX_INPUT_BYTES = 1 << 20
BLOB_MAGICS = (b"TR01", b"TR02")
PLAN_MAGIC = b"TTE-TEST-ENGINE\n"


def classify(message: str) -> str:
    """bare | executorch-log | sentence | plugin (see the module's docstring)."""
    if BARE.search(message):
        return "bare"
    if "; ExecuTorch: " in message:
        return "executorch-log"
    if CODE.search(message):
        return "sentence"
    return "plugin"


def template(message: str) -> str:
    """The message with names, paths and numbers blanked, to group alike ones."""
    text = re.sub(r"'[^']*'", "'…'", message)
    text = re.sub(r"\d+", "#", text)
    return text[:220]


# ---- the worker: runs one mutant per request ---------------------------------


def _inputs(tte, info):
    import numpy as np

    values = []
    for value in info.inputs:
        if value.kind == "tensor":
            if value.dtype is None or value.nbytes > MAX_INPUT_BYTES or any(d < 0 for d in value.shape):
                return None
            try:
                values.append(np.zeros(value.shape, dtype=value.dtype))
            except TypeError:
                return None  # a dtype numpy lacks (bfloat16)
        elif value.kind == "int":
            values.append(1)
        elif value.kind == "double":
            values.append(1.0)
        elif value.kind == "bool":
            values.append(True)
        elif value.kind == "none":
            values.append(None)
        else:
            return None
    return values


def exercise(tte, job: dict) -> list[dict]:
    events: list[dict] = []

    def attempt(stage, call):
        try:
            result = call()
        except Exception as exc:  # the point is to see every kind
            events.append(
                {"stage": stage, "type": type(exc).__name__, "typed": isinstance(exc, tte.errors.Error),
                 "message": str(exc)}
            )
            return None, False
        return result, True

    source = pathlib.Path(job["pte"]).read_bytes() if job["from_bytes"] else job["pte"]
    data = [job["ptd"]] if job.get("ptd") else []
    program, ok = attempt(
        "open", lambda: tte.load(source, data_path=data, max_planned_memory=job["max_planned_memory"] or None)
    )
    if not ok:
        return events
    with program:
        for name in program.method_names[:4]:
            info, ok = attempt("info", lambda name=name: program.method(name))
            if not ok:
                continue
            values = _inputs(tte, info)
            if values is None:
                continue
            for _ in range(2):
                attempt("run", lambda values=values, name=name: program.run(values, name))
        attempt("describe", program.describe)
    return events


def worker_main() -> int:
    import torch_tensorrt_executorch_runtime as tte

    provider_dir = os.environ.get("TTE_TEST_PROVIDER_DIR")
    if provider_dir and "test-host" not in tte.providers.providers():
        tte.register_provider_library(pathlib.Path(provider_dir) / "libtte_test_provider_host.so")
    for line in sys.stdin:
        events = exercise(tte, json.loads(line))
        sys.stdout.write(json.dumps(events) + "\n")
        sys.stdout.flush()
    return 0


class Worker:
    def __init__(self):
        self.process = None

    def start(self):
        self.process = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--worker"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        )

    def ask(self, job: dict, timeout: float):
        """(events, None) or (None, "crash: signal N" | "hang")."""
        if self.process is None or self.process.poll() is not None:
            self.start()
        self.process.stdin.write(json.dumps(job) + "\n")
        self.process.stdin.flush()
        ready, _, _ = select.select([self.process.stdout], [], [], timeout)
        if not ready:
            self.stop()
            return None, "hang"
        line = self.process.stdout.readline()
        if not line:
            code = self.process.wait()
            self.process = None
            return None, f"crash: exit {code}" if code >= 0 else f"crash: signal {-code}"
        return json.loads(line), None

    def stop(self):
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None


# ---- the campaign ------------------------------------------------------------


def load_seeds(folders) -> list[tuple[bytes, bytes | None]]:
    seeds = []
    for folder in map(pathlib.Path, folders):
        for pte in sorted(folder.glob("*.pte")):
            ptd = pte.with_suffix(".ptd")
            seeds.append((pte.read_bytes(), ptd.read_bytes() if ptd.exists() else None))
    return seeds


def regions(data: bytes, magic: bytes, length) -> list[tuple[int, int]]:
    found, start = [], data.find(magic)
    while start >= 0:
        found.append(length(data, start))
        start = data.find(magic, start + 1)
    return [(a, b) for a, b in found if b > a]


def blob_metadata(data: bytes, at: int) -> tuple[int, int]:
    if at + 32 > len(data):
        return (0, 0)
    size = int.from_bytes(data[at + 8 : at + 12], "little")
    return (at + 32, min(len(data), at + 32 + size))


def plan_json(data: bytes, at: int) -> tuple[int, int]:
    start = at + len(PLAN_MAGIC)
    return (start, min(len(data), start + 256))


def make_mutant(rng: random.Random, seeds) -> tuple[str, bytes, bytes | None]:
    pte, ptd = rng.choice(seeds)
    with_data = [s for s in seeds if s[1] is not None]
    kind = rng.choices(["bytes", "blob", "plan", "ptd"], weights=[50, 20, 15, 15])[0]
    if kind == "blob":
        spots = regions(pte, rng.choice(BLOB_MAGICS), blob_metadata)
        if spots:
            return kind, mutate_inside(rng, pte, *rng.choice(spots)), ptd
    elif kind == "plan":
        spots = regions(pte, PLAN_MAGIC, plan_json)
        if spots:
            return kind, mutate_inside(rng, pte, *rng.choice(spots)), ptd
    elif kind == "ptd" and with_data:
        pte, ptd = rng.choice(with_data)
        other = rng.choice(with_data)[1]
        return kind, pte, other if rng.random() < 0.5 else mutate(rng, ptd, [other])
    return "bytes", mutate(rng, pte, [s[0] for s in seeds]), ptd


def pack_seeds(folder: pathlib.Path) -> None:
    """Programs with external data, for the .ptd mutations (needs torch)."""
    from torch_tensorrt_executorch_runtime.pack import TensorSpec, pack_program
    from torch_tensorrt_executorch_runtime.testing import test_engine_spec

    folder.mkdir(parents=True, exist_ok=True)
    for name, y, epilogue in (("external-a", "y", 2.0), ("external-b", "z", [1.0, 2.0, 3.0, 4.0])):
        spec = test_engine_spec("add_one", [TensorSpec("x", "float32", [2, 4])],
                                [TensorSpec(y, "float32", ["x:0", "x:1"])])
        pack_program(folder / f"{name}.pte", [spec], epilogue={y: epilogue}, epilogue_backend="portable",
                     external_constants=True)


def campaign(args) -> dict:
    rng = random.Random(args.seed)
    seeds = load_seeds(args.seed_dirs)
    if not seeds:
        raise SystemExit("no .pte seeds in " + ", ".join(args.seed_dirs))
    artifacts = pathlib.Path(args.artifacts)
    counts = collections.Counter()
    kinds = collections.Counter()
    templates = collections.Counter()
    findings = []
    worker = Worker()
    deadline = time.monotonic() + args.seconds
    with tempfile.TemporaryDirectory() as scratch:
        pte_path = pathlib.Path(scratch) / "mutant.pte"
        ptd_path = pathlib.Path(scratch) / "mutant.ptd"
        while time.monotonic() < deadline and (args.runs == 0 or counts["mutants"] < args.runs):
            kind, pte, ptd = make_mutant(rng, seeds)
            pte_path.write_bytes(pte)
            if ptd is not None:
                ptd_path.write_bytes(ptd)
            job = {"pte": str(pte_path), "ptd": str(ptd_path) if ptd is not None else None,
                   "from_bytes": rng.random() < 0.3, "max_planned_memory": args.max_planned_memory}
            counts["mutants"] += 1
            kinds[kind] += 1
            events, problem = worker.ask(job, args.timeout)
            if problem is not None:
                counts["crashes" if problem.startswith("crash") else "hangs"] += 1
                artifacts.mkdir(parents=True, exist_ok=True)
                saved = artifacts / f"{problem.split(':')[0]}-{counts['mutants']}.pte"
                saved.write_bytes(pte)
                if ptd is not None:
                    saved.with_suffix(".ptd").write_bytes(ptd)
                findings.append(f"{problem}: {saved}")
                print(f"finding: {problem}, input saved to {saved}", file=sys.stderr, flush=True)
                continue
            counts["opened"] += not any(e["stage"] == "open" for e in events)
            seen = set()
            for event in events:
                if event["message"] in seen:
                    continue  # the second run of a method that cannot run says the same
                seen.add(event["message"])
                counts["errors"] += 1
                if not event["typed"]:
                    counts["untyped"] += 1
                    findings.append(f"untyped {event['type']}: {event['message'][:200]}")
                counts[classify(event["message"])] += 1
                templates[template(event["message"])] += 1
            if counts["mutants"] % 500 == 0:
                print(f"#{counts['mutants']} mutants, {counts['errors']} errors, {counts['bare']} bare, "
                      f"{counts['crashes']} crashes", file=sys.stderr, flush=True)
    worker.stop()
    errors = counts["errors"] or 1
    return {
        "seed": args.seed,
        "seconds": args.seconds,
        "max_planned_memory": args.max_planned_memory or "default (available memory)",
        "mutants": counts["mutants"],
        "mutation_kinds": dict(kinds),
        "opened": counts["opened"],
        "crashes": counts["crashes"],
        "hangs": counts["hangs"],
        "errors": counts["errors"],
        "untyped_errors": counts["untyped"],
        "bare_code_errors": counts["bare"],
        "bare_code_share": counts["bare"] / errors,
        "errors_with_executorch_log_reason": counts["executorch-log"],
        "errors_with_step_sentence_only": counts["sentence"],
        "errors_from_the_plugin": counts["plugin"],
        "top_messages": templates.most_common(args.top),
        "findings": findings[:50],
    }


def main(argv: list[str]) -> int:
    if argv[:1] == ["--worker"]:
        return worker_main()
    root = pathlib.Path(__file__).resolve().parents[2]
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("seed_dirs", nargs="*")
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--runs", type=int, default=0, help="stop after this many mutants (0: no limit)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=60)
    parser.add_argument("--max-planned-memory", type=int, default=256 << 20,
                        help="bytes of host memory a method may plan (0: load's default bound, what is available)")
    parser.add_argument("--pack", type=pathlib.Path, help="first pack programs with .ptd files into this folder")
    parser.add_argument("--artifacts", default=root / "build" / "fuzz" / "artifacts" / "mutate-programs")
    parser.add_argument("--json", type=pathlib.Path, help="also write the summary here")
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args(argv)
    if args.pack:
        pack_seeds(args.pack)
        args.seed_dirs.append(str(args.pack))
    summary = campaign(args)
    text = json.dumps(summary, indent=1, ensure_ascii=False)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    return 1 if summary["crashes"] or summary["hangs"] or summary["untyped_errors"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
