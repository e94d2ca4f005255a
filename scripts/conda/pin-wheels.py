#!/usr/bin/env python3
"""Print the pinned upstream wheels that recipe/recipe.yaml repackages.

conda-forge has neither ExecuTorch nor Torch-TensorRT, so the recipe repackages
their PyPI wheels. This downloads each wheel with pip (the same client users
have), hashes it, and prints the `source:` entries to paste into the recipe, or
with --check compares them with what the recipe pins.

Usage: scripts/conda/pin-wheels.py [--check] [--python 3.10 3.11 ...]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PLATFORMS = {"linux-64": "x86_64", "linux-aarch64": "aarch64"}
# The ExecuTorch C++ runtime inside the wheel does not depend on the Python
# version (the cp311 and cp312 wheels carry byte-identical libexecutorch.so),
# so one wheel per platform is enough.
EXECUTORCH_PYTHON = "3.12"


def download(dist: str, version: str, python: str, arch: str, dest: Path) -> dict:
    """Fetch one wheel with pip; return its file name, PyPI URL and sha256."""
    cmd = [
        sys.executable, "-m", "pip", "download", "-vv", "--no-deps", "--only-binary=:all:",
        f"{dist}=={version}", "--python-version", python,
        "--platform", f"manylinux_2_28_{arch}", "-d", str(dest),
    ]
    log = subprocess.run(cmd, capture_output=True, text=True)
    if log.returncode != 0:
        raise SystemExit(f"pip could not download {dist}=={version} for cp{python} {arch}:\n{log.stderr[-2000:]}")
    tag = "cp" + python.replace(".", "")
    name = f"{dist.replace('-', '_')}-{version}-{tag}-{tag}-manylinux_2_28_{arch}.whl"
    urls = re.findall(r"https://files\.pythonhosted\.org/\S+/" + re.escape(name), log.stdout)
    if not urls:
        raise SystemExit(f"pip did not report a files.pythonhosted.org link for {name}")
    digest = hashlib.sha256((dest / name).read_bytes()).hexdigest()
    return {"file": name, "url": urls[0], "sha256": digest}


def recipe_pins(recipe: Path) -> dict[str, str]:
    """Map each wheel URL in the recipe to the sha256 on the line after it."""
    pins: dict[str, str] = {}
    lines = recipe.read_text().splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"\s*url: (https://files\.pythonhosted\.org/\S+\.whl)$", line)
        if m:
            sha = re.match(r"\s*sha256: ([0-9a-f]{64})$", lines[i + 1])
            pins[m.group(1)] = sha.group(1) if sha else ""
    return pins


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="compare with recipe/recipe.yaml instead of printing entries")
    parser.add_argument("--python", nargs="+", default=["3.10", "3.11", "3.12", "3.13", "3.14"],
                        help="CPython versions of the torch-tensorrt wheels")
    args = parser.parse_args()
    versions = json.loads((ROOT / "versions.json").read_text())

    wheels = []
    with tempfile.TemporaryDirectory() as tmp:
        for platform, arch in PLATFORMS.items():
            wheels.append(("executorch", platform, None,
                           download("executorch", versions["executorch"], EXECUTORCH_PYTHON, arch, Path(tmp))))
            for python in args.python:
                wheels.append(("torch-tensorrt", platform, python,
                               download("torch-tensorrt", versions["torch_tensorrt"], python, arch, Path(tmp))))

    if args.check:
        pins = recipe_pins(ROOT / "recipe" / "recipe.yaml")
        bad = 0
        for _, _, _, w in wheels:
            if pins.get(w["url"]) != w["sha256"]:
                print(f"recipe pin differs for {w['file']}: recipe has {pins.get(w['url'], 'no entry')}, "
                      f"PyPI serves {w['sha256']}")
                bad += 1
        print(f"{len(wheels) - bad} of {len(wheels)} wheel pins match PyPI")
        return 1 if bad else 0

    for dist, platform, python, w in wheels:
        arch = PLATFORMS[platform]
        cond = f"{arch}" if python is None else f'{arch} and python == "{python}"'
        print(f"# {dist}: {w['file']}")
        print(f"- if: {cond}")
        print("  then:")
        print(f"    url: {w['url']}")
        print(f"    sha256: {w['sha256']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
