"""The wheel as users get it: tag, size, contents, RUNPATH, auditwheel, a fresh venv.

Opt-in (it needs a built wheel, and the fresh venv downloads the wheel's
dependencies): run scripts/ci/check-wheel.sh, which builds one and sets
TTE_WHEEL. TTE_WHEEL_SKIP_VENV=1 leaves out the fresh-venv check.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

WHEEL = os.environ.get("TTE_WHEEL")
if not WHEEL:
    pytest.skip("TTE_WHEEL is not set: scripts/ci/check-wheel.sh builds the wheel and runs these checks", allow_module_level=True)
WHEEL_PATH = Path(WHEEL)
PACKAGE = "torch_tensorrt_executorch_runtime"
TAG = "py3-none-manylinux_2_28_x86_64"
# What the dependency wheels provide: never grafted into ours.
DEPENDENCY_LIBRARIES = (
    "libexecutorch.so",
    "libexecutorch_kernels_optimized.so",
    "libexecutorch_backend_xnnpack.so",
    "libexecutorch_threadpool.so",
    "libexecutorch_etdump.so",
    "libcudart.so.13",
)


@pytest.fixture(scope="module")
def names() -> list[str]:
    with zipfile.ZipFile(WHEEL_PATH) as wheel:
        return wheel.namelist()


@pytest.fixture(scope="module")
def unpacked(tmp_path_factory) -> Path:
    target = tmp_path_factory.mktemp("wheel")
    with zipfile.ZipFile(WHEEL_PATH) as wheel:
        wheel.extractall(target)
    return target


def test_tag():
    assert WHEEL_PATH.name.endswith(f"-{TAG}.whl"), WHEEL_PATH.name
    with zipfile.ZipFile(WHEEL_PATH) as wheel:
        (info,) = [n for n in wheel.namelist() if n.endswith(".dist-info/WHEEL")]
        text = wheel.read(info).decode()
    assert f"Tag: {TAG}" in text
    assert "Root-Is-Purelib: false" in text


def test_size_under_1_mb():
    assert WHEEL_PATH.stat().st_size < 1 << 20, f"{WHEEL_PATH.stat().st_size} bytes"


def test_contents(names):
    expected = [
        f"{PACKAGE}/__init__.py",
        f"{PACKAGE}/__main__.py",
        f"{PACKAGE}/cli/__init__.py",
        f"{PACKAGE}/program/__init__.py",
        f"{PACKAGE}/runtime.py",
        f"{PACKAGE}/pack/__init__.py",
        f"{PACKAGE}/pte/reader.py",
        f"{PACKAGE}/_native/__init__.py",
        f"{PACKAGE}/providers/__init__.py",
        f"{PACKAGE}/providers/tensorrt_python.py",
        f"{PACKAGE}/_generated/__init__.py",
        f"{PACKAGE}/_generated/program_generated.py",
        f"{PACKAGE}/lib/libexecutorch_backend_tensorrt.so",
        f"{PACKAGE}/bin/tte-run",
        f"{PACKAGE}/include/torch_tensorrt_executorch/c_api.h",
        f"{PACKAGE}/include/torch_tensorrt_executorch/engine_provider.h",
        f"{PACKAGE}/include/torch_tensorrt_executorch/dlpack.h",
        f"{PACKAGE}/lib/cmake/torch_tensorrt_executorch/torch_tensorrt_executorch-config.cmake",
        f"{PACKAGE}/lib/cmake/torch_tensorrt_executorch/torch_tensorrt_executorch-config-version.cmake",
        f"{PACKAGE}/lib/cmake/torch_tensorrt_executorch/torch_tensorrt_executorch-targets.cmake",
    ]
    missing = [n for n in expected if n not in names]
    assert not missing, missing
    assert not [n for n in names if "test_provider" in n], "test providers must not ship"
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    (entry_points,) = [n for n in names if n.endswith("entry_points.txt")]
    with zipfile.ZipFile(WHEEL_PATH) as wheel:
        assert "torch-tensorrt-executorch = torch_tensorrt_executorch_runtime.cli:main" in wheel.read(
            entry_points
        ).decode()


def _dynamic(path: Path) -> str:
    return subprocess.run(["readelf", "-d", str(path)], capture_output=True, text=True, check=True).stdout


@pytest.mark.parametrize("binary", ["lib/libexecutorch_backend_tensorrt.so", "bin/tte-run"])
def test_runpath_is_origin_relative(unpacked, binary):
    dynamic = _dynamic(unpacked / PACKAGE / binary)
    assert "(RPATH)" not in dynamic, "DT_RPATH found; only DT_RUNPATH is allowed"
    (runpath,) = re.findall(r"\(RUNPATH\)\s+Library runpath: \[(.*)\]", dynamic)
    entries = runpath.split(":")
    assert entries and all(e.startswith("$ORIGIN") for e in entries), entries
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[(.*)\]", dynamic)
    assert not [n for n in needed if n.startswith(("libpython", "libtorch", "libc10", "libnvinfer"))], needed


def test_plugin_needs_only_dependency_and_system_libraries(unpacked):
    needed = re.findall(
        r"\(NEEDED\)\s+Shared library: \[(.*)\]", _dynamic(unpacked / PACKAGE / "lib/libexecutorch_backend_tensorrt.so")
    )
    system = ("libc.so", "libm.so", "libdl.so", "libpthread.so", "libstdc++.so", "libgcc_s.so", "librt.so", "ld-linux")
    unexpected = [n for n in needed if n not in DEPENDENCY_LIBRARIES and not n.startswith(system)]
    assert not unexpected, unexpected


def _hashes(path: Path) -> dict[str, str]:
    with zipfile.ZipFile(path) as wheel:
        return {
            name: hashlib.sha256(wheel.read(name)).hexdigest()
            for name in wheel.namelist()
            # auditwheel adds entries for directories; they hold nothing.
            if not name.endswith((".dist-info/RECORD", ".dist-info/WHEEL", "/"))
        }


def test_auditwheel_repair_changes_nothing_else(tmp_path):
    auditwheel = shutil.which("auditwheel") or str(Path(sys.executable).parent / "auditwheel")
    show = subprocess.run([auditwheel, "show", str(WHEEL_PATH)], capture_output=True, text=True)
    assert show.returncode == 0, show.stdout + show.stderr
    # --patcher none: auditwheel fails if it would patch any file (nothing to
    # graft), and needs no patchelf. --only-plat: keep our tag even where the
    # binaries would pass an older policy too.
    command = [auditwheel, "repair", "--patcher", "none", "--only-plat", "--plat", "manylinux_2_28_x86_64"]
    command += ["-w", str(tmp_path)]
    for library in DEPENDENCY_LIBRARIES:
        command += ["--exclude", library]
    repair = subprocess.run(command + [str(WHEEL_PATH)], capture_output=True, text=True)
    assert repair.returncode == 0, repair.stdout + repair.stderr
    (repaired,) = tmp_path.glob("*.whl")
    assert repaired.name == WHEEL_PATH.name
    assert _hashes(repaired) == _hashes(WHEEL_PATH)


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("TTE_WHEEL_SKIP_VENV") == "1", reason="TTE_WHEEL_SKIP_VENV=1")
def test_fresh_venv_imports_and_doctor_passes(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    # No PYTHONPATH for pip either: a copy of the package on it would make pip
    # think the wheel is already installed.
    clean_env = {k: v for k, v in os.environ.items() if not k.startswith(("TORCH_TENSORRT_EXECUTORCH", "TTE_", "LD_"))}
    clean_env.pop("PYTHONPATH", None)
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", str(WHEEL_PATH)],
        capture_output=True, text=True, timeout=3600, env=clean_env,
    )
    if install.returncode != 0:
        pytest.fail(f"pip install of the wheel and its dependencies failed:\n{install.stdout}{install.stderr}")
    imported = subprocess.run(
        [str(python), "-c", "import torch_tensorrt_executorch_runtime as t; print(t.__version__, t.providers.providers())"],
        capture_output=True,
        text=True,
        env=clean_env,
        cwd=tmp_path,
    )
    assert imported.returncode == 0, imported.stderr
    doctor = subprocess.run(
        [str(venv / "bin" / "torch-tensorrt-executorch"), "doctor"], capture_output=True, text=True, env=clean_env, cwd=tmp_path
    )
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert "installation is sound" in doctor.stdout


def test_relocated_install_finds_executorch_through_python(tmp_path):
    """Installed apart from executorch and nvidia (pip --target): RUNPATH misses, the package preloads them."""
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(WHEEL_PATH)], check=True
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TORCH_TENSORRT_EXECUTORCH", "LD_"))}
    env["PYTHONPATH"] = str(target)
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "import torch_tensorrt_executorch_runtime as t, executorch.runtime as r;"
            "from torch_tensorrt_executorch_runtime import _native;"
            "print(_native.plugin_path()); print('TensorRTBackend' in r.Runtime.get().backend_registry.registered_backend_names)",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    path, seen = result.stdout.split()
    assert path.startswith(str(target)) and seen == "True"
