"""The wheel as users get it: tag, size, contents, RUNPATH, auditwheel, fresh venvs.

These need a built wheel: scripts/ci/check-wheel.sh (a step of the full
scripts/test.sh) builds one and sets TTE_WHEEL; without it they skip. The
fresh venvs (the default install, and the README's minimal one) download
the wheel's dependencies; TTE_WHEEL_SKIP_VENV=1 leaves them out.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

WHEEL = os.environ.get("TTE_WHEEL")
if not WHEEL:
    pytest.skip("TTE_WHEEL is not set: scripts/ci/check-wheel.sh builds the wheel and runs these checks",
                allow_module_level=True)
WHEEL_PATH = Path(WHEEL)
PACKAGE = "torch_tensorrt_executorch_runtime"
TAG = "cp310-abi3-manylinux_2_28_x86_64"
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
        f"{PACKAGE}/py.typed",
        f"{PACKAGE}/cli/__init__.py",
        f"{PACKAGE}/program/__init__.py",
        f"{PACKAGE}/runtime.py",
        f"{PACKAGE}/pack/__init__.py",
        f"{PACKAGE}/pte/reader.py",
        f"{PACKAGE}/_native/__init__.py",
        f"{PACKAGE}/_native/_compiled.abi3.so",
        f"{PACKAGE}/_native/_compiled.pyi",
        f"{PACKAGE}/providers/__init__.py",
        f"{PACKAGE}/providers/tensorrt_python/__init__.py",
        f"{PACKAGE}/providers/tensorrt_python/engine.py",
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
        scripts = wheel.read(entry_points).decode()
    assert "torch-tensorrt-executorch = torch_tensorrt_executorch_runtime.cli:main" in scripts
    assert "tte-run = torch_tensorrt_executorch_runtime._tte_run:main" in scripts


def test_abi3audit_finds_every_library_within_the_tags_abi3_baseline():
    """The compiled binding (and every other library in the wheel) uses only the stable ABI of the
    CPython the tag names, cp310-abi3: what lets one wheel serve CPython 3.10 and every later one."""
    abi3audit = Path(sys.executable).with_name("abi3audit")
    assert abi3audit.exists(), "abi3audit is missing: scripts/setup.sh installs requirements-dev.txt"
    result = subprocess.run(
        [str(abi3audit), "--strict", "--report", str(WHEEL_PATH)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
    (spec,) = json.loads(result.stdout)["specs"].values()
    results = {entry["name"]: entry["result"] for entry in spec["wheel"]}
    assert "_compiled.abi3.so" in results, sorted(results)
    for name, audit in results.items():
        assert audit["is_abi3"] and audit["is_abi3_baseline_compatible"], (name, audit)
        assert audit["baseline"] == "3.10", (name, audit)
        computed = tuple(int(part) for part in audit["computed"].split("."))
        assert computed <= (3, 10), (name, audit)
        assert not audit["non_abi3_symbols"] and not audit["future_abi3_objects"], (name, audit)


# One native provider per TensorRT major, each where its headers were found:
# the major, the folder beside the checkout the wheel build looks in on its
# own (cmake/TteNativeProvider.cmake) and the variable that names another.
NATIVE_PROVIDERS = {
    11: ("tensorrt-11.1", "TensorRT_ROOT"),
    10: ("tensorrt-10.3", "TensorRT10_ROOT"),
}
NATIVE_PROVIDER = f"{PACKAGE}/lib/libtte_provider_tensorrt11.so"
SDK_BESIDE_CHECKOUT = Path(__file__).resolve().parents[2].parent / "shared/sdk"
# Installs from PyPI go through it: tried again after a pause when the network drops.
WITH_RETRIES = str(Path(__file__).resolve().parents[2] / "scripts" / "with-retries.sh")
# A download cut short is fetched again (with a pip that names it: 25.1 and newer).
PIP_REFETCH = str(Path(__file__).resolve().parents[2] / "scripts" / "pip-refetch.py")


def native_provider_file(major: int) -> str:
    return f"{PACKAGE}/lib/libtte_provider_tensorrt{major}.so"


@pytest.mark.parametrize("major", sorted(NATIVE_PROVIDERS))
def test_native_provider_ships_where_tensorrt_headers_were_found(names, major):
    folder, variable = NATIVE_PROVIDERS[major]
    if not ((SDK_BESIDE_CHECKOUT / folder / "include/NvInferRuntime.h").exists() or os.environ.get(variable)):
        pytest.skip(f"no TensorRT {major} headers for the wheel build: it has no TensorRT {major} provider")
    assert native_provider_file(major) in names


def _dynamic(path: Path) -> str:
    return subprocess.run(["readelf", "-d", str(path)], capture_output=True, text=True, check=True).stdout


@pytest.mark.parametrize(
    "binary",
    ["lib/libexecutorch_backend_tensorrt.so", "bin/tte-run", "lib/libtte_provider_tensorrt11.so",
     "lib/libtte_provider_tensorrt10.so"],
)
def test_runpath_is_origin_relative(unpacked, binary):
    if not (unpacked / PACKAGE / binary).exists():
        pytest.skip(f"{binary} is not in this wheel")
    dynamic = _dynamic(unpacked / PACKAGE / binary)
    assert "(RPATH)" not in dynamic, "DT_RPATH found; only DT_RUNPATH is allowed"
    (runpath,) = re.findall(r"\(RUNPATH\)\s+Library runpath: \[(.*)\]", dynamic)
    entries = runpath.split(":")
    assert entries and all(e.startswith("$ORIGIN") for e in entries), entries
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[(.*)\]", dynamic)
    assert not [n for n in needed if n.startswith(("libpython", "libtorch", "libc10", "libnvinfer"))], needed


# The native providers find TensorRT at run time: no NEEDED entry on
# libnvinfer*, so the wheel loads where TensorRT is not installed.
@pytest.mark.parametrize(
    "binary",
    ["lib/libexecutorch_backend_tensorrt.so", "lib/libtte_provider_tensorrt11.so", "lib/libtte_provider_tensorrt10.so"],
)
def test_libraries_need_only_dependency_and_system_libraries(unpacked, binary):
    if not (unpacked / PACKAGE / binary).exists():
        pytest.skip(f"{binary} is not in this wheel")
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[(.*)\]", _dynamic(unpacked / PACKAGE / binary))
    system = ("libc.so", "libm.so", "libdl.so", "libpthread.so", "libstdc++.so", "libgcc_s.so", "librt.so", "ld-linux")
    unexpected = [n for n in needed if n not in DEPENDENCY_LIBRARIES and not n.startswith(system)]
    assert not unexpected, unexpected


def test_compiled_binding_is_abi3_and_links_only_the_system(unpacked):
    """One module for every CPython: no libpython, no plugin (it takes the loaded one's functions)."""
    dynamic = _dynamic(unpacked / PACKAGE / "_native/_compiled.abi3.so")
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[(.*)\]", dynamic)
    assert needed and all(n.startswith(("libc.so", "libdl.so", "libpthread.so")) for n in needed), needed
    assert "(RPATH)" not in dynamic and "(RUNPATH)" not in dynamic


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
    venv, clean_env = _fresh_venv(tmp_path, [str(WHEEL_PATH)])
    python = venv / "bin" / "python"
    imported = subprocess.run(
        [str(python), "-c",
         "import torch_tensorrt_executorch_runtime as t; print(t.__version__, t.providers.providers())"],
        capture_output=True,
        text=True,
        env=clean_env,
        cwd=tmp_path,
    )
    assert imported.returncode == 0, imported.stderr
    doctor = subprocess.run(
        [str(venv / "bin" / "torch-tensorrt-executorch"), "doctor"],
        capture_output=True, text=True, env=clean_env, cwd=tmp_path
    )
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert "installation is sound" in doctor.stdout
    _check_tte_run_on_path(venv, clean_env, tmp_path)
    if not list((venv / "lib").glob("python*/site-packages/" + NATIVE_PROVIDER)):
        return
    # With TensorRT's lean runtime installed from PyPI, the native provider
    # finds it beside the package, in Python and in tte-run alike (loading
    # the library needs no GPU; no runtime is created).
    lean = subprocess.run(
        [WITH_RETRIES, PIP_REFETCH, str(python), "-m", "pip", "install", "-q", "tensorrt-lean-cu13-libs>=11.1,<12"],
        capture_output=True, text=True, timeout=3600, env=clean_env,
    )
    assert lean.returncode == 0, lean.stdout + lean.stderr
    runtime = subprocess.run(
        [str(python), "-c", "from torch_tensorrt_executorch_runtime import _native, _activation;"
         "_activation.activate(); print(_native.provider_runtime('tensorrt-native-11'))"],
        capture_output=True, text=True, env=clean_env, cwd=tmp_path,
    )
    assert runtime.returncode == 0, runtime.stderr
    assert re.match(r"TensorRT 11\.\d+\.\d+ lean runtime from .*/tensorrt_lean_libs/libnvinfer_lean\.so\.11",
                    runtime.stdout), runtime.stdout
    listed = subprocess.run(["tte-run", "--list-providers"], capture_output=True, text=True,
                            env=_venv_env(venv, clean_env))
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.startswith("tensorrt-native-11: TensorRT 11."), listed.stdout


def _fresh_venv(tmp_path: Path, pip_args: list[str]) -> tuple[Path, dict]:
    """A new venv with `pip install pip_args` done; returns it and the environment to run it in."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    # No PYTHONPATH for pip either: a copy of the package on it would make pip
    # think the wheel is already installed.
    clean_env = {k: v for k, v in os.environ.items() if not k.startswith(("TORCH_TENSORRT_EXECUTORCH", "TTE_", "LD_"))}
    clean_env.pop("PYTHONPATH", None)
    install = subprocess.run(
        [WITH_RETRIES, PIP_REFETCH, str(venv / "bin" / "python"), "-m", "pip", "install", "-q", *pip_args],
        capture_output=True, text=True, timeout=3600, env=clean_env,
    )
    if install.returncode != 0:
        pytest.fail(f"pip install {' '.join(pip_args)} failed:\n{install.stdout}{install.stderr}")
    return venv, clean_env


def _venv_env(venv: Path, env: dict) -> dict:
    """`env` with the venv activated: its bin/ first on PATH."""
    return dict(env, PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}", VIRTUAL_ENV=str(venv))


def _check_tte_run_on_path(venv: Path, env: dict, cwd: Path) -> None:
    """`tte-run` is a command of the venv that execs the C++ runner, arguments and exit status passed through."""
    env = _venv_env(venv, env)
    assert shutil.which("tte-run", path=env["PATH"]) == str(venv / "bin" / "tte-run")
    help_text = subprocess.run(["tte-run", "--help"], capture_output=True, text=True, env=env, cwd=cwd)
    assert help_text.returncode == 0, help_text.stderr
    assert help_text.stdout.startswith("usage: tte-run")
    usage = subprocess.run(["tte-run", "--no-such-option"], capture_output=True, text=True, env=env, cwd=cwd)
    assert usage.returncode == 2 and "unknown option '--no-such-option'" in usage.stderr


def _minimal_install_command() -> list[str]:
    """The README's minimal install, run as written (with this wheel for the package name)."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    (line,) = [ln for ln in readme.splitlines()
               if ln.startswith("pip install --no-deps torch-tensorrt-executorch-runtime")]
    words = shlex.split(line.split("#")[0])
    return [str(WHEEL_PATH) if w == "torch-tensorrt-executorch-runtime" else w for w in words[2:]]


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("TTE_WHEEL_SKIP_VENV") == "1", reason="TTE_WHEEL_SKIP_VENV=1")
def test_minimal_install_runs_doctor_and_a_program(tmp_path, programs, host_library):
    """The README's minimal install (no executorch dependency tree, no torch): doctor, run and tte-run work."""
    venv, clean_env = _fresh_venv(tmp_path, _minimal_install_command())
    python = venv / "bin" / "python"
    installed = subprocess.run(
        [str(python), "-m", "pip", "list", "--format=freeze"], capture_output=True, text=True, env=clean_env
    ).stdout
    names = {line.split("==")[0].lower() for line in installed.split()}
    assert not names & {"torch", "coremltools", "scikit-learn", "pandas", "hydra-core"}, sorted(names)
    env = _venv_env(venv, clean_env)
    doctor = subprocess.run(["torch-tensorrt-executorch", "doctor"], capture_output=True, text=True, env=env,
                            cwd=tmp_path)
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert "installation is sound" in doctor.stdout
    assert "executorch.runtime cannot be imported here: needs torch" in doctor.stdout
    run = subprocess.run(
        ["torch-tensorrt-executorch", "run", str(programs["add_one"]), "--provider-library", str(host_library),
         "--num-runs", "3", "--json"],
        capture_output=True, text=True, env=env, cwd=tmp_path,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert json.loads(run.stdout)["outputs"][0]["checksum"] == 12.0
    runner = subprocess.run(
        ["tte-run", str(programs["add_one"]), "--provider", str(host_library), "--num-runs", "3"],
        capture_output=True, text=True, env=env, cwd=tmp_path,
    )
    assert runner.returncode == 0, runner.stdout + runner.stderr
    _check_tte_run_on_path(venv, clean_env, tmp_path)


def test_relocated_install_finds_executorch_through_python(tmp_path):
    """Installed apart from executorch and nvidia (pip --target): RUNPATH misses, the package preloads them."""
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(WHEEL_PATH)],
        check=True
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TORCH_TENSORRT_EXECUTORCH", "LD_"))}
    env["PYTHONPATH"] = str(target)
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "import torch_tensorrt_executorch_runtime as t, executorch.runtime as r;"
            "from torch_tensorrt_executorch_runtime import _native;"
            "print(_native.plugin_path()); "
            "print('TensorRTBackend' in r.Runtime.get().backend_registry.registered_backend_names)",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    path, seen = result.stdout.split()
    assert path.startswith(str(target)) and seen == "True"
