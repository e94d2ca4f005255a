"""The `tte-run` command: the C++ runner, put on PATH by pip.

A wheel can put only Python console scripts on PATH, so this one replaces its
own process with the runner the wheel ships in the package's `bin/` (exec: no
Python is left in the process; arguments, signals and the exit status are the
runner's). Importing the package for it loads no plugin (`__init__` asks
`launched_as_tte_run()`): the runner loads its own. In conda, `tte-run` in
the environment's `bin/` is the runner itself.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

COMMAND = "tte-run"
RUNNER = Path(__file__).resolve().parent / "bin" / COMMAND
REINSTALL = "pip install --force-reinstall torch-tensorrt-executorch-runtime"


def launched_as_tte_run(argv: list[str] | None = None) -> bool:
    """Whether this process is the `tte-run` console script."""
    argv = sys.argv if argv is None else argv
    return bool(argv) and Path(argv[0]).name == COMMAND


def main(argv: list[str] | None = None, runner: Path = RUNNER) -> int:
    """Exec the runner with `argv` (default: this process's arguments); returns only on failure."""
    args = sys.argv[1:] if argv is None else list(argv)
    if not runner.is_file():
        print(
            f"{COMMAND}: the C++ runner is missing: expected {runner}. Reinstall the package "
            f"({REINSTALL}), or use the Python runner: torch-tensorrt-executorch run MODEL.pte",
            file=sys.stderr,
        )
        return 127
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execv(runner, [str(runner), *args])
    except OSError as exc:
        print(f"{COMMAND}: cannot start the C++ runner {runner}: {exc.strerror or exc}. Reinstall: {REINSTALL}",
              file=sys.stderr)
        return 126
    return 0  # not reached: execv returns only by raising


if __name__ == "__main__":
    sys.exit(main())
