"""pyproject.toml's pins follow versions.json, the one place for versions."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parents[2]
VERSIONS = json.loads((ROOT / "versions.json").read_text())
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def requirement(requirements: list[str], name: str) -> str:
    for entry in requirements:
        if re.match(rf"^{re.escape(name)}\s*[<>=!~\[]", entry):
            return entry.replace(" ", "")
    raise AssertionError(f"{name} not in {requirements}")


def test_version_comes_from_versions_json():
    assert "version" in PYPROJECT["project"]["dynamic"]
    settings = PYPROJECT["tool"]["scikit-build"]["metadata"]["version"]
    assert settings["input"] == "versions.json"
    match = re.search(settings["regex"], (ROOT / "versions.json").read_text())
    assert match and match.group("value") == VERSIONS["project"]


def test_runtime_dependencies():
    deps = PYPROJECT["project"]["dependencies"]
    assert requirement(deps, "executorch") == f"executorch=={VERSIONS['executorch']}"
    cuda = VERSIONS["cuda_runtime_min"], VERSIONS["cuda_runtime_max_exclusive"]
    assert requirement(deps, "nvidia-cuda-runtime") == f"nvidia-cuda-runtime>={cuda[0]},<{cuda[1]}"
    assert "numpy" in deps and "flatbuffers" in deps


def test_build_requirements_match():
    build = PYPROJECT["build-system"]["requires"]
    assert requirement(build, "executorch") == f"executorch=={VERSIONS['executorch']}"
    cuda = VERSIONS["cuda_runtime_min"], VERSIONS["cuda_runtime_max_exclusive"]
    assert requirement(build, "nvidia-cuda-runtime") == f"nvidia-cuda-runtime>={cuda[0]},<{cuda[1]}"


def test_extras():
    extras = PYPROJECT["project"]["optional-dependencies"]
    v = VERSIONS
    assert extras["torch"] == [f"torch>={v['torch_min']},<{v['torch_max_exclusive']}"]
    cuda = v["cuda_major"]
    assert extras["tensorrt"] == [f"tensorrt-cu{cuda}>={v['tensorrt_full_min']},<{v['tensorrt_full_max_exclusive']}"]
    assert extras["lean"] == [f"tensorrt-lean-cu{cuda}>={v['tensorrt_lean_min']},<{v['tensorrt_lean_max_exclusive']}"]
    assert extras["dispatch"] == [
        f"tensorrt-dispatch-cu{cuda}>={v['tensorrt_lean_min']},<{v['tensorrt_lean_max_exclusive']}"
    ]
    assert extras["rtx"] == [f"tensorrt-rtx-cu{cuda}>={v['tensorrt_rtx_min']},<{v['tensorrt_rtx_max_exclusive']}"]
    assert "pytest" in extras["test"]


def test_wheel_settings():
    settings = PYPROJECT["tool"]["scikit-build"]
    # One abi3 wheel per platform: the compiled binding uses CPython 3.10's limited API.
    assert settings["wheel"]["py-api"] == "cp310"
    assert settings["cmake"]["define"]["TTE_BUILD_TESTS"] == "OFF"
    tags = {tuple(o["if"].items()): o["wheel"]["tags"] for o in settings["overrides"]}
    assert ["cp310-abi3-manylinux_2_28_x86_64"] in tags.values()
    assert ["cp310-abi3-manylinux_2_28_aarch64"] in tags.values()


def test_console_script():
    assert PYPROJECT["project"]["scripts"]["torch-tensorrt-executorch"] == "torch_tensorrt_executorch_runtime.cli:main"
