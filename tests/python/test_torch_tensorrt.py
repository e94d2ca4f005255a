"""Beside the torch-tensorrt 2.14 wheel: `torch_tensorrt.load(path, format="executorch")` reaches us.

Opt-in (TTE_SLOW_TESTS=1, or scripts/ci/check-wheel.sh): downloads torch-tensorrt
2.14.0 (4 MB) and installs it with --no-deps into a scratch folder, the way
the README says to install both (its [executorch] extra asks for
executorch<1.5). Without TensorRT's libraries torch_tensorrt itself cannot be
imported, so the test runs the statements its `load` runs, after checking they
are still what the wheel contains. Skips when the wheel cannot be fetched.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

if os.environ.get("TTE_SLOW_TESTS") != "1":
    pytest.skip("opt-in: set TTE_SLOW_TESTS=1 (downloads torch-tensorrt 2.14.0)", allow_module_level=True)

ROOT = Path(__file__).resolve().parents[2]
PIP_REFETCH = str(ROOT / "scripts" / "pip-refetch.py")  # a download cut short is fetched again
VERSION = json.loads((ROOT / "versions.json").read_text())["torch_tensorrt"]


@pytest.fixture(scope="module")
def torch_tensorrt_site(tmp_path_factory) -> Path:
    downloads = tmp_path_factory.mktemp("download")
    fetch = subprocess.run(
        [PIP_REFETCH, sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(downloads),
         f"torch-tensorrt=={VERSION}"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if fetch.returncode != 0:
        pytest.skip(f"cannot fetch torch-tensorrt {VERSION}: {fetch.stderr.strip().splitlines()[-1:]}")
    (wheel,) = downloads.glob("*.whl")
    site = tmp_path_factory.mktemp("site")
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site), str(wheel)], check=True
    )
    return site


def test_its_load_dispatches_to_our_runtime_module(torch_tensorrt_site):
    source = (torch_tensorrt_site / "torch_tensorrt" / "_compile.py").read_text()
    assert 'find_spec("torch_tensorrt_executorch_runtime")' in source
    assert "from torch_tensorrt_executorch_runtime.runtime import load as load_executorch" in source
    assert "return load_executorch(file_path)" in source


@pytest.mark.parametrize("order", ["ours_first", "torch_tensorrt_first"])
def test_import_beside_torch_tensorrt(torch_tensorrt_site, programs, host_library, order):
    ours = "import torch_tensorrt_executorch_runtime as tte\n"
    theirs = (
        "try:\n    import torch_tensorrt\n    print('torch_tensorrt imported')\n"
        "except Exception as exc:\n    print('torch_tensorrt not importable here:', str(exc).splitlines()[0])\n"
    )
    dispatch = f"""
import importlib.util, torch
import torch_tensorrt_executorch_runtime as tte
tte.register_provider_library({str(host_library)!r})
assert importlib.util.find_spec("torch_tensorrt_executorch_runtime") is not None
from torch_tensorrt_executorch_runtime.runtime import load as load_executorch
program = load_executorch({str(programs["add_one"])!r})
print(program.forward(torch.zeros(2, 3))[0].tolist())
"""
    code = (ours + theirs if order == "ours_first" else theirs + ours) + dispatch
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(torch_tensorrt_site)] + [p for p in [env.get("PYTHONPATH")] if p])
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "[[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]"


def test_no_file_collides_with_ours(torch_tensorrt_site):
    wheel = os.environ.get("TTE_WHEEL")
    if not wheel:
        pytest.skip("TTE_WHEEL is not set (scripts/ci/check-wheel.sh sets it)")
    with zipfile.ZipFile(wheel) as ours:
        our_tops = {name.split("/")[0] for name in ours.namelist()}
    their_tops = {p.name for p in torch_tensorrt_site.iterdir()}
    assert not (our_tops & their_tops), our_tops & their_tops
