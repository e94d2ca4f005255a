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


SKBUILD = PYPROJECT["tool"]["scikit-build"]


def jetpack6_override() -> dict:
    (override,) = [o for o in SKBUILD["overrides"] if o["if"] == {"env": {"TTE_JETPACK": "6"}}]
    return override


def test_runtime_dependencies():
    assert "dependencies" in PYPROJECT["project"]["dynamic"]
    assert SKBUILD["metadata"]["dependencies"]["provider"] == "scikit_build_core.metadata.template"
    deps = SKBUILD["metadata"]["dependencies"]["result"]
    assert requirement(deps, "executorch") == f"executorch=={VERSIONS['executorch']}"
    cuda = VERSIONS["cuda_runtime_min"], VERSIONS["cuda_runtime_max_exclusive"]
    assert requirement(deps, "nvidia-cuda-runtime") == f"nvidia-cuda-runtime>={cuda[0]},<{cuda[1]}"
    assert "numpy" in deps and "flatbuffers" in deps


def test_the_jetpack6_build_drops_the_cuda_runtime_wheel_and_labels_its_version():
    """TTE_JETPACK=6: CUDA 12 (JetPack's own libcudart), the same requirements less the CUDA wheel."""
    override = jetpack6_override()
    assert override["cmake"]["define"]["TTE_CUDA_MAJOR"] == "12"
    assert override["metadata"]["dependencies"]["result"] == [
        d for d in SKBUILD["metadata"]["dependencies"]["result"] if not d.startswith("nvidia-cuda-runtime")
    ]
    version = override["metadata"]["version"]
    assert {k: v for k, v in version.items() if k != "result"} == SKBUILD["metadata"]["version"]
    assert version["result"] == "{value}+" + VERSIONS["jetpack6"]["wheel_label"]


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
    settings = SKBUILD
    # One abi3 wheel per platform: the compiled binding uses CPython 3.10's limited API.
    assert settings["wheel"]["py-api"] == "cp310"
    assert settings["cmake"]["define"]["TTE_BUILD_TESTS"] == "OFF"
    tags = {tuple(o["if"].items()): o["wheel"]["tags"] for o in settings["overrides"] if "wheel" in o}
    assert ["cp310-abi3-manylinux_2_28_x86_64"] in tags.values()
    assert ["cp310-abi3-manylinux_2_28_aarch64"] in tags.values()


def test_console_script():
    assert PYPROJECT["project"]["scripts"]["torch-tensorrt-executorch"] == "torch_tensorrt_executorch_runtime.cli:main"


@pytest.mark.parametrize("jetpack", ["", "6"])
def test_scikit_build_core_writes_the_metadata_each_build_asks_for(tmp_path, jetpack):
    """The metadata the wheel build really writes, with and without TTE_JETPACK=6 (no CMake run)."""
    pytest.importorskip("scikit_build_core")
    import os
    import subprocess

    script = (
        "import sys; from scikit_build_core.build import prepare_metadata_for_build_wheel as p; "
        "print(p(sys.argv[1]))"
    )
    env = {**os.environ, "TTE_JETPACK": jetpack}
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path)], cwd=ROOT, env=env,
                          capture_output=True, text=True, check=True)
    metadata = (tmp_path / done.stdout.strip().splitlines()[-1] / "METADATA").read_text()
    fields = [line.split(": ", 1) for line in metadata.splitlines() if ": " in line]
    version = next(v for k, v in fields if k == "Version")
    required = [v for k, v in fields if k == "Requires-Dist" and "extra ==" not in v]
    names = [re.split(r"[<>=!~ ;\[]", r, maxsplit=1)[0] for r in required]
    if jetpack:
        assert version == VERSIONS["project"] + "+" + VERSIONS["jetpack6"]["wheel_label"]
        assert names == ["executorch", "numpy", "flatbuffers"]
    else:
        assert version == VERSIONS["project"]
        assert names == ["executorch", "nvidia-cuda-runtime", "numpy", "flatbuffers"]
