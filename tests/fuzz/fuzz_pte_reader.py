"""Fuzz the torch-free .pte reader (torch_tensorrt_executorch_runtime.pte) that
`inspect` and the .ptd search read programs with.

Any bytes must either be described or refused with PteFormatError; any other
exception, a hang or a crash is a finding. Two drivers share `check_one`:

- atheris (coverage-guided, libFuzzer flags; `pip install atheris`):
      python tests/fuzz/fuzz_pte_reader.py [libFuzzer flags] CORPUS_DIR [SEED_DIR...]
- without atheris, or with --mutate, a seeded byte-mutation loop over the
  seeds (bit flips, byte sets, truncation, splices, interesting integers):
      python tests/fuzz/fuzz_pte_reader.py --mutate --seconds 60 SEED_DIR...

The seeds are the .pte loader's (cpp/fuzz/corpus/program/). The package is
imported as a user would, so TORCH_TENSORRT_EXECUTORCH_LIBRARY must name a
built plugin when run from a source tree (scripts/ci/fuzz.sh sets it).
"""

from __future__ import annotations

import argparse
import importlib
import os
import pathlib
import random
import sys
import time

sys.path.insert(0, os.fspath(pathlib.Path(__file__).resolve().parent))
from mutations import mutate  # noqa: E402  (the fuzz folder is not a package)

_MAX_SEED_BYTES = 1 << 20


def _import_reader():
    from torch_tensorrt_executorch_runtime import pte

    return pte


def check_one(reader, data: bytes) -> None:
    """Read `data` as a .pte; raise AssertionError (or let any other exception
    escape) when the reader breaks its promise."""
    try:
        info = reader.read_program(data)
    except reader.PteFormatError as error:
        message = str(error)
        assert message and "\n" not in message, f"refusal without a one-line message: {message!r}"
        return
    assert info.file_size == len(data)
    names = info.method_names
    assert len(names) == len(info.methods)
    for method in info.methods:
        assert method.placement in (reader.HOST, reader.DEVICE_PLANNED, reader.DEVICE_RESIDENT)
        for delegate in method.delegates:
            assert delegate.payload is not None and len(delegate.payload) == delegate.payload_size
            assert 0 <= delegate.payload_offset and delegate.payload_offset + delegate.payload_size <= len(data)
            _ = delegate.target_device
        for value in method.inputs + method.outputs:
            if value.tensor is not None:
                assert all(isinstance(d, int) for d in value.tensor.sizes)
    if names:
        info.method(names[0])
    _ = info.needs_external_data
    # Locating payloads without copying them must agree with copying them.
    light = reader.read_program(data, payloads=False)
    assert [len(m.delegates) for m in light.methods] == [len(m.delegates) for m in info.methods]


def _seeds(paths) -> list[bytes]:
    seeds = []
    for path in map(pathlib.Path, paths):
        files = sorted(path.iterdir()) if path.is_dir() else [path]
        for file in files:
            if file.is_file() and file.stat().st_size <= _MAX_SEED_BYTES:
                seeds.append(file.read_bytes())
    return seeds


def run_mutation_loop(reader, seeds: list[bytes], seconds: float, seed: int, crash_dir: pathlib.Path) -> int:
    rng = random.Random(seed)
    for data in seeds:
        check_one(reader, data)
    pool = list(seeds) or [b""]
    deadline = time.monotonic() + seconds
    runs = 0
    while time.monotonic() < deadline:
        data = mutate(rng, rng.choice(pool), pool)
        try:
            check_one(reader, data)
        except BaseException:
            crash_dir.mkdir(parents=True, exist_ok=True)
            path = crash_dir / f"crash-{runs}.pte"
            path.write_bytes(data)
            print(f"finding after {runs} runs, input saved to {path}", file=sys.stderr)
            raise
        runs += 1
        if runs % 50_000 == 0:
            print(f"#{runs} runs, {time.monotonic() - deadline + seconds:.0f} s", flush=True)
    print(f"done: {runs} runs in {seconds:.0f} s, no finding", flush=True)
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--mutate", action="store_true")
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--seed", type=int, default=0)
    root = pathlib.Path(__file__).resolve().parents[2]
    parser.add_argument("--crash-dir", type=pathlib.Path, default=root / "build" / "fuzz" / "artifacts" / "pte-reader")
    known, rest = parser.parse_known_args(argv)
    try:
        import atheris
    except ImportError:
        atheris = None

    if known.mutate or atheris is None:
        if atheris is None and not known.mutate:
            print("atheris is not installed: running the byte-mutation loop", file=sys.stderr)
        reader = _import_reader()
        seeds = _seeds([a for a in rest if not a.startswith("-")])
        return run_mutation_loop(reader, seeds, known.seconds, known.seed, known.crash_dir)

    with atheris.instrument_imports(include=["torch_tensorrt_executorch_runtime", "flatbuffers"]):
        reader = _import_reader()
        # The generated bindings load on first use: load them here, instrumented too.
        importlib.import_module("torch_tensorrt_executorch_runtime._generated.program_generated")

    def test_one_input(data: bytes) -> None:
        check_one(reader, data)

    atheris.Setup([sys.argv[0], *rest], test_one_input)
    atheris.Fuzz()
    return 0


if __name__ == "__main__":
    sys.path.insert(0, os.fspath(pathlib.Path(__file__).resolve().parents[2] / "src"))
    sys.exit(main(sys.argv[1:]))
