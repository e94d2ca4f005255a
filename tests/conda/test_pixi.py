"""pixi.toml parses, uses the current manifest forms, its tasks run something
that exists, `build`/`test` are the conda-native build while the wheel keeps
an environment free of conda's compilers, and the docs say what a newcomer
needs (installing pixi, CONDA_OVERRIDE_CUDA, making pixi.lock)."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

TASKS = {"build", "test", "build-wheel", "test-wheel", "lint", "bench", "render-recipe", "build-conda", "doctor"}
# What conda's activation brings into an environment, and what the native provider finds in it.
CONDA_BUILD_TOOLS = {"c-compiler", "cxx-compiler", "gcc", "gxx", "cuda-nvcc", "libnvinfer-devel",
                     "cuda-cudart-dev", "cmake", "ninja"}


def all_tables(manifest: dict, path=()):
    for key, value in manifest.items():
        if isinstance(value, dict):
            yield path + (key,), value
            yield from all_tables(value, path + (key,))


def environment_dependencies(pixi: dict, env: str) -> dict:
    spec = pixi["environments"][env]
    features = spec["features"] if isinstance(spec, dict) else spec
    deps = {} if isinstance(spec, dict) and spec.get("no-default-feature") else dict(pixi.get("dependencies", {}))
    for feature in features:
        deps.update(pixi["feature"][feature].get("dependencies", {}))
    return deps


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
    assert [p["cuda"] for p in aarch64] == ["13.4"]
    assert [p["glibc"] for p in aarch64] == ["2.34"]


def test_features_and_environments_resolve(pixi):
    names = {p["name"] for p in pixi["workspace"]["platforms"]}
    features = pixi["feature"]
    assert {"cuda12", "cuda13", "native"} <= set(features)
    for name, feature in features.items():
        for platform in feature.get("platforms", []):
            assert platform in names, f"feature {name} names undeclared platform {platform}"
    for env, spec in pixi["environments"].items():
        for feature in (spec["features"] if isinstance(spec, dict) else spec):
            assert feature in features, f"environment {env} uses unknown feature {feature}"
    for env, cuda in (("default", "cuda13"), ("cuda12", "cuda12")):
        assert {"native", cuda} <= set(pixi["environments"][env]["features"])


def test_default_environment_has_executorch_from_the_recipe(pixi):
    """ExecuTorch's C++ runtime is not on conda-forge: the environment builds it from recipe/."""
    deps = environment_dependencies(pixi, "default")
    assert deps["libexecutorch-devel"] == {"path": "recipe/recipe.yaml"}
    assert "pixi-build" in pixi["workspace"]["preview"]
    assert "libexecutorch-devel" in (ROOT / "recipe" / "recipe.yaml").read_text()


def test_build_and_test_are_the_conda_native_build(pixi):
    tasks = pixi["tasks"]
    assert tasks["build"]["cmd"] == "scripts/conda/env-build.sh"
    assert tasks["test"]["cmd"] == "scripts/conda/env-test.sh"
    assert "build" in tasks["test"]["depends-on"]
    for task in ("build", "test"):
        assert "default-environment" not in tasks[task], f"{task} must run in the conda environment"
    env_build = (ROOT / "scripts" / "conda" / "env-build.sh").read_text()
    assert "recipe/build.sh" in env_build, "pixi run build must use the recipe's build script"
    deps = environment_dependencies(pixi, "default")
    assert {"c-compiler", "cxx-compiler", "libnvinfer-devel", "cuda-cudart-dev"} <= set(deps)


def test_wheel_tasks_stay_away_from_conda_activation(pixi):
    """The pip wheel must not see conda's -rpath $CONDA_PREFIX/lib or the environment's
    libnvinfer (its checks require RUNPATH $ORIGIN only and no libnvinfer NEEDED)."""
    tasks = pixi["tasks"]
    for task in ("build-wheel", "test-wheel"):
        env = tasks[task]["default-environment"]
        deps = environment_dependencies(pixi, env)
        assert not CONDA_BUILD_TOOLS & set(deps), f"{task} runs where {CONDA_BUILD_TOOLS & set(deps)} are installed"
    assert tasks["build-wheel"]["cmd"] == "scripts/build.sh"


def test_required_tasks(pixi):
    assert TASKS <= set(pixi["tasks"])


def test_every_task_runs_something_that_exists(pixi, pyproject):
    console_scripts = set(pyproject["project"]["scripts"])
    for name, task in pixi["tasks"].items():
        cmd = task["cmd"] if isinstance(task, dict) else task
        words = shlex.split(cmd)
        target = words[1] if words[0] in ("python", "python3", "bash") else words[0]
        if target in console_scripts:
            # Installed into the environment by `pixi run build`.
            assert "build" in task.get("depends-on", []), f"task {name} runs {target} without building it"
            continue
        path = ROOT / target
        assert path.is_file(), f"task {name} runs {target}, which does not exist"
        if words[0] == target:
            assert os.access(path, os.X_OK), f"task {name} runs {target}, which is not executable"
        for dependency in (task.get("depends-on", []) if isinstance(task, dict) else []):
            assert dependency in pixi["tasks"], f"task {name} depends on unknown task {dependency}"


def test_docs_say_what_a_newcomer_needs():
    doc = (ROOT / "docs" / "conda.md").read_text()
    assert "pixi lock" in doc
    assert "CONDA_OVERRIDE_CUDA" in doc
    assert "pixi.sh/install.sh" in doc or "pixi.sh" in doc, "docs/conda.md does not say how to install pixi"
