"""pixi.toml parses, uses the current manifest forms, and every task runs
something that exists in the repository."""

from __future__ import annotations

import os
import shlex

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

TASKS = {"build", "test", "lint", "bench", "render-recipe", "build-conda", "doctor"}


def all_tables(manifest: dict, path=()):
    for key, value in manifest.items():
        if isinstance(value, dict):
            yield path + (key,), value
            yield from all_tables(value, path + (key,))


def test_workspace_form(pixi):
    assert "workspace" in pixi and "project" not in pixi
    assert pixi["workspace"]["channels"] == ["conda-forge"]
    # [system-requirements] is deprecated: CUDA is declared on the platforms.
    assert not [p for p, _ in all_tables(pixi) if p[-1] == "system-requirements"]


def test_platforms_declare_cuda(pixi):
    platforms = pixi["workspace"]["platforms"]
    assert all(isinstance(p, dict) and "cuda" in p for p in platforms), platforms
    assert {p["platform"] for p in platforms} == {"linux-64", "linux-aarch64"}
    aarch64 = [p for p in platforms if p["platform"] == "linux-aarch64"]
    assert [p["cuda"] for p in aarch64] == ["13.0"]


def test_features_and_environments_resolve(pixi):
    names = {p["name"] for p in pixi["workspace"]["platforms"]}
    features = pixi["feature"]
    assert {"cuda12", "cuda13"} <= set(features)
    for name, feature in features.items():
        for platform in feature.get("platforms", []):
            assert platform in names, f"feature {name} names undeclared platform {platform}"
    for env, spec in pixi["environments"].items():
        for feature in spec["features"]:
            assert feature in features, f"environment {env} uses unknown feature {feature}"
    assert "cuda13" in pixi["environments"]["default"]["features"]
    assert "cuda12" in pixi["environments"]["cuda12"]["features"]


def test_required_tasks(pixi):
    assert TASKS <= set(pixi["tasks"])


def test_every_task_runs_something_that_exists(pixi, pyproject):
    console_scripts = set(pyproject["project"]["scripts"])
    for name, task in pixi["tasks"].items():
        cmd = task["cmd"] if isinstance(task, dict) else task
        words = shlex.split(cmd)
        target = words[1] if words[0] in ("python", "python3", "bash") else words[0]
        if target.startswith(".venv/bin/"):
            # Made by scripts/build.sh, which the task depends on.
            assert "build" in task.get("depends-on", []), f"task {name} runs {target} without building it"
            assert os.path.basename(target) in console_scripts | {"python"}, f"task {name}: {target}"
            continue
        path = ROOT / target
        assert path.is_file(), f"task {name} runs {target}, which does not exist"
        if words[0] == target:
            assert os.access(path, os.X_OK), f"task {name} runs {target}, which is not executable"
        for dependency in (task.get("depends-on", []) if isinstance(task, dict) else []):
            assert dependency in pixi["tasks"], f"task {name} depends on unknown task {dependency}"


def test_lock_command_is_documented():
    doc = (ROOT / "docs" / "conda.md").read_text()
    assert "pixi lock" in doc
