"""Write the serving tests' programs: add_one (static [2, 3]) and add_one_rows
(dim 0 in 1..8, 4 columns), test-engine plans with the given placement.
The tests pack them themselves; a GPU machine, which cannot pack, gets them
from here (scripts/gpu-bundle.sh).

Usage: python tests/serving/make_serving_programs.py OUT_DIR [PLACEMENT]   (default: host)
"""

from __future__ import annotations

import sys
from pathlib import Path


def make_programs(folder: Path, placement: str) -> dict[str, Path]:
    from torch_tensorrt_executorch_runtime.pack import TensorSpec, pack_program
    from torch_tensorrt_executorch_runtime.testing import test_engine_spec

    static = test_engine_spec(
        "add_one", [TensorSpec("x", "float32", [2, 3])], [TensorSpec("y", "float32", ["x:0", "x:1"])]
    )
    rows = test_engine_spec(
        "add_one", [TensorSpec("x", "float32", [(1, 2, 8), 4])], [TensorSpec("y", "float32", ["x:0", "x:1"])]
    )
    made = {"add_one": folder / "add_one.pte", "add_one_rows": folder / "add_one_rows.pte"}
    pack_program(made["add_one"], [static], placement=placement)
    pack_program(made["add_one_rows"], [rows], placement=placement)
    return made


if __name__ == "__main__":
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    make_programs(out, sys.argv[2] if len(sys.argv) > 2 else "host")
