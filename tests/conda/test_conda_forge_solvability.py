"""Every requirement of every output, platform and CUDA job can be met by what conda-forge
publishes (tests/fixtures/conda-forge-snapshot.json, read from the feedstocks on
2026-12-04) or by an output of this recipe. A requirement on a package conda-forge does not
have, a version it does not publish, or a CUDA build it does not make fails here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

_rattler = pytest.importorskip(
    "rattler", reason="py-rattler is not installed here; scripts/conda/test.sh runs these tests in .venv-conda")
MatchSpec, Version, VersionSpec = _rattler.MatchSpec, _rattler.Version, _rattler.VersionSpec

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOT = json.loads((ROOT / "tests" / "fixtures" / "conda-forge-snapshot.json").read_text())

# name -> its snapshot entry (a feedstock's other outputs share their entry's builds).
PUBLISHED = {}
for _name, _entry in SNAPSHOT["packages"].items():
    for _alias in [_name, *_entry.get("also", [])]:
        PUBLISHED[_alias] = _entry


def usable_builds(entry: dict, platform: str, job_cuda: str | None,
                  arm_variant: str | None) -> list[tuple[str, str | None]]:
    """(version, cuda) of the builds a job on `platform` with CUDA `job_cuda` can install: a build
    for CUDA X.Y installs where cuda-version is X.Y or later within major X."""
    out = []
    for build in entry["builds"]:
        if arm_variant and build.get("arm_variant") not in (None, arm_variant):
            continue
        for cuda in build["platforms"].get(platform, []) + build["platforms"].get("noarch", []):
            if cuda is None:
                out.append((build["version"], None))
                continue
            if job_cuda is None:
                continue
            major, _, minor = cuda.partition(".")
            job_major, job_minor = job_cuda.split(".")[:2]
            if major == job_major and (not minor or int(minor) <= int(job_minor)):
                out.append((build["version"], cuda))
    return out


def requirements(output: dict) -> list[str]:
    """The host and run requirements an output's build and install solve for, its staging
    build's included (pin_* entries resolve to this recipe's outputs)."""
    specs = []
    sections = [output["requirements"], *(s["requirements"] for s in output.get("staging", []))]
    for section in sections:
        for key in ("build", "host", "run"):
            specs += [s for s in section.get(key, []) if isinstance(s, str)]
    return specs


def check_output(output: dict, platform: str, ours: set[str]) -> list[str]:
    problems = []
    job_cuda = output["variant"].get("cuda_compiler_version")
    arm_variant = output["variant"].get("arm_variant_type") if platform == "linux-aarch64" else None
    for text in requirements(output):
        spec = MatchSpec(text)
        name = spec.name.normalized
        if name in ours or name.startswith("__"):
            continue
        where = f"{output['name']} ({platform}, CUDA {job_cuda}, {arm_variant or '-'}): {text}"
        if name in SNAPSHOT["absent"]:
            problems.append(f"{where}: conda-forge has no {name} ({SNAPSHOT['absent'][name]})")
            continue
        if name in SNAPSHOT["not_read"]:
            continue
        if name not in PUBLISHED:
            problems.append(f"{where}: {name} is neither in the snapshot nor among its unread packages")
            continue
        builds = usable_builds(PUBLISHED[name], platform, job_cuda, arm_variant)
        if spec.version is not None:
            builds = [(v, c) for v, c in builds if VersionSpec(str(spec.version)).matches(Version(v))]
        if spec.build is not None and str(spec.build).startswith("cuda"):
            builds = [(v, c) for v, c in builds if c is not None]
        if not builds:
            problems.append(f"{where}: no conda-forge build of {name} matches")
    return problems


@pytest.mark.parametrize("config", ["variants", "conda-forge"])
def test_every_requirement_is_published(render_module, config):
    problems = []
    rendered = {platform: render_module.render(platform, config) for platform in render_module.PLATFORMS}
    # noarch outputs are built in the linux-64 jobs and installed everywhere.
    ours = {o["name"] for outputs in rendered.values() for o in outputs}
    for platform, outputs in rendered.items():
        for output in outputs:
            problems += check_output(output, platform, ours)
    assert not problems, "\n".join(problems)


def test_the_check_fails_where_conda_forge_falls_short(render_module):
    """The check itself: a TensorRT minor conda-forge never published, a pytorch it does not
    have, a CUDA build it does not make, and a package it lacks all fail."""
    outputs = render_module.render("linux-64")
    ours = {o["name"] for o in outputs}
    (plugin,) = [o for o in outputs if o["name"] == "torch-tensorrt" and "3.11" in o["variant"]["python"]
                 and o["variant"]["cuda_compiler_version"] == "13.4"]
    for bad, expected in (("libnvinfer >=11.0,<11.1", "no conda-forge build of libnvinfer"),
                          ("pytorch >=2.14,<2.15", "no conda-forge build of pytorch"),
                          ("dllist", "conda-forge has no dllist"),
                          ("libnvinfer-lean-devel >=11.3", None)):
        changed = dict(plugin, requirements=dict(plugin["requirements"], run=[bad]), staging=[])
        problems = check_output(changed, "linux-64", ours - {"dllist"})
        if expected is None:
            assert not problems, problems
        else:
            assert problems and expected in problems[0], problems
    tegra = dict(plugin, variant=dict(plugin["variant"], cuda_compiler_version="12.9", arm_variant_type="tegra"),
                 requirements={"run": ["libnvinfer >=11.1"]}, staging=[])
    assert check_output(tegra, "linux-aarch64", ours), "conda-forge has no tegra TensorRT"


def test_the_plugin_installs_next_to_conda_forges_newest_tensorrt(render_module):
    """libnvinfer-devel's run_exports (>=11.1.0.106,<12) admit 11.3.0.99."""
    for platform in render_module.PLATFORMS:
        for o in render_module.render(platform):
            if o["name"] != "libtorch-tensorrt-executorch" or o["variant"].get("arm_variant_type") == "tegra":
                continue
            pins = [MatchSpec(s) for s in o["requirements"]["run"] if isinstance(s, str) and s.startswith("libnvinfer")]
            assert all(p.version is None or VersionSpec(str(p.version)).matches(Version("11.3.0.99"))
                       for p in pins), pins
