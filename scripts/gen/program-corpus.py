#!/usr/bin/env python3
"""Write the seed corpora of the Program API fuzzers: .pte programs
(cpp/fuzz/corpus/program/) and .ptd data files (cpp/fuzz/corpus/data-file/).

Small programs packed by torch_tensorrt_executorch_runtime.pack from
test-engine plans, so the `test-host` provider runs them: static, dynamic and
zero-size shapes, several dtypes, two methods with chained delegates, KV-cache
aliasing, an engine that fails, a portable epilogue, device placements, and a
program with external constants (external-constants.pte, the program the .ptd
harness loads), whose .ptd and another program's are the .ptd seeds.
Needs the project venv (torch and executorch, at pack time only):

    PYTHONPATH=src .venv/bin/python scripts/gen/program-corpus.py [CORPUS_DIR]
"""

from __future__ import annotations

import pathlib
import sys

from torch_tensorrt_executorch_runtime.pack import TensorSpec, build_program, pack_program
from torch_tensorrt_executorch_runtime.testing import test_engine_spec


def add_one(shape, dtype="float32", x="x", y="y", **options):
    dims = [f"{x}:{i}" for i in range(len(shape))]
    return test_engine_spec("add_one", [TensorSpec(x, dtype, shape)], [TensorSpec(y, dtype, dims)], **options)


def programs():
    yield "add-one-static", [add_one([2, 4])], {}
    yield "add-one-dynamic", [add_one([(1, 2, 8), 4])], {}
    yield "add-one-zero-size", [add_one([(0, 2, 8), 4])], {}
    yield "add-one-int64", [add_one([3], dtype="int64")], {}
    yield "two-methods-chained", {
        "forward": [add_one([2, 4])],
        "plus_two": [add_one([3], x="x", y="y"), add_one([3], x="y", y="z")],
    }, {}
    yield "identity-three-dtypes", [
        test_engine_spec(
            "identity",
            [TensorSpec("a", "float16", [3]), TensorSpec("b", "uint8", [2, 2]), TensorSpec("c", "bool", [4])],
            [TensorSpec("p", "float16", ["a:0"]), TensorSpec("q", "uint8", ["b:0", "b:1"]),
             TensorSpec("r", "bool", ["c:0"])],
        )
    ], {}
    yield "kv-cache-alias", [
        test_engine_spec(
            "add_one",
            [TensorSpec("cache", "float32", [4])],
            [TensorSpec("cache_out", "float32", ["cache:0"])],
            aliased_io=[("cache_out", "cache", "kv_cache_update")],
        )
    ], {"alias_mode": "input"}
    yield "enqueue-fails", [add_one([2], fail={"enqueue": "test engine told to fail"})], {}
    yield "portable-epilogue", [add_one([2, 4])], {"epilogue": {"y": 2.0}, "epilogue_backend": "portable"}
    yield "device-planned", [add_one([2, 4])], {"placement": "device_planned"}
    yield "device-resident", [add_one([2, 4])], {"placement": "device_resident"}


def data_files():
    """(name, .pte or None, .ptd): programs whose constants live in a .ptd."""
    own = build_program([add_one([2, 4])], epilogue={"y": 2.0}, epilogue_backend="portable",
                        external_constants=True)
    other = build_program([add_one([2, 4], y="z")], epilogue={"z": [1.0, 2.0, 3.0, 4.0]},
                          epilogue_backend="portable", external_constants=True)
    yield "external-constants", own.program, next(iter(own.data_files.values()))
    yield "other-program", None, next(iter(other.data_files.values()))


def main(argv: list[str]) -> int:
    root = pathlib.Path(__file__).resolve().parents[2]
    corpus = pathlib.Path(argv[0]) if argv else root / "cpp" / "fuzz" / "corpus"
    programs_dir, data_dir = corpus / "program", corpus / "data-file"
    programs_dir.mkdir(parents=True, exist_ok=True)
    data_dir.mkdir(parents=True, exist_ok=True)
    total = 0
    for name, methods, options in programs():
        data = pack_program(None, methods, **options)
        (programs_dir / f"{name}.pte").write_bytes(data)
        total += len(data)
        print(f"program/{name}.pte: {len(data)} bytes")
    for name, program, data in data_files():
        if program is not None:
            (programs_dir / f"{name}.pte").write_bytes(program)
            total += len(program)
            print(f"program/{name}.pte: {len(program)} bytes")
        (data_dir / f"{name}.ptd").write_bytes(data)
        total += len(data)
        print(f"data-file/{name}.ptd: {len(data)} bytes")
    print(f"{total} bytes in {corpus}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
