#!/usr/bin/env python3
"""Print what ELF files need from the system they run on, and check it against a target's floors.

For each file, from `readelf` (so it reads binaries of any architecture): its
NEEDED libraries, its RUNPATH, and the newest symbol version it asks of glibc
(GLIBC_x.y) and of the C++ runtime (GLIBCXX_3.4.n). With --glibc and
--glibcxx, a newer version than the target has fails the check, naming the
file and the symbol version. With --needs, each name must be among a file's
NEEDED (the library the build is meant to link, e.g. libcudart.so.12).

Usage: scripts/ci/elf-floors.py [--glibc 2.35] [--glibcxx 3.4.30] [--needs NAME]... FILE...
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

# NEEDED and RUNPATH as scripts/conda/elf-check.py reads them (one reader of readelf's output).
_spec = importlib.util.spec_from_file_location(
    "elf_check", Path(__file__).resolve().parents[1] / "conda" / "elf-check.py")
elf_check = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(elf_check)


def version_key(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


def newest(versions: list[str]) -> str | None:
    return max(versions, key=version_key) if versions else None


def floors(path: Path) -> dict:
    _, needed, search_path, _ = elf_check.readelf(path)
    versions = subprocess.run(["readelf", "-V", "-W", str(path)], capture_output=True, text=True, check=True).stdout
    return {
        "needed": needed,
        "runpath": ":".join(search_path),
        "glibc": newest(re.findall(r"Name: GLIBC_([0-9.]+)\b", versions)),
        "glibcxx": newest(re.findall(r"Name: GLIBCXX_([0-9.]+)\b", versions)),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--glibc", help="the newest glibc the target has, e.g. 2.35")
    parser.add_argument("--glibcxx", help="the newest GLIBCXX version the target's libstdc++ has, e.g. 3.4.30")
    parser.add_argument("--needs", action="append", default=[], metavar="NAME", help="a library every file must link")
    parser.add_argument("files", nargs="+", type=Path)
    args = parser.parse_args()
    failures = []
    for path in args.files:
        found = floors(path)
        print(f"{path.name}: NEEDED {', '.join(found['needed']) or '-'}; RUNPATH {found['runpath'] or '-'}; "
              f"newest GLIBC_{found['glibc'] or '-'}, GLIBCXX_{found['glibcxx'] or '-'}")
        for limit, key, prefix in ((args.glibc, "glibc", "GLIBC_"), (args.glibcxx, "glibcxx", "GLIBCXX_")):
            if limit and found[key] and version_key(found[key]) > version_key(limit):
                failures.append(f"{path}: needs {prefix}{found[key]}, newer than the target's {prefix}{limit}")
        for name in args.needs:
            if name not in found["needed"]:
                failures.append(f"{path}: does not link {name} (NEEDED: {', '.join(found['needed'])})")
    for failure in failures:
        print(f"elf-floors: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
