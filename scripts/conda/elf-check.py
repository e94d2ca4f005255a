#!/usr/bin/env python3
"""Check that installed ELF files find their libraries inside an install tree.

For each file: the ELF machine must match, every RUNPATH/RPATH entry must be
$ORIGIN-relative and stay inside the tree, and every NEEDED library must
resolve, through those entries alone (no LD_LIBRARY_PATH, no system paths),
to a file inside the tree, except the C library family, which always comes
from the system. Libraries found that way are checked the same way in turn.
A NEEDED name starting with a --forbid prefix fails the check (an abi3
extension must not link libpython). Reads `readelf` output, so it also
checks binaries for another architecture.

Usage: scripts/conda/elf-check.py --root DIR [--machine AArch64] [--system NAME]... [--forbid PREFIX]... FILE...
Exit status 1 when any check fails; the report names the file and the reason.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

# Never shipped by conda or wheels: glibc's own libraries and the loader.
GLIBC = {
    "libc.so.6", "libm.so.6", "libdl.so.2", "libpthread.so.0", "librt.so.1", "libutil.so.1",
    "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1",
}
# The CUDA driver is the system's, and nothing should name it directly.
DRIVER = {"libcuda.so.1"}


def readelf(path: Path) -> tuple[str, list[str], list[str], str]:
    """(machine, NEEDED names, search-path entries, 'RUNPATH'|'RPATH'|'')."""
    header = subprocess.run(["readelf", "-h", str(path)], capture_output=True, text=True, check=True)
    machine = re.search(r"Machine:\s+(.+)", header.stdout).group(1).strip()
    dynamic = subprocess.run(["readelf", "-d", str(path)], capture_output=True, text=True,
                             check=True).stdout
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[(.+?)\]", dynamic)
    kind, entries = "", []
    for tag in ("RUNPATH", "RPATH"):
        m = re.search(rf"\({tag}\)\s+Library (?:runpath|rpath): \[(.*?)\]", dynamic)
        if m:
            kind, entries = tag, [e for e in m.group(1).split(":") if e]
            break
    return machine, needed, entries, kind


def expand(entry: str, origin: Path) -> Path | None:
    """The directory an entry names, or None when it is not $ORIGIN-relative."""
    for token in ("$ORIGIN", "${ORIGIN}"):
        if entry == token or entry.startswith(token + "/"):
            return Path(os.path.normpath(str(origin) + entry[len(token):]))
    return None


def inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def check(files: list[Path], root: Path, machine: str | None, system: set[str],
          forbidden: tuple[str, ...] = ()) -> int:
    """Walk each file's load tree breadth-first, as the loader does."""
    root = root.resolve()
    problems = 0
    reported: set[Path] = set()
    for start in files:
        # The loader reuses an object already loaded under the same soname
        # before searching, whatever the asking object's search path is.
        loaded: dict[str, Path] = {}
        queue = [start.resolve()]
        visited: set[Path] = set()
        while queue:
            path = queue.pop(0)
            if path.resolve() in visited:
                continue
            visited.add(path.resolve())
            errors, lines, found = inspect(path, root, machine, system, loaded, forbidden)
            for name, hit in found:
                loaded.setdefault(name, hit)
                queue.append(hit)
            if path.resolve() in reported and not errors:
                continue
            reported.add(path.resolve())
            shown = path.relative_to(root) if inside(path, root) else path
            print(f"[{'FAIL' if errors else 'ok'}] {shown}: {lines}")
            for error in errors:
                print(f"  error: {error}")
            problems += len(errors)
    return problems


def inspect(path: Path, root: Path, machine: str | None, system: set[str], loaded: dict[str, Path],
            forbidden: tuple[str, ...] = ()) -> tuple[list[str], str, list[tuple[str, Path]]]:
    """Errors, a one-line summary and the (name, path) dependencies found in the tree."""
    found_machine, needed, entries, kind = readelf(path)
    errors = []
    if machine and found_machine != machine:
        errors.append(f"machine is {found_machine}, expected {machine}")
    # $ORIGIN is the directory of the path the loader opened (for a
    # symlink, the link's own directory, not its target's).
    dirs = []
    for entry in entries:
        where = expand(entry, path.parent)
        if where is None:
            errors.append(f"{kind} entry '{entry}' is not $ORIGIN-relative")
        elif not inside(where, root):
            errors.append(f"{kind} entry '{entry}' leaves {root} (it is {where})")
        else:
            dirs.append(where)
    parts, found = [], []
    for name in needed:
        if name.startswith(forbidden):
            errors.append(f"links {name}, which it must not")
            continue
        if name in GLIBC or name in system:
            parts.append(f"{name} (system)")
        elif name in DRIVER:
            errors.append(f"links the CUDA driver {name} directly")
        elif name in loaded and not any((d / name).exists() for d in dirs):
            parts.append(f"{name} (already loaded)")
        else:
            hit = next((d / name for d in dirs if (d / name).exists()), None)
            if hit is None:
                errors.append(f"NEEDED {name} is not found through {kind or 'an empty search path'} "
                              f"{':'.join(entries)}")
            elif not inside(hit.resolve(), root):
                errors.append(f"NEEDED {name} resolves outside {root}: {hit.resolve()}")
            else:
                parts.append(f"{name} -> {hit.relative_to(root)}")
                found.append((name, hit))
    summary = (f"{found_machine}, {kind or 'no search path'} {':'.join(entries) or '-'}; "
               + ", ".join(parts))
    return errors, summary, found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, required=True, help="the install tree (a prefix or site-packages)")
    parser.add_argument("--machine", help="expected 'Machine:' of readelf -h, e.g. 'AArch64'")
    parser.add_argument("--system", action="append", default=[], metavar="NAME",
                        help="a library the system provides (e.g. libstdc++.so.6 for wheels); repeatable")
    parser.add_argument("--forbid", action="append", default=[], metavar="PREFIX",
                        help="a NEEDED name prefix that fails the check (e.g. libpython); repeatable")
    parser.add_argument("files", nargs="+", type=Path)
    args = parser.parse_args()
    problems = check(args.files, args.root, args.machine, set(args.system), tuple(args.forbid))
    if problems:
        print(f"elf-check: {problems} problem(s)")
        return 1
    print("elf-check: every NEEDED library resolves inside the tree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
