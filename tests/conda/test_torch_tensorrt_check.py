"""recipe/tests/torch-tensorrt/check_torch_tensorrt.py --links-only, the library checks the
offline build runs on the cross-built linux-aarch64 torch-tensorrt package (which it cannot
import): they fail on a library for another machine, one that links what the package does not
declare, and a package without its runtime library."""

from __future__ import annotations

import platform
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHECK = ROOT / "recipe" / "tests" / "torch-tensorrt" / "check_torch_tensorrt.py"
OTHER_MACHINE = {"x86_64": "aarch64", "aarch64": "x86_64"}


def shared_library(path: Path, code: str, *link: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    source = path.with_suffix(".c")
    source.write_text(code)
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(path), str(source), *link], check=True)
    source.unlink()


def check(package: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(CHECK), "--links-only", str(package), *args],
                          capture_output=True, text=True)


@pytest.fixture
def package(tmp_path: Path) -> Path:
    if shutil.which("cc") is None or platform.machine() not in OTHER_MACHINE:
        pytest.skip("needs a C compiler on x86_64 or aarch64")
    folder = tmp_path / "torch_tensorrt"
    # It calls into the C library, so libc.so.6 is NEEDED.
    shared_library(folder / "lib" / "libtorchtrt_runtime.so",
                   "#include <string.h>\nsize_t length(const char* s) { return strlen(s); }\n")
    return folder


def test_a_package_of_this_machine_linking_the_c_library_passes(package):
    result = check(package, "--machine", platform.machine())
    assert result.returncode == 0, result.stderr
    assert "lib/libtorchtrt_runtime.so" in result.stdout and "libc.so.6" in result.stdout


def test_a_library_for_another_machine_fails(package):
    result = check(package, "--machine", OTHER_MACHINE[platform.machine()])
    assert result.returncode != 0 and "is for ELF machine" in result.stderr, result.stderr


def test_an_undeclared_library_fails(package, tmp_path):
    shared_library(tmp_path / "undeclared" / "libundeclared.so", "int undeclared(void) { return 1; }\n")
    shared_library(package / "lib" / "extra.so", "int undeclared(void);\nint call(void) { return undeclared(); }\n",
                   f"-L{tmp_path / 'undeclared'}", "-lundeclared")
    result = check(package, "--machine", platform.machine())
    assert result.returncode != 0 and "libundeclared.so" in result.stderr, result.stderr


def test_a_package_without_its_runtime_library_fails(package):
    (package / "lib" / "libtorchtrt_runtime.so").unlink()
    result = check(package)
    assert result.returncode != 0 and "libtorchtrt_runtime.so is missing" in result.stderr, result.stderr


def test_machine_needs_links_only():
    result = subprocess.run([sys.executable, str(CHECK), "--machine", "aarch64"], capture_output=True, text=True)
    assert result.returncode == 2 and "--machine goes with --links-only" in result.stderr, result.stderr
