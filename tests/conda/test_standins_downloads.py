"""The stand-ins' pip downloads (scripts/conda/standins.py pip_download): a failure is tried again
through scripts/with-retries.sh and scripts/pip-refetch.py, except where the question was whether
PyPI has a release at all (pip's "No matching distribution"), which is answered at once. Commands
are recorded, not run."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def standins(monkeypatch):
    spec = importlib.util.spec_from_file_location("standins_downloads_under_test",
                                                  ROOT / "scripts" / "conda" / "standins.py")
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def recorder(monkeypatch, standins, first_status: int, first_stderr: str, retried_status: int = 0) -> list:
    """Record every command; the plain pip run answers first_status/first_stderr, the one through
    with-retries retried_status."""
    calls: list[list[str]] = []

    def fake_run(cmd, *args, **kwargs):
        calls.append(list(cmd))
        status = retried_status if cmd[0] == standins.WITH_RETRIES else first_status
        if kwargs.get("check") and status != 0:
            raise subprocess.CalledProcessError(status, cmd)
        return subprocess.CompletedProcess(cmd, status, "", first_stderr)

    monkeypatch.setattr(standins.subprocess, "run", fake_run)
    return calls


def test_a_download_goes_through_with_retries(monkeypatch, standins):
    calls = recorder(monkeypatch, standins, 1, "")
    assert standins.pip_download(["--no-deps", "numpy==2.4.6"]) is True
    assert len(calls) == 1 and calls[0][:2] == [standins.WITH_RETRIES, standins.PIP_REFETCH]
    assert calls[0][2:6] == [sys.executable, "-m", "pip", "download"] and calls[0][-1] == "numpy==2.4.6"
    assert Path(standins.WITH_RETRIES).is_file() and Path(standins.PIP_REFETCH).is_file()


def test_a_release_pypi_does_not_have_is_answered_without_retries(monkeypatch, standins):
    calls = recorder(monkeypatch, standins, 1, "ERROR: No matching distribution found for numpy==2.4.6\n")
    assert standins.pip_download(["numpy==2.4.6"], missing_ok=True) is False
    assert len(calls) == 1 and calls[0][0] == sys.executable


def test_a_question_that_fails_otherwise_is_retried(monkeypatch, standins):
    calls = recorder(monkeypatch, standins, 2, "ERROR: Could not install packages due to an OSError: "
                                               "Connection reset by peer\n")
    assert standins.pip_download(["numpy==2.4.6"], missing_ok=True) is True
    assert [c[0] for c in calls] == [sys.executable, standins.WITH_RETRIES]


def test_a_retried_download_that_still_fails_raises(monkeypatch, standins):
    recorder(monkeypatch, standins, 2, "network down", retried_status=1)
    with pytest.raises(subprocess.CalledProcessError):
        standins.pip_download(["numpy==2.4.6"], missing_ok=True)


def test_a_question_answered_yes_downloads_once(monkeypatch, standins):
    calls = recorder(monkeypatch, standins, 0, "")
    assert standins.pip_download(["numpy==2.4.6"], missing_ok=True) is True
    assert len(calls) == 1
