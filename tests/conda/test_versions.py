"""recipe/ and pixi.toml agree with versions.json, so no package is built
against one ExecuTorch, TensorRT or CUDA and installed with another."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def recipe_context() -> dict[str, str]:
    text = (ROOT / "recipe" / "recipe.yaml").read_text()
    block = text.split("\ncontext:\n", 1)[1].split("\n\n", 1)[0]
    return dict(re.findall(r'^  (\w+): "?([^"\n]+)"?$', block, re.M))


def test_recipe_context_matches_versions_json(versions):
    context = recipe_context()
    assert context["version"] == versions["project"]
    assert context["executorch_version"] == versions["executorch"]
    # conda builds Torch-TensorRT from source against conda-forge's pytorch (2.13);
    # pip installs PyPI's (2.14, for PyPI's torch 2.14).
    assert context["torch_tensorrt_version"] == versions["conda_torch_tensorrt"]["version"]
    assert context["torch_tensorrt_commit"] == versions["conda_torch_tensorrt"]["commit"]
    assert context["torch_min"] == versions["conda_torch_tensorrt"]["torch_min"]
    assert context["torch_max"] == versions["conda_torch_tensorrt"]["torch_max_exclusive"]
    assert context["tensorrt_min"] == versions["tensorrt_full_min"]
    assert context["tensorrt_max"] == versions["tensorrt_full_max_exclusive"]


def test_variants_cuda_versions_match_versions_json(versions):
    text = (ROOT / "recipe" / "variants.yaml").read_text()
    block = text.split("cuda_compiler_version:\n", 1)[1].split("\nc_compiler:", 1)[0]
    lists = dict(re.findall(r"- if: (\w+)\n\s+then: \[(.*?)\]", block))
    parse = lambda s: [v.strip().strip('"') for v in s.split(",")]  # noqa: E731
    assert parse(lists["x86_64"]) == versions["conda_cuda_variants"]
    # linux-aarch64: CUDA 13 (sbsa), then conda-forge's tegra CUDA (Jetson).
    assert parse(lists["aarch64"]) == [
        *(v for v in versions["conda_cuda_variants"] if v.startswith("13.")), versions["conda_tegra_cuda"]]


def test_pixi_matches_versions_json(pixi, versions):
    assert pixi["workspace"]["version"] == versions["project"]
    trt = f">={versions['tensorrt_full_min']},<{versions['tensorrt_full_max_exclusive']}"
    cuda_by_feature = {"cuda12": None, "cuda13": None}
    for feature in cuda_by_feature:
        deps = pixi["feature"][feature]["dependencies"]
        assert deps["libnvinfer-devel"] == trt
        cuda_by_feature[feature] = deps["cuda-version"].removesuffix(".*")
    assert sorted(cuda_by_feature.values()) == sorted(versions["conda_cuda_variants"])
    pypi = pixi["feature"]["export"]["pypi-dependencies"]
    assert pypi["executorch"] == f"=={versions['executorch']}"
    assert pypi["torch-tensorrt"] == f"=={versions['torch_tensorrt']}"
    assert pypi["torch"] == f">={versions['torch_min']},<{versions['torch_max_exclusive']}"
    assert pypi["tensorrt-cu13"] == trt


def test_rich_platform_cuda_matches_features(pixi):
    declared = {p["name"]: p for p in pixi["workspace"]["platforms"] if isinstance(p, dict)}
    for feature in ("cuda12", "cuda13"):
        cuda = pixi["feature"][feature]["dependencies"]["cuda-version"].removesuffix(".*")
        for name in pixi["feature"][feature]["platforms"]:
            assert declared[name]["cuda"] == cuda, (
                f"{name} declares __cuda {declared[name]['cuda']}, feature {feature} installs {cuda}")
