#!/usr/bin/env python3
"""Print, or check, the upstream files recipe/recipe.yaml repackages.

conda-forge has neither ExecuTorch's runtime, TensorRT's Python bindings nor
dllist, so the recipe takes their PyPI files (wheels repackaged; dllist's
sdist built), each pinned by URL and sha256. This asks PyPI's JSON API (https://pypi.org/pypi/<name>/json) for the
files of the pinned versions and prints the `source:` entries to paste into
the recipe, or with --check compares them with what the recipe pins (no
download: the digests are PyPI's).

Usage: scripts/conda/pin-wheels.py [--check]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RECIPE = ROOT / "recipe" / "recipe.yaml"
PYTHONS = ["3.10", "3.11", "3.12", "3.13", "3.14"]
ARCHES = ["x86_64", "aarch64"]
# The ExecuTorch C++ runtime inside the wheel does not depend on the CPython
# version (the cp311 and cp312 wheels carry byte-identical libexecutorch.so).
EXECUTORCH_PYTHON = "3.12"


def recipe_context() -> dict[str, str]:
    block = RECIPE.read_text().split("\ncontext:\n", 1)[1].split("\n\n", 1)[0]
    return dict(re.findall(r'^  (\w+): "?([^"\n]+)"?$', block, re.M))


def pypi_files(name: str, version: str) -> dict[str, dict]:
    """{filename: {url, sha256}} of one release, from PyPI's JSON API."""
    with urllib.request.urlopen(f"https://pypi.org/pypi/{name}/json", timeout=60) as reply:
        releases = json.load(reply)["releases"]
    if version not in releases:
        raise SystemExit(f"PyPI has no {name} {version}; releases: {', '.join(sorted(releases)[-5:])}")
    files = {}
    for f in releases[version]:
        # Some mirrors answer with relative links; the file host is always this one.
        path = re.search(r"/([0-9a-f]{2}/[0-9a-f]{2}/[0-9a-f]{60}/[^/]+)$", f["url"]).group(1)
        files[f["filename"]] = {"url": f"https://files.pythonhosted.org/packages/{path}",
                                "sha256": f["digests"]["sha256"]}
    return files


def pick(files: dict[str, dict], pattern: str) -> tuple[str, dict]:
    hits = sorted(name for name in files if re.fullmatch(pattern, name))
    if len(hits) != 1:
        raise SystemExit(f"expected one file matching {pattern}, PyPI has {hits or 'none'}")
    return hits[0], files[hits[0]]


def wanted() -> list[tuple[str, str, dict]]:
    """(selector, file name, {url, sha256}) of every file the recipe should pin."""
    context = recipe_context()
    out = []
    executorch = pypi_files("executorch", context["executorch_version"])
    tag = "cp" + EXECUTORCH_PYTHON.replace(".", "")
    for arch in ARCHES:
        name, f = pick(executorch, rf"executorch-[\d.]+-{tag}-{tag}-manylinux_2_28_{arch}\.whl")
        out.append((arch, name, f))
    # TensorRT's bindings per CUDA major: NVIDIA publishes CUDA 12 ones for x86_64 only.
    for major, arches in (("13", ARCHES), ("12", ["x86_64"])):
        bindings = pypi_files(f"tensorrt-cu{major}-bindings", context["tensorrt_python_version"])
        cuda = f'match(cuda_compiler_version, ">={major},<{int(major) + 1}")'
        for arch in arches:
            for python in PYTHONS:
                tag = "cp" + python.replace(".", "")
                selector = (f'{arch} and {cuda} and match(python, "{python}.*")' if arch == "x86_64"
                            else f'{arch} and match(python, "{python}.*")')
                out.append((selector, *pick(bindings, rf"tensorrt_cu{major}_bindings-[\d.]+-{tag}-none-"
                                                      rf"manylinux_2_\d+_{arch}\.whl")))
        shim = pypi_files(f"tensorrt-cu{major}", context["tensorrt_python_version"])
        out.append((cuda, *pick(shim, rf"tensorrt_cu{major}-[\d.]+\.tar\.gz")))
    dllist = pypi_files("dllist", context["dllist_version"])
    out.append(("", *pick(dllist, r"dllist-[\d.]+\.tar\.gz")))
    return out


def recipe_pins() -> dict[str, str]:
    """Each URL in the recipe mapped to the sha256 on the line after it."""
    pins: dict[str, str] = {}
    context = recipe_context()
    lines = RECIPE.read_text().splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"\s*(?:- )?url: (https://files\.pythonhosted\.org/.+)$", line)
        if m:
            url = re.sub(r"\$\{\{ (\w+) \}\}", lambda v: context[v.group(1)], m.group(1))
            sha = re.match(r"\s*sha256: ([0-9a-f]{64})$", lines[i + 1])
            pins[url] = sha.group(1) if sha else ""
    return pins


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="compare with recipe/recipe.yaml instead of printing entries")
    args = parser.parse_args()
    files = wanted()
    if args.check:
        pins = recipe_pins()
        bad = [name for _, name, f in files if pins.get(f["url"]) != f["sha256"]]
        for _, name, f in files:
            if name in bad:
                print(f"recipe pin differs for {name}: recipe has {pins.get(f['url'], 'no entry for its URL')}, "
                      f"PyPI lists {f['sha256']}")
        extra = set(pins) - {f["url"] for _, _, f in files}
        for url in sorted(extra):
            print(f"recipe pins a file PyPI does not list for these versions: {url}")
        print(f"{len(files) - len(bad)} of {len(files)} pins match PyPI")
        return 1 if bad or extra else 0
    for selector, name, f in files:
        print(f"# {name}")
        if selector:
            print(f"  - if: {selector}\n    then:\n      url: {f['url']}\n      sha256: {f['sha256']}")
        else:
            print(f"  - url: {f['url']}\n    sha256: {f['sha256']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
