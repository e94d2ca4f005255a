"""Take the requirements that only PyPI serves out of pyproject.toml's wheel metadata.

The wheel requires executorch and nvidia-cuda-runtime from PyPI; in conda the
plugin package (a run dependency) brings ExecuTorch's runtime and the CUDA
runtime, so install-python-package.sh takes them out of the metadata that pip
records and `pip check` checks. They are listed one per line in the
`result = [` list of [tool.scikit-build.metadata.dependencies]; the file is
read line by line (no pattern spans lines), and anything else in that shape
is refused with a message rather than guessed at.

Usage: python strip-pypi-requirements.py PYPROJECT
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

SECTION = "[tool.scikit-build.metadata.dependencies]"
PYPI_ONLY = re.compile(r'\s*"(executorch|nvidia-cuda-runtime)\b')


def strip(text: str) -> str:
    """`text` without the PyPI-only lines of the section's `result` list; SystemExit when the shape differs."""
    lines = text.splitlines(keepends=True)
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() == SECTION)
    except StopIteration:
        raise SystemExit(f"strip-pypi-requirements: pyproject.toml has no {SECTION} section") from None
    opening = None
    for i in range(start + 1, len(lines)):
        if lines[i].startswith("["):  # the next section: no list in this one
            break
        if lines[i].strip() == "result = [":
            opening = i
            break
    if opening is None:
        raise SystemExit(f"strip-pypi-requirements: {SECTION} has no `result = [` list, one requirement per line")
    closing = next((i for i in range(opening + 1, len(lines)) if lines[i].strip() == "]"), None)
    if closing is None:
        raise SystemExit(f"strip-pypi-requirements: the `result = [` list of {SECTION} has no closing `]` line")
    kept = [line for line in lines[opening + 1 : closing] if not PYPI_ONLY.match(line)]
    if len(kept) == closing - opening - 1:
        raise SystemExit("strip-pypi-requirements: no executorch or nvidia-cuda-runtime requirement to take out")
    return "".join(lines[: opening + 1] + kept + lines[closing:])


def main() -> None:
    if len(sys.argv) != 2:
        raise SystemExit("usage: strip-pypi-requirements.py PYPROJECT")
    path = Path(sys.argv[1])
    path.write_text(strip(path.read_text()))


if __name__ == "__main__":
    main()
