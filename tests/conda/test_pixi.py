"""pixi.toml parses, has the shape pixi's manifest schema documents (pixi is not
installed here, so nothing runs it), is a pixi-build package whose recipe is recipe/, its
tasks run something that exists, `build`/`test` are the conda-native build and the conda
packages while the wheel keeps an environment free of conda's compilers, and the docs say
what a newcomer needs (installing pixi, CONDA_OVERRIDE_CUDA, making pixi.lock)."""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

TASKS = {"build", "test", "test-native", "test-packages", "build-wheel", "test-wheel", "lint", "bench",
         "render-recipe", "build-conda", "doctor"}
# The outputs of recipe/ the packages environment installs (built by pixi-build).
PROJECT_PACKAGES = {"libtorch-tensorrt-executorch", "libtorch-tensorrt-executorch-devel",
                    "torch-tensorrt-executorch-runtime"}
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
    """ExecuTorch's C++ runtime is not on conda-forge: the environment builds it from recipe/,
    the workspace's own package."""
    deps = environment_dependencies(pixi, "default")
    assert deps["libexecutorch-devel"] == {"path": "."}
    assert "pixi-build" in pixi["workspace"]["preview"]
    assert "libexecutorch-devel" in (ROOT / "recipe" / "recipe.yaml").read_text()


def test_pixi_build_makes_the_packages_from_the_checkout(pixi):
    """The workspace's build variant is the one the recipe's project sources switch on."""
    assert pixi["workspace"]["build-variants"] == {"tte_source": ["checkout"]}
    recipe = (ROOT / "recipe" / "recipe.yaml").read_text()
    assert recipe.count('if: tte_source is defined and tte_source == "checkout"') == 2


def test_the_workspace_is_a_pixi_build_package(pixi, versions):
    """[package] with pixi-build-rattler-build, which finds recipe/recipe.yaml (its second place
    to look, after recipe.yaml beside the manifest, which must not exist)."""
    package = pixi["package"]
    assert package["build"]["backend"] == {"name": "pixi-build-rattler-build", "version": "*"}
    assert "config" not in package["build"], "the backend finds the recipe by itself"
    assert (ROOT / "recipe" / "recipe.yaml").is_file()
    assert not (ROOT / "recipe.yaml").exists() and not (ROOT / "recipe.yml").exists()
    assert package["version"] == versions["project"] == pixi["workspace"]["version"]
    # The backend takes binary dependencies from the recipe only.
    assert not {"build-dependencies", "host-dependencies", "run-dependencies"} & set(package)
    outputs = set(re.findall(r"^      name: (\S+)$", (ROOT / "recipe" / "recipe.yaml").read_text(), re.M))
    for env in pixi["environments"]:
        for name, spec in environment_dependencies(pixi, env).items():
            if isinstance(spec, dict) and "path" in spec:
                assert spec == {"path": "."}, f"{env}: {name} = {spec}"
                assert name in outputs, f"{env} asks the recipe for {name}, which it does not build"


def test_build_and_test_are_the_conda_native_build_and_the_packages(pixi):
    tasks = pixi["tasks"]
    assert tasks["build"]["cmd"] == "scripts/conda/env-build.sh"
    assert tasks["test-native"]["cmd"] == "scripts/conda/env-test.sh"
    assert "build" in tasks["test-native"]["depends-on"]
    for task in ("build", "test-native"):
        assert "default-environment" not in tasks[task], f"{task} must run in the conda environment"
    # pixi run test: the native build checked, and the packages pixi-build makes checked installed.
    assert "cmd" not in tasks["test"]
    assert tasks["test"]["depends-on"] == ["test-native", {"task": "test-packages", "environment": "packages"}]
    assert tasks["test-packages"] == {**tasks["test-packages"], "cmd": "scripts/conda/env-test.sh --installed",
                                      "default-environment": "packages"}
    packages = environment_dependencies(pixi, "packages")
    assert {name for name, spec in packages.items() if spec == {"path": "."}} == PROJECT_PACKAGES
    assert {"cxx-compiler", "cmake", "ninja"} <= set(packages), "the -devel consumers need a compiler and CMake"
    assert '[ "$installed" = 0 ]' in (ROOT / "scripts" / "conda" / "env-test.sh").read_text()
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
        for dependency in (task.get("depends-on", []) if isinstance(task, dict) else []):
            target, env = (dependency, None) if isinstance(dependency, str) else (
                dependency["task"], dependency.get("environment"))
            assert target in pixi["tasks"], f"task {name} depends on unknown task {target}"
            assert env is None or env in pixi["environments"], f"task {name} names unknown environment {env}"
        if isinstance(task, dict) and "cmd" not in task:
            assert task.get("depends-on"), f"task {name} runs nothing"
            continue
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


def test_docs_say_what_a_newcomer_needs():
    doc = (ROOT / "docs" / "conda.md").read_text()
    assert "pixi lock" in doc
    assert "CONDA_OVERRIDE_CUDA" in doc
    assert "pixi.sh/install.sh" in doc or "pixi.sh" in doc, "docs/conda.md does not say how to install pixi"


# The manifest's shape, against pixi's manifest schema (schema/schema.json of pixi 0.71, the
# version pixi.toml requires): for each table this manifest uses, the keys the schema
# documents and the TOML types each takes (several where the schema allows several: a
# string or { workspace = true }, ...). A key the schema does not have, or a value of
# another type, is an error pixi would report when it reads the manifest.
STR, ARRAY, TABLE, INT, BOOL = str, list, dict, int, bool
SCHEMA = {
    "top": ({"$schema": STR, "activation": TABLE, "build-dependencies": TABLE, "constraints": TABLE,
             "dependencies": TABLE, "dev": TABLE, "environments": TABLE, "exclude-newer": STR, "feature": TABLE,
             "host-dependencies": TABLE, "package": TABLE, "project": TABLE, "pypi-dependencies": TABLE,
             "pypi-exclude-newer": STR, "pypi-options": TABLE, "system-requirements": TABLE, "target": TABLE,
             "tasks": TABLE, "tool": TABLE, "workspace": TABLE}, set()),
    "workspace": ({"authors": ARRAY, "build-variants": TABLE, "build-variants-files": ARRAY, "channel-priority": STR,
                   "channels": ARRAY, "conda-pypi-map": (TABLE, BOOL), "dependencies": TABLE, "description": STR,
                   "documentation": STR, "exclude-newer": STR, "homepage": STR, "license": STR,
                   "license-file": STR, "name": STR, "platforms": ARRAY, "preview": (ARRAY, BOOL),
                   "pypi-options": TABLE, "readme": STR, "repository": STR, "requires-pixi": STR,
                   "s3-options": TABLE, "solve-strategy": STR, "target": TABLE, "version": STR}, {"channels"}),
    "package": ({"authors": (ARRAY, TABLE), "build": TABLE, "build-dependencies": TABLE,
                 "description": (STR, TABLE), "documentation": (STR, TABLE), "extra-dependencies": TABLE,
                 "homepage": (STR, TABLE), "host-dependencies": TABLE, "license": (STR, TABLE),
                 "license-file": (STR, TABLE), "name": (STR, TABLE), "readme": (STR, TABLE),
                 "repository": (STR, TABLE), "run-constraints": TABLE, "run-dependencies": TABLE,
                 "version": (STR, TABLE)}, {"build"}),
    "package.build": ({"additional-dependencies": TABLE, "backend": TABLE, "build-number": INT,
                       "build-string-prefix": STR, "channels": ARRAY, "config": TABLE, "flags": ARRAY,
                       "secrets": ARRAY, "source": TABLE, "target": TABLE}, {"backend"}),
    "package.build.backend": ({"additional-dependencies": TABLE, "build": STR, "build-number": STR, "channel": STR,
                               "channels": ARRAY, "extras": ARRAY, "file-name": STR, "flags": ARRAY,
                               "license": STR, "license-family": STR, "name": STR, "subdir": STR,
                               "track-features": ARRAY, "version": STR, "when": (STR, TABLE),
                               "workspace": BOOL}, set()),
    "feature": ({"activation": TABLE, "build-dependencies": TABLE, "channel-priority": STR, "channels": ARRAY,
                 "constraints": TABLE, "dependencies": TABLE, "dev": TABLE, "host-dependencies": TABLE,
                 "platforms": ARRAY, "pypi-dependencies": TABLE, "pypi-options": TABLE, "solve-strategy": STR,
                 "system-requirements": TABLE, "target": TABLE, "tasks": TABLE}, set()),
    "environment": ({"features": ARRAY, "no-default-feature": BOOL, "solve-group": STR}, set()),
    "task": ({"args": ARRAY, "clean-env": BOOL, "cmd": (ARRAY, STR), "cwd": STR, "default-environment": STR,
              "depends-on": (ARRAY, TABLE, STR), "description": STR, "env": TABLE, "inputs": ARRAY,
              "outputs": ARRAY}, set()),
    "depends-on": ({"args": ARRAY, "environment": STR, "task": STR}, {"task"}),
    # A conda dependency given as a table (a source dependency: path, git).
    "matchspec": ({"branch": STR, "build": STR, "build-number": STR, "channel": STR, "extras": ARRAY,
                   "file-name": STR, "flags": ARRAY, "git": STR, "license": STR, "license-family": STR,
                   "md5": STR, "path": STR, "rev": STR, "sha256": STR, "subdir": STR, "subdirectory": STR,
                   "tag": STR, "track-features": ARRAY, "url": STR, "version": STR, "when": (STR, TABLE)}, set()),
}
ENVIRONMENT_NAME = re.compile(r"^[a-z\d\-]+$")
TASK_NAME = re.compile(r"^[^\s\$]+$")


def shape_errors(table: dict, kind: str, where: str) -> list[str]:
    keys, required = SCHEMA[kind]
    errors = [f"{where}: {key} is missing" for key in sorted(required - set(table))]
    for key, value in table.items():
        if key not in keys:
            errors.append(f"{where}: {key} is not a key pixi's schema documents here")
        elif not isinstance(value, keys[key]) or (isinstance(value, bool) and bool not in (
                keys[key] if isinstance(keys[key], tuple) else (keys[key],))):
            errors.append(f"{where}.{key}: {type(value).__name__} where the schema wants {keys[key]}")
    return errors


def dependency_errors(table: dict, where: str) -> list[str]:
    errors = []
    for name, spec in table.items():
        if isinstance(spec, dict):
            errors += shape_errors(spec, "matchspec", f"{where}.{name}")
        elif not isinstance(spec, str) or not spec:
            errors.append(f"{where}.{name}: a dependency is a string or a table")
    return errors


def test_manifest_shape(pixi):
    errors = shape_errors(pixi, "top", "pixi.toml")
    errors += shape_errors(pixi["workspace"], "workspace", "workspace")
    errors += shape_errors(pixi["package"], "package", "package")
    errors += shape_errors(pixi["package"]["build"], "package.build", "package.build")
    errors += shape_errors(pixi["package"]["build"]["backend"], "package.build.backend", "package.build.backend")
    errors += dependency_errors(pixi.get("dependencies", {}), "dependencies")
    for name, feature in pixi["feature"].items():
        errors += shape_errors(feature, "feature", f"feature.{name}")
        errors += dependency_errors(feature.get("dependencies", {}), f"feature.{name}.dependencies")
    for name, env in pixi["environments"].items():
        if not ENVIRONMENT_NAME.match(name):
            errors.append(f"environments: {name} is not a valid environment name")
        if isinstance(env, dict):
            errors += shape_errors(env, "environment", f"environments.{name}")
        elif not (isinstance(env, list) and all(isinstance(f, str) for f in env)):
            errors.append(f"environments.{name}: a table or a list of feature names")
    for name, task in pixi["tasks"].items():
        if not TASK_NAME.match(name):
            errors.append(f"tasks: {name} is not a valid task name")
        if isinstance(task, str):
            continue
        errors += shape_errors(task, "task", f"tasks.{name}")
        depends = task.get("depends-on", [])
        for dependency in depends if isinstance(depends, list) else [depends]:
            if isinstance(dependency, dict):
                errors += shape_errors(dependency, "depends-on", f"tasks.{name}.depends-on")
                if "environment" in dependency and not ENVIRONMENT_NAME.match(dependency["environment"]):
                    errors.append(f"tasks.{name}.depends-on: {dependency['environment']} is not an environment name")
            elif not (isinstance(dependency, str) and TASK_NAME.match(dependency)):
                errors.append(f"tasks.{name}.depends-on: {dependency!r} is not a task name")
        if "default-environment" in task and not ENVIRONMENT_NAME.match(task["default-environment"]):
            errors.append(f"tasks.{name}.default-environment is not an environment name")
    assert not errors, "\n".join(errors)


def test_manifest_shape_check_finds_mistakes(pixi):
    """The shape check above fails on what pixi would refuse."""
    import copy
    broken = copy.deepcopy(pixi)
    broken["package"]["build"]["backend"]["naem"] = "pixi-build-rattler-build"
    broken["package"]["build"]["build-number"] = "1"
    broken["tasks"]["test"]["depends-on"].append({"environment": "packages"})
    errors = shape_errors(broken["package"]["build"]["backend"], "package.build.backend", "backend")
    errors += shape_errors(broken["package"]["build"], "package.build", "package.build")
    errors += shape_errors(broken["tasks"]["test"]["depends-on"][-1], "depends-on", "depends-on")
    assert len(errors) == 3, errors
    assert shape_errors({"build": {}, "dependencies": {}}, "package", "package")
