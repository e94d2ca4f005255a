"""Shared fixtures: the repository's manifests and the offline recipe render."""

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
def rendered() -> dict[str, list[dict]]:
    """{platform: [output, ...]} from scripts/conda/render.py."""
    pytest.importorskip(
        "rattler_build",
        reason="py-rattler-build is not installed here; scripts/conda/test.sh runs these tests in .venv-conda")
    spec = importlib.util.spec_from_file_location("conda_render", ROOT / "scripts" / "conda" / "render.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return {platform: module.render(platform) for platform in module.PLATFORMS}
