#!/usr/bin/env python3
"""One pip run that gets past a wheel download the network keeps cutting short.

Usage: scripts/pip-refetch.py PYTHON -m pip install|download [PIP-ARG...]

Runs the pip command as given (its output passes through). When it fails because a download was
cut short (pip's "incomplete-download", which names the URL: seen in CI, where every attempt and
every resume of one wheel stopped at the same byte, a cache in between serving it cut), each such
file is fetched again by scripts/fetch-file.py under a URL no cache has seen and checked against
the digest its PyPI URL carries, then handed to pip so that pip does not download it again: put in
the download folder (`download -d DIR`: pip takes a file already there) or installed alone, with
--no-deps, where the command installs (same --target, --prefix, --root, --user or --python). Then
the command runs once more. Fetched files are kept in build/refetched/ of the checkout
(TTE_REFETCHED_DIR sets another folder).

Exit status: the command's last run (or its first, when nothing could be fetched again); 2 for a
usage error. Meant to run under scripts/with-retries.sh, which runs it again after a pause.
Standard library only.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, urlsplit

ROOT = Path(__file__).resolve().parents[1]
FETCH_FILE = ROOT / "scripts" / "fetch-file.py"
# Where fetched files are kept (TTE_REFETCHED_DIR for the tests).
REFETCHED = Path(os.environ.get("TTE_REFETCHED_DIR") or ROOT / "build" / "refetched")

CUT_SHORT = "incomplete-download"
URL_LINE = re.compile(r"URL: (https?://\S+)")
# pip options that say where `install` puts things, with a value and without one.
INSTALL_PLACE_VALUED = ("--target", "-t", "--prefix", "--root", "--python")
INSTALL_PLACE_FLAGS = ("--user",)
DOWNLOAD_DEST = ("--dest", "-d")


def say(message: str) -> None:
    print(f"pip-refetch: {message}", file=sys.stderr, flush=True)


def cut_short_urls(pip_stderr: str) -> list[str]:
    """The URLs of the downloads pip reports cut short, in order, each once."""
    if CUT_SHORT not in pip_stderr:
        return []
    urls = [m.group(1) for m in URL_LINE.finditer(pip_stderr)]
    return list(dict.fromkeys(urls))


def option_values(args: list[str], names: tuple[str, ...]) -> list[tuple[str, str]]:
    """(name, value) of each option in `names` given as `NAME VALUE`, `--NAME=VALUE` or `-XVALUE`."""
    found = []
    i = 0
    while i < len(args):
        arg = args[i]
        for name in names:
            if arg == name and i + 1 < len(args):
                found.append((name, args[i + 1]))
                i += 1
                break
            if name.startswith("--") and arg.startswith(name + "="):
                found.append((name, arg[len(name) + 1:]))
                break
            if not name.startswith("--") and arg.startswith(name) and len(arg) > len(name):
                found.append((name, arg[len(name):]))
                break
        i += 1
    return found


def handoff_command(python: str, command: str, args: list[str], wheel: Path) -> list[str] | None:
    """For `install`: the pip command that installs `wheel` alone where `args` install; None for `download`."""
    if command != "install":
        return None
    place = [part for name, value in option_values(args, INSTALL_PLACE_VALUED) for part in (name, value)]
    place += [flag for flag in INSTALL_PLACE_FLAGS if flag in args]
    return [python, "-m", "pip", "install", "-q", "--no-deps", *place, str(wheel)]


def download_folder(args: list[str]) -> Path:
    """Where `pip download args` puts files: its last --dest, else the current folder."""
    given = option_values(args, DOWNLOAD_DEST)
    return Path(given[-1][1]) if given else Path.cwd()


def run_pip(cmd: list[str]) -> tuple[int, str]:
    """Run pip, its stderr passed through and kept."""
    process = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True, errors="replace")
    assert process.stderr is not None
    kept = []
    for line in process.stderr:
        sys.stderr.write(line)
        kept.append(line)
    return process.wait(), "".join(kept)


def refetch(url: str) -> Path | None:
    """The file at `url`, fetched again under an uncached URL and checked, or None."""
    name = unquote(urlsplit(url).path.rsplit("/", 1)[-1])
    if not name or name in (".", ".."):
        return None
    dest = REFETCHED / name
    fetched = subprocess.run([sys.executable, str(FETCH_FILE), url, str(dest), "--fresh"], check=False)
    return dest if fetched.returncode == 0 else None


def main(argv: list[str]) -> int:
    if len(argv) < 4 or argv[1:3] != ["-m", "pip"] or argv[3] not in ("install", "download"):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    python, command, args = argv[0], argv[3], argv[4:]
    cmd = [python, "-m", "pip", command, *args]
    status, stderr = run_pip(cmd)
    urls = cut_short_urls(stderr) if status != 0 else []
    if not urls:
        return status
    for url in urls:
        say(f"pip's download was cut short; fetching it again: {url}")
        wheel = refetch(url)
        if wheel is None:
            say("could not fetch it again")
            return status
        handoff = handoff_command(python, command, args, wheel)
        if handoff is None:
            folder = download_folder(args)
            folder.mkdir(parents=True, exist_ok=True)
            shutil.copy2(wheel, folder / wheel.name)
        elif subprocess.run(handoff, check=False).returncode != 0:
            say(f"installing {wheel.name} alone failed")
            return status
    say("running pip again")
    return run_pip(cmd)[0]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
