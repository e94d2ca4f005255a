"""The recipe under conda-forge's global pinning (tests/fixtures/conda-forge-pinning.yaml:
the values that matter, with the CUDA 13 migration) and its conda-forge overrides
(recipe/conda_build_config.yaml): the CUDA jobs conda-forge would run and what
each one builds."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RECIPE_TEXT = (ROOT / "recipe" / "recipe.yaml").read_text()


def summary(outputs: list[dict]) -> set[tuple[str, str]]:
    return {(o["name"], o["build_string"]) for o in outputs}


def cuda_jobs(outputs: list[dict]) -> set[str]:
    return {o["variant"]["cuda_compiler_version"] for o in outputs if "cuda_compiler_version" in o["variant"]}


def test_conda_smithy_enables_cuda_variants():
    """conda-smithy sets CF_CUDA_ENABLED when a line of recipe.yaml, before any '#',
    calls compiler('cuda') (its configure_feedstock regex)."""
    assert re.search(r"""^[^#\n]*compiler\(("cuda"|'cuda')\)""", RECIPE_TEXT, re.M)


def test_jobs_under_the_pinning(rendered_conda_forge):
    # linux-64: CUDA 12.9 and 13.4; no None job, since every output skips it.
    assert cuda_jobs(rendered_conda_forge["linux-64"]) == {"12.9", "13.4"}
    # linux-aarch64: 13.4 (sbsa) only; 12.9 sbsa builds nothing (tegra is opt-in).
    assert cuda_jobs(rendered_conda_forge["linux-aarch64"]) == {"13.4"}
    for o in rendered_conda_forge["linux-aarch64"]:
        if "arm_variant_type" in o["variant"]:
            assert o["variant"]["arm_variant_type"] == "sbsa"


def test_same_packages_as_variants_yaml(rendered, rendered_conda_forge):
    """recipe/variants.yaml holds conda-forge's values: both give the same packages, hashes
    included, except the tegra builds. conda-forge's global pinning has no tegra job: a
    feedstock gets one by opting into conda-forge's arm_variant_type migration (CUDA 12.9),
    which the pinning fixture does not apply (docs/conda.md)."""
    for platform in rendered:
        ours = [o for o in rendered[platform] if o["variant"].get("arm_variant_type") != "tegra"]
        assert summary(rendered_conda_forge[platform]) == summary(ours)
    assert [o for o in rendered["linux-aarch64"] if o["variant"].get("arm_variant_type") == "tegra"]


def test_compilers_and_glibc_per_job(rendered_conda_forge):
    expected = {("linux-64", "12.9"): ("14", "2.28"), ("linux-64", "13.4"): ("15", "2.28"),
                ("linux-aarch64", "13.4"): ("15", "2.34")}
    seen = set()
    for platform, outputs in rendered_conda_forge.items():
        for o in outputs:
            if o["name"] != "libtorch-tensorrt-executorch":
                continue
            cuda = o["variant"]["cuda_compiler_version"]
            gcc, glibc = expected[(platform, cuda)]
            build = o["staging"][0]["requirements"]["build"]
            assert f"gxx_{platform} {gcc}.*" in build
            # conda-forge's TensorRT for linux-aarch64 is built for glibc 2.34.
            assert f"sysroot_{platform} {glibc}.*" in build
            if platform == "linux-aarch64":
                assert "arm-variant * sbsa" in build
            seen.add((platform, cuda))
    assert seen == set(expected)


def test_executorch_runtime_is_one_package_per_platform(rendered_conda_forge):
    """Built in every CUDA job, libexecutorch and libexecutorch-devel come out identical
    (one hash), though the jobs differ in CUDA and compiler."""
    for platform, outputs in rendered_conda_forge.items():
        for name in ("libexecutorch", "libexecutorch-devel"):
            assert len([o for o in outputs if o["name"] == name]) == 1, f"{name} splits on {platform}"


def test_torch_tensorrt_under_the_pytorch213_migration(rendered_conda_forge):
    """With the pytorch213 migration (pytorch 2.13), torch-tensorrt builds in the jobs that
    have TensorRT's Python bindings: linux-64 CUDA 12.9 and 13.4, linux-aarch64 sbsa 13.4."""
    expected = {"linux-64": {"12.9", "13.4"}, "linux-aarch64": {"13.4"}}
    for platform, outputs in rendered_conda_forge.items():
        builds = [o for o in outputs if o["name"] == "torch-tensorrt"]
        assert builds and {o["variant"]["cuda_compiler_version"] for o in builds} == expected[platform]
        assert {o["variant"]["pytorch"] for o in builds} == {"2.13"}


def test_without_the_cuda_compiler_nothing_builds(render_module):
    """What conda-forge's CI gave the recipe before it used compiler('cuda'): only the
    None variant, in which every output is skipped (so no job at all, instead of a
    job that builds only the CUDA-independent packages)."""
    for platform in render_module.PLATFORMS:
        variants = render_module.variant_config(platform, "conda-forge", cuda_enabled=False)
        assert variants["cuda_compiler_version"] == ["None"]
        assert render_module.render(platform, variants=variants) == []


def test_pinning_fixture_names_its_source():
    text = (ROOT / "tests" / "fixtures" / "conda-forge-pinning.yaml").read_text()
    assert "conda-forge-pinning-feedstock" in text and "migrations/cuda130.yaml" in text
