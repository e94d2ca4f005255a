#!/usr/bin/env python3
"""Render recipe/recipe.yaml for every variant and platform, offline.

Uses py-rattler-build (no rattler-build binary, no conda channel): parses and
lints the recipe and expands its variants for linux-64 and linux-aarch64
(built on linux-64, as conda-forge cross-compiles) under one of two variant
configurations:
  variants     recipe/variants.yaml, what builds outside conda-forge use;
  conda-forge  conda-forge's global pinning with its CUDA 13 migration
               (tests/fixtures/conda-forge-pinning.yaml) and the recipe's
               conda-forge overrides (recipe/conda_build_config.yaml), with
               CF_CUDA_ENABLED set as conda-smithy sets it for a recipe that
               uses compiler('cuda').
Prints each output with its build string, dependencies and run_exports;
--json prints the same as JSON (what tests/conda reads).

Usage: scripts/conda/render.py [--config variants|conda-forge] [--json] [--platform P ...]
Runs under .venv-conda (made by scripts/conda/setup-tools.sh on first use).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RECIPE = ROOT / "recipe" / "recipe.yaml"
VARIANTS = ROOT / "recipe" / "variants.yaml"
CONDA_FORGE_OVERRIDES = ROOT / "recipe" / "conda_build_config.yaml"
CONDA_FORGE_PINNING = ROOT / "tests" / "fixtures" / "conda-forge-pinning.yaml"
PLATFORMS = ("linux-64", "linux-aarch64")
CONFIGS = ("variants", "conda-forge")
BUILD_PLATFORM = "linux-64"

try:
    from rattler_build import JinjaConfig, PlatformConfig, RenderConfig, Stage0Recipe, VariantConfig
except ImportError:
    if __name__ != "__main__":
        raise
    # Any interpreter can start this script; it continues in .venv-conda.
    venv_python = ROOT / ".venv-conda" / "bin" / "python"
    if not venv_python.exists():
        subprocess.run([str(ROOT / "scripts" / "conda" / "setup-tools.sh")], check=True)
    if Path(sys.prefix).resolve() == venv_python.parent.parent.resolve():
        sys.exit("render: py-rattler-build did not install into .venv-conda")
    os.execv(str(venv_python), [str(venv_python), __file__, *sys.argv[1:]])


def platform_config(platform: str, build_platform: str = BUILD_PLATFORM) -> PlatformConfig:
    return PlatformConfig(target_platform=platform, build_platform=build_platform, host_platform=platform)


def variant_config(platform: str, config: str, cuda_enabled: bool = True) -> VariantConfig:
    """The variant configuration a build for `platform` gets under `config`."""
    jinja = JinjaConfig(platform=platform_config(platform))
    if config == "variants":
        return VariantConfig.from_file_with_context(VARIANTS, jinja)
    if config != "conda-forge":
        raise ValueError(f"unknown variant configuration {config!r}; expected one of {CONFIGS}")
    # The pinning's selectors read CF_CUDA_ENABLED from the environment.
    saved = os.environ.get("CF_CUDA_ENABLED")
    os.environ["CF_CUDA_ENABLED"] = "True" if cuda_enabled else "False"
    try:
        pinning = VariantConfig.from_conda_build_config(CONDA_FORGE_PINNING, jinja)
        overrides = VariantConfig.from_conda_build_config(CONDA_FORGE_OVERRIDES, jinja)
    finally:
        if saved is None:
            os.environ.pop("CF_CUDA_ENABLED")
        else:
            os.environ["CF_CUDA_ENABLED"] = saved
    return pinning.merge(overrides)


def jobs(platform: str, config: str = "variants") -> list[tuple[dict[str, str], VariantConfig]]:
    """The CI jobs a feedstock runs for `platform` under `config`: one per entry of the zip that
    holds cuda_compiler_version (each .ci_support file of conda-smithy's holds one), as
    ({zipped key: value}, the variant configuration narrowed to that entry)."""
    variants = variant_config(platform, config)
    (zipped,) = [keys for keys in variants.zip_keys if "cuda_compiler_version" in keys]
    present = [key for key in zipped if key in variants.keys()]
    out = []
    for index in range(len(variants["cuda_compiler_version"])):
        job = {key: str(variants[key][index]) for key in present}
        out.append((job, variants.merge(VariantConfig({key: [variants[key][index]] for key in present}))))
    return out


def _requirements(section: dict) -> dict:
    keys = ("build", "host", "run", "run_constraints", "run_exports", "ignore_run_exports")
    return {k: section[k] for k in keys if section.get(k)}


def render(platform: str, config: str = "variants", variants: VariantConfig | None = None,
           build_platform: str = BUILD_PLATFORM) -> list[dict]:
    """Every distinct output (name + build string) the recipe yields for one target, built on
    `build_platform` (a cross build from linux-64 unless told otherwise)."""
    variants = variants if variants is not None else variant_config(platform, config)
    config = RenderConfig(platform=platform_config(platform, build_platform))
    rendered = Stage0Recipe.from_file(RECIPE).render(variants, config)
    outputs: dict[tuple[str, str], dict] = {}
    for variant in rendered:
        recipe = variant.recipe.to_dict()
        key = (recipe["package"]["name"], recipe["build"]["string"])
        if key in outputs:
            continue
        staging = recipe.get("staging_caches") or []
        outputs[key] = {
            "platform": platform,
            "name": recipe["package"]["name"],
            "version": recipe["package"]["version"],
            "build_string": recipe["build"]["string"],
            "build_number": recipe["build"].get("number", 0),
            "noarch": recipe["build"].get("noarch"),
            "files": recipe["build"].get("files", []),
            "script": recipe["build"].get("script"),
            "dynamic_linking": recipe["build"].get("dynamic_linking", {}),
            "entry_points": recipe["build"].get("python", {}).get("entry_points", []),
            # abi3: one build for every CPython (build.python.version_independent).
            "python_version_independent": bool(recipe["build"].get("python", {}).get("version_independent")),
            "variant": {k: str(v) for k, v in variant.variant.items()},
            "requirements": _requirements(recipe.get("requirements", {})),
            "inherits_from": (recipe.get("inherits_from") or {}).get("cache_name"),
            "inherit_run_exports": (recipe.get("inherits_from") or {}).get("inherit_run_exports"),
            "staging": [{"name": s["name"], "requirements": _requirements(s.get("requirements", {})),
                         "script": s.get("build", {}).get("script"), "sources": s.get("source", [])}
                        for s in staging],
            "sources": recipe.get("source", []),
            "tests": recipe.get("tests", []),
            "about": recipe.get("about", {}),
            "extra": recipe.get("extra", {}),
        }
    return sorted(outputs.values(), key=lambda o: (o["name"], o["build_string"]))


def _spec(item) -> str:
    if isinstance(item, str):
        return item
    (kind, args), = item.items()
    options = ", ".join(f"{k}={v}" for k, v in args.items() if k != "name")
    return f"{kind}({args['name']}{', ' + options if options else ''})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", choices=CONFIGS, default="variants", help="variant configuration")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a summary")
    parser.add_argument("--platform", nargs="+", default=list(PLATFORMS), choices=PLATFORMS)
    args = parser.parse_args()
    result = {platform: render(platform, args.config) for platform in args.platform}
    if args.json:
        json.dump(result, sys.stdout, indent=1)
        print()
        return 0
    for platform, outputs in result.items():
        print(f"{platform} (built on {BUILD_PLATFORM}, {args.config}): {len(outputs)} packages")
        for o in outputs:
            subdir = "noarch" if o["noarch"] else platform
            abi3 = ", python version independent" if o["python_version_independent"] else ""
            print(f"  {o['name']} {o['version']} {o['build_string']} [{subdir}{abi3}]")
            for staging in o["staging"]:
                for section in ("build", "host"):
                    specs = staging["requirements"].get(section, [])
                    if specs:
                        print(f"      staging {staging['name']} {section}: " + "; ".join(_spec(r) for r in specs))
            reqs = o["requirements"]
            for section in ("build", "host", "run", "run_constraints"):
                if reqs.get(section):
                    print(f"      {section}: " + "; ".join(_spec(r) for r in reqs[section]))
            for strength, specs in reqs.get("run_exports", {}).items():
                print(f"      run_exports ({strength}): " + "; ".join(_spec(r) for r in specs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
