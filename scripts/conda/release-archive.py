#!/usr/bin/env python3
"""Make this project's release archive, the source the conda recipe names.

The archive of a release is `git archive` of its tag, every file under one
folder, torch-tensorrt-executorch-<version>/ (the version is that commit's
versions.json "project"), compressed with gzip without a name or a time in
its header (`gzip -n -9`). Every file's time is the commit's, so one commit
always gives the same bytes and the same sha256; by hand:
  git archive --format=tar --prefix=torch-tensorrt-executorch-0.2.0/ v0.2.0 | gzip -n -9
Attach the file to the release; recipe/recipe.yaml names its URL (context
project_url) and its sha256 (release_sha256).

  scripts/conda/release-archive.py v0.2.0 --record
      the archive of tag v0.2.0, its sha256 printed and written into
      recipe/recipe.yaml (release_sha256, and the commit it came from)
  scripts/conda/release-archive.py [REV]
      the archive of any commit (default HEAD), sha256 printed
  scripts/conda/release-archive.py --worktree
      the files git does not ignore, as they are in the working tree, in the
      same layout and with HEAD's time (what the offline build packs when the
      checkout differs from HEAD)

The archive goes to build/release/ unless -o says where. Prints
"<sha256>  <path>" and nothing else on stdout.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import re
import subprocess
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RECIPE = ROOT / "recipe" / "recipe.yaml"
NAME = "torch-tensorrt-executorch"
# `git archive` settings that user or system configuration could change, at git's defaults.
GIT_ARCHIVE = ["git", "-c", "tar.umask=0002", "-c", "core.autocrlf=false", "-c", "core.eol=lf"]


def git(*args: str, root: Path = ROOT) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


def commit_of(rev: str, root: Path = ROOT) -> str:
    return git("rev-parse", "--verify", f"{rev}^{{commit}}", root=root).strip()


def version_at(commit: str, root: Path = ROOT) -> str:
    return json.loads(git("show", f"{commit}:versions.json", root=root))["project"]


def gzip_n(data: bytes) -> bytes:
    """`gzip -n -9`: no file name and no time in the header. GNU gzip's output has not changed
    in decades, so anyone can remake the archive with git and gzip alone."""
    return subprocess.run(["gzip", "-n", "-9", "-c"], input=data, capture_output=True, check=True).stdout


def archive_commit(rev: str, root: Path = ROOT) -> tuple[bytes, str, str]:
    """(the .tar.gz bytes, the commit, the version) of `git archive` of one commit."""
    commit = commit_of(rev, root)
    version = version_at(commit, root)
    tar = subprocess.run([*GIT_ARCHIVE, "archive", "--format=tar", f"--prefix={NAME}-{version}/", commit],
                         cwd=root, capture_output=True, check=True).stdout
    return gzip_n(tar), commit, version


def worktree_is_head(root: Path = ROOT) -> bool:
    """Whether the files git does not ignore are exactly HEAD's (nothing changed, added or removed)."""
    status = subprocess.run(["git", "--no-optional-locks", "status", "--porcelain", "--untracked-files=all"],
                            cwd=root, capture_output=True, text=True, check=True).stdout
    return not status.strip()


def archive_worktree(root: Path = ROOT) -> tuple[bytes, str, str]:
    """(the .tar.gz bytes, HEAD's commit, the version) of the working tree's files that git
    does not ignore, laid out as `git archive` lays out a commit."""
    commit = commit_of("HEAD", root)
    version = json.loads((root / "versions.json").read_text())["project"]
    mtime = int(git("show", "-s", "--format=%ct", commit, root=root).strip())
    listed = subprocess.run(["git", "ls-files", "-z", "-co", "--exclude-standard"], cwd=root,
                            capture_output=True, check=True).stdout.decode().split("\0")
    names = sorted({n for n in listed if n and ((root / n).is_symlink() or (root / n).is_file())})
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        folders: set[str] = set()
        for name in names:
            parts = name.split("/")[:-1]
            for depth in range(len(parts) + 1):
                folder = "/".join([f"{NAME}-{version}", *parts[:depth]])
                if folder not in folders:
                    folders.add(folder)
                    info = tarfile.TarInfo(folder + "/")
                    info.type, info.mode = tarfile.DIRTYPE, 0o775
                    _own(info, mtime)
                    tar.addfile(info)
            path = root / name
            info = tarfile.TarInfo(f"{NAME}-{version}/{name}")
            _own(info, mtime)
            if path.is_symlink():
                info.type, info.mode, info.linkname = tarfile.SYMTYPE, 0o777, str(path.readlink())
                tar.addfile(info)
                continue
            data = path.read_bytes()
            # git records only the executable bit; its default umask (0002) gives these modes.
            info.size, info.mode = len(data), 0o775 if path.stat().st_mode & 0o100 else 0o664
            tar.addfile(info, io.BytesIO(data))
    return gzip_n(out.getvalue()), commit, version


def _own(info: tarfile.TarInfo, mtime: int) -> None:
    info.mtime, info.uid, info.gid, info.uname, info.gname = mtime, 0, 0, "root", "root"


def record(sha256: str, commit: str, rev: str, recipe: Path = RECIPE) -> None:
    """Write the archive's sha256, and the commit it is of, into the recipe's context."""
    text = recipe.read_text()
    what = f"commit {commit}" if commit.startswith(rev) else f"{rev} (commit {commit})"
    pattern = r"^(  # release_sha256: the archive of ).*\n  release_sha256: [0-9a-f]{64}$"
    new, count = re.subn(pattern, lambda m: f"{m.group(1)}{what}.\n  release_sha256: {sha256}", text, flags=re.M)
    if count != 1:
        raise SystemExit(f"release-archive: {recipe} has no 'release_sha256:' line under its comment to update")
    recipe.write_text(new)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rev", nargs="?", default="HEAD", help="tag or commit (default HEAD)")
    parser.add_argument("--worktree", action="store_true", help="the working tree's files instead of a commit")
    parser.add_argument("-o", "--output", type=Path, help="where to write the archive")
    parser.add_argument("--record", action="store_true", help="write the sha256 into recipe/recipe.yaml")
    args = parser.parse_args()
    if args.worktree and (args.record or args.rev != "HEAD"):
        parser.error("--worktree packs the working tree: it takes no REV and is never recorded")
    data, commit, version = archive_worktree() if args.worktree else archive_commit(args.rev)
    output = args.output or ROOT / "build" / "release" / f"{NAME}-{version}.tar.gz"
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_bytes(data)
    sha256 = hashlib.sha256(data).hexdigest()
    if args.record:
        record(sha256, commit, args.rev)
        print(f"release-archive: recorded in {RECIPE.relative_to(ROOT)}", file=sys.stderr)
    print(f"{sha256}  {output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
