#!/usr/bin/env python3
"""Download one file over HTTP(S) with curl, so that a transfer cut short is not fetched the same way again.

Usage: scripts/fetch-file.py URL DEST [--sha256 HEX] [--fresh]

One attempt per run (scripts/with-retries.sh runs it again after a pause). The bytes go to
DEST.part and DEST appears only once the whole file is there and checked. A transfer that stalls
(under 1 KiB/s for 60 s) or ends early fails and leaves DEST.part behind; the next run goes on
from those bytes (a range request) under the same URL with a query added that no cache has seen
(`?refetch=...`): a cache in between that keeps serving a file cut at the same byte, as seen in CI
where every attempt and every resume of one wheel stopped there, is passed by. `--fresh` asks for
such a URL on the first attempt too (scripts/pip-refetch.py: pip's own attempts just failed).

Checks: the sha256 given; and, for PyPI's file URLs (`/packages/ab/cd/<60 hex>/NAME`), the
BLAKE2b-256 digest their path is made of. A file that fails a check is deleted with its partial
bytes, so the next attempt starts from nothing. Exit status 0 when DEST is there and checked
(at once if it already was), 1 when not, 2 for a usage error. Standard library and curl only.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

# PyPI's file URLs: /packages/<2 hex>/<2 hex>/<60 hex>/<file>, the 64 hex digits being the file's
# BLAKE2b-256 digest (how warehouse names the files it stores).
PYPI_FILE_PATH = re.compile(r"/packages/([0-9a-f]{2})/([0-9a-f]{2})/([0-9a-f]{60})/[^/]+$")


def say(message: str) -> None:
    print(f"fetch-file: {message}", file=sys.stderr, flush=True)


def blake2b_from_url(url: str) -> str | None:
    """The BLAKE2b-256 digest a PyPI file URL's path gives, or None for any other URL."""
    match = PYPI_FILE_PATH.search(urlsplit(url).path)
    return "".join(match.groups()) if match else None


def digests(path: Path) -> tuple[str, str]:
    sha256 = hashlib.sha256()
    blake2b = hashlib.blake2b(digest_size=32)
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            sha256.update(chunk)
            blake2b.update(chunk)
    return sha256.hexdigest(), blake2b.hexdigest()


def check(path: Path, url: str, sha256: str | None) -> str | None:
    """Why `path` is not the file `url` names, or None when it is."""
    got_sha256, got_blake2b = digests(path)
    if sha256 and got_sha256 != sha256.lower():
        return f"sha256 {got_sha256}, expected {sha256.lower()}"
    expected_blake2b = blake2b_from_url(url)
    if expected_blake2b and got_blake2b != expected_blake2b:
        return f"BLAKE2b-256 {got_blake2b}, the URL's path says {expected_blake2b}"
    return None


def uncached(url: str) -> str:
    """`url` with a query no cache has seen."""
    parts = urlsplit(url)
    query = f"refetch={time.time_ns()}"
    return parts._replace(query=f"{parts.query}&{query}" if parts.query else query).geturl()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("url")
    parser.add_argument("dest", type=Path)
    parser.add_argument("--sha256", help="the file's sha256, checked")
    parser.add_argument("--fresh", action="store_true", help="fetch under an uncached URL from the first attempt")
    args = parser.parse_args()
    if urlsplit(args.url).scheme not in ("http", "https"):
        parser.error(f"not an http(s) URL: {args.url}")
    if args.sha256 is not None and not re.fullmatch(r"[0-9a-fA-F]{64}", args.sha256):
        parser.error(f"--sha256 wants 64 hex digits, not {args.sha256!r}")

    dest: Path = args.dest
    if dest.exists():
        problem = check(dest, args.url, args.sha256)
        if problem is None:
            return 0
        say(f"{dest} is there but has {problem}; fetching it again")
        dest.unlink()
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = dest.with_name(dest.name + ".part")
    resumed = partial.exists() and partial.stat().st_size > 0
    url = uncached(args.url) if (args.fresh or resumed) else args.url
    if resumed:
        say(f"going on from byte {partial.stat().st_size} of {dest.name}, under {url}")
    else:
        say(f"downloading {dest.name} from {url}")
    fetched = subprocess.run(
        ["curl", "-fsSL", "--connect-timeout", "30", "--speed-limit", "1024", "--speed-time", "60",
         "-C", "-", "-o", str(partial), url],
        check=False,
    )
    if fetched.returncode == 33:  # the server ignores range requests: start again from nothing
        partial.unlink(missing_ok=True)
        say(f"the server cannot go on from part of {dest.name}; the next attempt starts from nothing")
        return 1
    if fetched.returncode != 0:
        kept = partial.stat().st_size if partial.exists() else 0
        say(f"curl failed (exit {fetched.returncode}) with {kept} bytes of {dest.name}; "
            "the next attempt goes on from them")
        return 1
    problem = check(partial, args.url, args.sha256)
    if problem is not None:
        partial.unlink()
        say(f"{dest.name} downloaded has {problem}; deleted, the next attempt starts from nothing")
        return 1
    partial.rename(dest)
    return 0


if __name__ == "__main__":
    sys.exit(main())
