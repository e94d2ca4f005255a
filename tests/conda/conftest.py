"""Shared fixtures: the repository's manifests and the offline recipe renders."""

from __future__ import annotations

import importlib.util
import json
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def versions() -> dict:
    return json.loads((ROOT / "versions.json").read_text())


@pytest.fixture(scope="session")
def pixi() -> dict:
    with open(ROOT / "pixi.toml", "rb") as f:
        return tomllib.load(f)


@pytest.fixture(scope="session")
def pyproject() -> dict:
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)


@pytest.fixture(scope="session")
def render_module():
    """scripts/conda/render.py, imported."""
    pytest.importorskip(
        "rattler_build",
        reason="py-rattler-build is not installed here; scripts/conda/test.sh runs these tests in .venv-conda")
    spec = importlib.util.spec_from_file_location("conda_render", ROOT / "scripts" / "conda" / "render.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def rendered(render_module) -> dict[str, list[dict]]:
    """{platform: [output, ...]} under recipe/variants.yaml."""
    return {platform: render_module.render(platform, "variants") for platform in render_module.PLATFORMS}


@pytest.fixture(scope="session")
def rendered_conda_forge(render_module) -> dict[str, list[dict]]:
    """{platform: [output, ...]} under conda-forge's pinning and the recipe's conda-forge overrides."""
    return {platform: render_module.render(platform, "conda-forge") for platform in render_module.PLATFORMS}
