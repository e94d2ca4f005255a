"""`doctor` reports every TensorRT found, per major, with the provider that found it.

The end-to-end cases install PyPI's real lean runtimes (`tensorrt-lean-cu13-libs`,
~44 MB each; cached under build/tensorrt-lean/) beside a copy of the installed
package in a temporary site folder, the layout pip gives, and run
`doctor --json` there in a subprocess: loading a TensorRT library needs no GPU,
and doctor creates no runtime. They skip, saying so, only when PyPI cannot be
reached.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from torch_tensorrt_executorch_runtime.cli import doctor

ROOT = Path(__file__).resolve().parents[2]
# A download cut short is fetched again (pip-refetch); a failure is tried again after a pause.
PIP_ONLINE = [str(ROOT / "scripts" / "with-retries.sh"), str(ROOT / "scripts" / "pip-refetch.py")]
CACHE = ROOT / "build" / "tensorrt-lean"
PACKAGE = "torch_tensorrt_executorch_runtime"
# One lean runtime per major (versions.json: the ones the checks use; both
# majors are one distribution, so pip holds one at a time).
LEAN_RUNTIMES = {int(major): version for major, version in
                 json.loads((ROOT / "versions.json").read_text())["tensorrt_lean_checked"].items()}


def test_runtime_lines_are_read_as_the_native_provider_writes_them():
    found = doctor.parse_runtime_line(
        "TensorRT 10.16.1 lean runtime from /site/tensorrt_lean_libs/libnvinfer_lean.so.10 "
        "(provider built against TensorRT 10.3.0 headers)"
    )
    assert found == {
        "version": "10.16.1",
        "lean": True,
        "path": "/site/tensorrt_lean_libs/libnvinfer_lean.so.10",
        "provider_headers": "10.3.0",
    }
    full = doctor.parse_runtime_line(
        "TensorRT 11.4.0 from /usr/lib/libnvinfer.so.11 (provider built against TensorRT 11.1.0 headers)"
    )
    assert full is not None and full["lean"] is False and full["version"] == "11.4.0"
    assert doctor.parse_runtime_line("no usable TensorRT 10 library (looked for ...): install TensorRT 10") is None


def test_tensorrt_is_listed_by_major_from_providers_and_python_modules():
    natives = [
        {"major": 10, "provider": "tensorrt-native-10", "registered": True, "detail": None,
         "tensorrt": {"version": "10.16.1", "lean": True, "path": "/x/libnvinfer_lean.so.10",
                      "provider_headers": "10.3.0"}},
        {"major": 11, "provider": "tensorrt-native-11", "registered": True, "tensorrt": None, "detail": "none"},
    ]
    modules = [
        {"module": "tensorrt", "installed": True, "version": "11.4.0.106"},
        {"module": "tensorrt_rtx", "installed": True, "version": "1.7.1"},
    ]
    by_major = doctor.tensorrt_by_major(natives, modules)
    assert by_major["10"] == [
        {"version": "10.16.1", "lean": True, "path": "/x/libnvinfer_lean.so.10", "found_by": "tensorrt-native-10"}
    ]
    assert by_major["11"] == [
        {"version": "11.4.0.106", "lean": False, "path": None, "found_by": "Python module tensorrt"}
    ]
    assert set(by_major) == {"10", "11"}  # TensorRT-RTX is not a TensorRT major


def _pypi_reachable() -> str | None:
    """None when PyPI answers, else why not."""
    try:
        with urllib.request.urlopen("https://pypi.org/simple/tensorrt-lean-cu13-libs/", timeout=20):
            return None
    except (urllib.error.URLError, OSError) as exc:
        return str(exc)


def _lean_runtime(major: int) -> Path:
    """The folder holding tensorrt_lean_libs/ of TensorRT `major` from PyPI, downloaded once."""
    version = LEAN_RUNTIMES[major]
    folder = CACHE / version
    library = folder / "tensorrt_lean_libs" / f"libnvinfer_lean.so.{major}"
    if library.exists():
        return folder
    why = _pypi_reachable()
    if why is not None:
        pytest.skip(f"PyPI is unreachable ({why}): cannot fetch tensorrt-lean-cu13-libs=={version}")
    shutil.rmtree(folder, ignore_errors=True)
    installed = subprocess.run(
        [*PIP_ONLINE, sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--only-binary=:all:", "--target",
         str(folder), f"tensorrt-lean-cu13-libs=={version}"],
        capture_output=True, text=True, timeout=1800,
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    assert library.exists(), sorted(p.name for p in (folder / "tensorrt_lean_libs").iterdir())
    return folder


def _doctor_beside(lean: Path, tmp_path: Path) -> dict:
    """`doctor --json` with the installed package and `lean`'s tensorrt_lean_libs side by side in one
    site folder (copies: the provider finds TensorRT relative to its own real path)."""
    spec = importlib.util.find_spec(PACKAGE)
    assert spec is not None and spec.submodule_search_locations
    site = tmp_path / "site"
    shutil.copytree(Path(spec.submodule_search_locations[0]), site / PACKAGE,
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(lean / "tensorrt_lean_libs", site / "tensorrt_lean_libs")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TORCH_TENSORRT_EXECUTORCH_", "CONDA_"))}
    env["PYTHONPATH"] = os.pathsep.join([str(site)] + [p for p in sys.path if p and "site-packages" in p])
    result = subprocess.run(
        [sys.executable, "-m", PACKAGE, "doctor", "--json"], capture_output=True, text=True, env=env,
        cwd=tmp_path, timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout)
    assert report["plugin"]["library_path"].startswith(str(site)), report["plugin"]
    return report


@pytest.mark.parametrize("major", sorted(LEAN_RUNTIMES))
def test_doctor_reports_the_lean_runtime_the_provider_of_its_major_finds(major, tmp_path):
    native = {n["major"]: n for n in doctor.collect()["native_providers"]}
    if not native[major]["registered"]:
        pytest.skip(f"this build has no TensorRT {major} provider: {native[major]['detail']}")
    report = _doctor_beside(_lean_runtime(major), tmp_path)
    wanted = ".".join(LEAN_RUNTIMES[major].split(".")[:3])
    by_provider = {n["major"]: n for n in report["native_providers"]}
    assert by_provider[major]["tensorrt"] is not None, by_provider[major]
    assert by_provider[major]["tensorrt"]["version"] == wanted
    assert by_provider[major]["tensorrt"]["lean"] is True
    assert by_provider[major]["tensorrt"]["path"].endswith(f"tensorrt_lean_libs/libnvinfer_lean.so.{major}")
    found = [f for f in report["tensorrt"][str(major)] if f["found_by"] == f"tensorrt-native-{major}"]
    assert found and found[0]["version"] == wanted and found[0]["lean"] is True, report["tensorrt"]
    # The other major's provider looks only for its own major's files.
    other = 11 if major == 10 else 10
    if other in by_provider and by_provider[other]["registered"]:
        assert by_provider[other]["tensorrt"] is None, by_provider[other]
        assert f"no usable TensorRT {other} library" in by_provider[other]["detail"]
    text = subprocess.run(
        [sys.executable, "-c", f"from {PACKAGE}.cli import doctor; print(doctor.format_text({report!r}))"],
        capture_output=True, text=True, check=True,
    ).stdout
    assert f"TensorRT {major}:   {wanted} (lean) by tensorrt-native-{major}" in text, text
