"""scripts/with-retries.sh: a failing network command is run again after each pause, and only then fails."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "with-retries.sh"


def run(args: list[str], pauses: str | None, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.pop("TTE_RETRY_PAUSES", None)
    if pauses is not None:
        env["TTE_RETRY_PAUSES"] = pauses
    return subprocess.run(["bash", str(SCRIPT), *args], capture_output=True, text=True, env=env, cwd=cwd, check=False)


def flaky(tmp_path: Path, failures: int, status: int = 7) -> list[str]:
    """A command that fails `failures` times (exit `status`), then succeeds; it counts its runs in a file."""
    counter = tmp_path / "runs"
    code = (f"import pathlib, sys; p = pathlib.Path({str(counter)!r}); n = int(p.read_text()) if p.exists() else 0; "
            f"p.write_text(str(n + 1)); sys.exit({status} if n < {failures} else 0)")
    return [sys.executable, "-c", code]


def runs(tmp_path: Path) -> int:
    return int((tmp_path / "runs").read_text())


def test_a_command_that_fails_twice_succeeds_on_the_third_attempt(tmp_path: Path) -> None:
    result = run(flaky(tmp_path, 2), "0 0 0", tmp_path)
    assert result.returncode == 0, result.stderr
    assert runs(tmp_path) == 3
    assert "attempt 1 of 4" in result.stderr and "attempt 2 of 4" in result.stderr
    assert "attempt 3" not in result.stderr


def test_it_gives_up_after_the_last_pause_with_the_commands_status(tmp_path: Path) -> None:
    result = run(flaky(tmp_path, 10, status=5), "0 0", tmp_path)
    assert result.returncode == 5
    assert runs(tmp_path) == 3
    assert "failed 3 times (exit 5); giving up" in result.stderr


def test_a_command_that_succeeds_runs_once_and_prints_nothing(tmp_path: Path) -> None:
    result = run(flaky(tmp_path, 0), None, tmp_path)
    assert result.returncode == 0
    assert runs(tmp_path) == 1
    assert result.stderr == ""


def test_no_pauses_means_one_attempt(tmp_path: Path) -> None:
    result = run(flaky(tmp_path, 1, status=3), "", tmp_path)
    assert result.returncode == 3
    assert runs(tmp_path) == 1


def test_bad_pauses_and_a_missing_command_are_usage_errors(tmp_path: Path) -> None:
    result = run(flaky(tmp_path, 0), "10 soon", tmp_path)
    assert result.returncode == 2
    assert "'soon', not a number of seconds" in result.stderr
    assert not (tmp_path / "runs").exists()
    assert run([], None, tmp_path).returncode == 2
