#!/usr/bin/env python3
"""Generate the Python flatbuffer bindings the package's .pte reader (`pte`) reads with.

Runs the flatc bundled with the executorch wheel on that wheel's own
schema/program.fbs (which includes scalar_type.fbs), so the reader always
matches the ExecuTorch the plugin is built against, and needs neither torch
nor executorch at run time (only the `flatbuffers` package).

Usage:
  scripts/gen/pte-bindings.py [--out DIR] [--executorch-root DIR] [--flatc PATH]

--out defaults to src/torch_tensorrt_executorch_runtime/_generated in this
checkout; --executorch-root to the installed executorch package; --flatc to
<executorch-root>/data/bin/flatc.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

MODULE = "program_generated.py"
SCHEMAS = ("program.fbs", "scalar_type.fbs")


def installed_executorch_root() -> Path:
    # executorch is a namespace package: finding it imports nothing (no torch).
    spec = importlib.util.find_spec("executorch")
    if spec is None or not spec.submodule_search_locations:
        sys.exit(
            "pte-bindings: executorch is not installed in this interpreter "
            f"({sys.executable}); install executorch or pass --executorch-root"
        )
    return Path(list(spec.submodule_search_locations)[0])


def executorch_version(root: Path) -> str:
    version_file = root / "version.py"
    if version_file.is_file():
        for line in version_file.read_text().splitlines():
            if line.startswith("__version__"):
                return line.split("=", 1)[1].strip().strip("'\"")
    return "unknown"


def main() -> int:
    repo = Path(__file__).resolve().parents[2]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path,
                        default=repo / "src" / "torch_tensorrt_executorch_runtime" / "_generated")
    parser.add_argument("--executorch-root", type=Path, default=None)
    parser.add_argument("--flatc", type=Path, default=None)
    args = parser.parse_args()

    root = args.executorch_root or installed_executorch_root()
    schema_dir = root / "schema"
    for name in SCHEMAS:
        if not (schema_dir / name).is_file():
            sys.exit(f"pte-bindings: {schema_dir / name} not found (is {root} an executorch package?)")
    flatc = args.flatc or root / "data" / "bin" / "flatc"
    if not flatc.is_file():
        sys.exit(f"pte-bindings: flatc not found at {flatc}; pass --flatc")

    with tempfile.TemporaryDirectory() as scratch:
        # --gen-onefile puts every table in one module with no cross-module
        # imports, so the bindings work as a subpackage of ours.
        command = [str(flatc), "--python", "--gen-onefile", "--gen-all",
                   "-I", str(schema_dir), "-o", scratch, str(schema_dir / "program.fbs")]
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            sys.exit(f"pte-bindings: {' '.join(command)} failed:\n{result.stdout}{result.stderr}")
        generated = Path(scratch) / MODULE
        if not generated.is_file():
            sys.exit(f"pte-bindings: flatc wrote no {MODULE} (got {sorted(p.name for p in Path(scratch).iterdir())})")
        args.out.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(generated, args.out / MODULE)

    digest = hashlib.sha256()
    for name in SCHEMAS:
        digest.update((schema_dir / name).read_bytes())
    (args.out / "__init__.py").write_text(
        '"""Flatbuffer bindings generated at build time by scripts/gen/pte-bindings.py."""\n\n'
        f'EXECUTORCH_VERSION = "{executorch_version(root)}"\n'
        f'SCHEMA_SHA256 = "{digest.hexdigest()}"\n'
    )
    print(f"pte-bindings: wrote {args.out / MODULE} from {schema_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
