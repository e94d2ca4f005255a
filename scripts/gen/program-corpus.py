#!/usr/bin/env python3
"""Write the seed corpus of the .pte loading fuzzer (cpp/fuzz/corpus/program/).

Small programs packed by torch_tensorrt_executorch_runtime.pack from
test-engine plans, so the `test-host` provider runs them: static, dynamic and
zero-size shapes, several dtypes, two methods with chained delegates, KV-cache
aliasing, an engine that fails, a portable epilogue, and device placements.
Needs the project venv (torch and executorch, at pack time only):

    PYTHONPATH=src .venv/bin/python scripts/gen/program-corpus.py [OUT_DIR]
"""

from __future__ import annotations

import pathlib
import sys

from torch_tensorrt_executorch_runtime.pack import TensorSpec, pack_program
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


def main(argv: list[str]) -> int:
    root = pathlib.Path(__file__).resolve().parents[2]
    out = pathlib.Path(argv[0]) if argv else root / "cpp" / "fuzz" / "corpus" / "program"
    out.mkdir(parents=True, exist_ok=True)
    total = 0
    for name, methods, options in programs():
        data = pack_program(None, methods, **options)
        (out / f"{name}.pte").write_bytes(data)
        total += len(data)
        print(f"{name}.pte: {len(data)} bytes")
    print(f"{total} bytes in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
