"""The offline build's stand-ins (scripts/conda/standins.py) take their names, versions, build
numbers and run_exports from tests/fixtures/conda-forge-snapshot.json, what conda-forge publishes,
not from this project's pins. The expectations here are read from the snapshot's JSON directly;
the stand-ins' metadata comes from standins.py's *_meta functions, which the offline build's file
trees are attached to (and the offline build runs standins.check on the stand-ins it builds)."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest

pytest.importorskip(
    "rattler", reason="py-rattler is not installed here; scripts/conda/test.sh runs these tests in .venv-conda")

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOT = json.loads((ROOT / "tests" / "fixtures" / "conda-forge-snapshot.json").read_text())
# The offline build's jobs (scripts/conda/offline-build.py TARGETS).
TARGETS = re.search(r"^TARGETS = (\[.*\])$", (ROOT / "scripts" / "conda" / "offline-build.py").read_text(),
                    re.M).group(1)
JOBS = [tuple(t.split(":")) for t in json.loads(TARGETS)]
# Versions of the files the stand-ins are made of (NVIDIA's wheels, Debian's CPython, ...): any
# release within conda-forge's series, or another version where the snapshot names one release.
FILES = {"13.4": ("13.4.92", "13.4.92"), "12.9": ("12.9.79", "12.9.86")}


@pytest.fixture(scope="module")
def standins():
    spec = importlib.util.spec_from_file_location("standins_under_test", ROOT / "scripts" / "conda" / "standins.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def entry(name: str) -> dict:
    (found,) = [e for key, e in SNAPSHOT["packages"].items() if name == key or name in e.get("also", [])]
    return found


def run_exports(name: str, version: str) -> dict | None:
    """The snapshot's run_exports of `name` for `version`, its placeholders filled in here."""
    exports = entry(name).get("run_exports", {}).get(name)
    if not exports:
        return None
    major, minor, patch = ([int(n) for n in re.findall(r"\d+", version)] + [0, 0, 0])[:3]
    values = {"version": version, "major_minor": f"{major}.{minor}", "nodot": f"{major}{minor}",
              "next_major": str(major + 1), "next_minor": f"{major}.{minor + 1}",
              "next_patch": f"{major}.{minor}.{patch + 1}"}
    return {kind: [s.format(**values) for s in specs] for kind, specs in exports.items()}


def fits(build_cuda: str, job_cuda: str) -> bool:
    major, _, minor = build_cuda.partition(".")
    job_major, job_minor = job_cuda.split(".")
    return major == job_major and (not minor or int(minor) <= int(job_minor))


def key(version: str) -> tuple[int, ...]:
    return tuple(int(n) for n in version.split("."))


def all_metadata(standins) -> list:
    items = []
    for platform in sorted({p for p, _ in JOBS}):
        cudas = [c for p, c in JOBS if p == platform]
        for cuda in cudas:
            items += standins.cuda_meta(platform, cuda, *FILES[cuda])
        items += standins.tensorrt_meta(platform, cudas, "11.1.0.106")
        items += standins.python_meta(platform, "3.11.2")
    # linux-64's stand-ins also have the recipe's python_min, 3.12 and the newest CPython here.
    items += [m for v in ("3.10.13", "3.12.1", "3.13.0") for m in standins.python_meta("linux-64", v)]
    for platform, python in standins.TORCH_WHEELS:
        items += standins.pytorch_meta("13.4", "2.13.*", "2.13.0", platform, python)
    items += standins.python_abi3_standins()
    return items


def test_libnvinfer_standins_are_every_build_conda_forge_publishes_for_the_jobs(standins):
    """One stand-in per TensorRT version and CUDA build the snapshot lists for each platform's
    jobs (11.1.0.106 and 11.3.0.99), with its build number and the -devel run_exports."""
    family = ("libnvinfer", "libnvinfer-devel", "libnvinfer-plugin", "libnvinfer-plugin-devel",
              "libnvonnxparser", "libnvonnxparser-devel")
    for platform in sorted({p for p, _ in JOBS}):
        cudas = [c for p, c in JOBS if p == platform]
        expected = {(b["version"], b["build_number"], c) for b in entry("libnvinfer")["builds"]
                    for c in b["platforms"].get(platform, []) if any(fits(c, job) for job in cudas)}
        assert len({v for v, _, _ in expected}) >= 2, "the snapshot lists 11.1 and 11.3 for every job"
        items = standins.tensorrt_meta(platform, cudas, "11.1.0.106")
        for name in family:
            got = {(s.version, s.build_number, s.build_string.split("_")[0]) for s in items if s.name == name}
            assert got == {(v, n, "cuda" + c.replace(".", "")) for v, n, c in expected}, (platform, name)
            for s in items:
                if s.name == name:
                    assert s.subdir == platform
                    assert (s.run_exports or None) == run_exports(name, s.version), (name, s.run_exports)
        headers = {s.version for s in items if s.name == "libnvinfer-headers"}
        assert headers == {v for v, _, _ in expected}
        for s in items:
            if s.name == "libnvinfer-headers" and s.version != "11.1.0.106":
                assert "files of 11.1.0.106" in s.summary, "the 11.3 headers stand-in says its files are 11.1's"


def test_host_pick_is_the_newest_published_within_the_recipes_range(standins):
    """What a job's host gets (libnvinfer-devel >=11.1,<11.2) and what an environment gets
    (the run_exports admit 11.3): the newest build the snapshot lists for the job's CUDA."""
    context = (ROOT / "recipe" / "recipe.yaml").read_text()
    low, high = (re.search(rf'^  {k}: "([0-9.]+)"$', context, re.M).group(1) for k in ("tensorrt_min", "tensorrt_max"))
    for platform, cuda in JOBS:
        builds = [(b["version"], c) for b in entry("libnvinfer")["builds"]
                  for c in b["platforms"].get(platform, []) if fits(c, cuda)]
        newest = max(builds, key=lambda vc: key(vc[0]))
        within = max((vc for vc in builds if key(low) <= key(vc[0])[:2] < key(high)), key=lambda vc: key(vc[0]))
        assert standins.newest("libnvinfer-devel", platform, cuda).version == newest[0]
        host = standins.newest("libnvinfer-devel", platform, cuda, within=f">={low},<{high}")
        assert (host.version, host.cuda) == within
        lines = standins.choices(platform, cuda, {"libnvinfer-devel": f">={low},<{high}"})
        assert f"takes {within[0]} (CUDA {within[1]} build)" in lines[0], lines


@pytest.mark.parametrize("platform,cuda", JOBS)
def test_cuda_standins_carry_the_published_versions(standins, platform, cuda):
    items = {s.name: s for s in standins.cuda_meta(platform, cuda, *FILES[cuda])}
    assert cuda in [b["version"] for b in entry("cuda-version")["builds"]]
    assert items["cuda-version"].version == cuda
    (build,) = [b for b in entry("cuda-cudart-dev")["builds"] if cuda in b["platforms"][platform]]
    for name in ("cuda-cudart", f"cuda-cudart_{platform}", "cuda-cudart-dev", f"cuda-cudart-dev_{platform}"):
        s = items[name]
        if "series" in build:
            assert s.version == FILES[cuda][0] and s.version.startswith(build["series"].rstrip("*"))
        else:
            assert s.version == build["version"]
        assert (s.run_exports or None) == run_exports(name, s.version), name
    (crt,) = [b for b in entry(f"cuda-crt-dev_{platform}")["builds"] if cuda in b["platforms"]["noarch"]]
    assert items[f"cuda-crt-dev_{platform}"].version.startswith(crt["series"].rstrip("*"))


# The torch wheels pinned for the pytorch stand-ins: the CPython series the offline build builds
# torch-tensorrt for on each platform (linux-64: python_min 3.10 to 3.13, the newest here).
TORCH_PYTHONS = [("linux-64", "3.10"), ("linux-64", "3.11"), ("linux-64", "3.12"), ("linux-64", "3.13"),
                 ("linux-aarch64", "3.11")]


def test_torch_wheels_are_pinned_for_each_cpython_built(standins):
    assert sorted(standins.TORCH_WHEELS) == TORCH_PYTHONS


@pytest.mark.parametrize("platform,python", TORCH_PYTHONS)
def test_pytorch_standins(standins, platform, python):
    """One per platform torch-tensorrt is built on and CPython: conda-forge's newest CUDA 13 build of
    pytorch 2.13 there, its build number and run_exports, for that CPython only; its files from
    PyPI's torch 2.13.0 wheel of that CPython and platform."""
    (pytorch,) = standins.pytorch_meta("13.4", "2.13.*", "2.13.0", platform, python)
    builds = [b for b in entry("pytorch")["builds"] if b["version"].startswith("2.13.")
              and any(c is not None and fits(c, "13.4") for c in b["platforms"][platform])]
    newest = max(builds, key=lambda b: key(b["version"]))
    assert pytorch.subdir == platform
    assert pytorch.version == newest["version"]
    assert pytorch.build_number == newest["build_number"] + newest["cuda_build_number_offset"]
    nodot = python.replace(".", "")
    assert pytorch.build_string.startswith("cuda130_") and f"_py{nodot}_" in pytorch.build_string
    assert pytorch.depends == [f"python {python}.*"]
    assert pytorch.run_exports == run_exports("pytorch", pytorch.version)
    url, sha256 = standins.TORCH_WHEELS[(platform, python)]
    arch = {"linux-64": "x86_64", "linux-aarch64": "aarch64"}[platform]
    assert url.startswith("https://files.pythonhosted.org/packages/")
    assert url.endswith(f"/torch-2.13.0-cp{nodot}-cp{nodot}-manylinux_2_28_{arch}.whl")
    assert re.fullmatch(r"[0-9a-f]{64}", sha256)
    others = [h for (p, v), (_, h) in standins.TORCH_WHEELS.items() if (p, v) != (platform, python)]
    assert sha256 not in others


def test_python_and_abi3_standins(standins):
    python = standins.python_meta("linux-aarch64", "3.11.2")[0]
    assert python.version == "3.11.2" and python.run_exports == run_exports("python", "3.11.2")
    abi3 = standins.python_abi3_standins()
    assert sorted(s.version for s in abi3 if s.name == "python-abi3") == \
        sorted(b["version"] for b in entry("python-abi3")["builds"])
    for s in abi3:
        assert s.version in [b["version"] for b in entry(s.name)["builds"]]
        assert (s.run_exports or None) == run_exports(s.name, s.version)


@pytest.mark.parametrize("name,subdir,files_version", [
    ("nlohmann_json", "noarch", "3.11.2"), ("gtest", "linux-64", "1.12.1"), ("gtest", "linux-aarch64", None),
    ("python-flatbuffers", "noarch", "25.9.23"), ("numpy", "linux-aarch64", "2.4.6")])
def test_library_standins_carry_the_published_version(standins, name, subdir, files_version):
    """Files of another version keep conda-forge's version and say where they come from; in a
    series (numpy 2.*) the files' own release is the version."""
    s = standins.snapshot_standin(name, subdir, "linux-64" if subdir == "noarch" else subdir, None, files_version,
                                  f"{name}: files")
    (build,) = entry(name)["builds"]
    if "series" in build:
        assert s.version == files_version
    else:
        assert s.version == build["version"]
        if files_version not in (None, build["version"]):
            assert f"files of {files_version}" in s.summary
    assert (s.run_exports or None) == run_exports(name, s.version)


def test_the_standins_agree_with_the_snapshot_and_the_check_catches_what_does_not(standins):
    items = all_metadata(standins)
    assert standins.check(items) == []
    names = {s.name for s in items}
    for name in ("libnvinfer", "libnvinfer-devel", "cuda-version", "cuda-cudart-dev", "pytorch", "python",
                 "python-abi3", "_python_abi3_support"):
        assert name in names
    by_name = {s.name: s for s in items}
    by_name["libnvinfer"].version = "11.2.0.0"
    by_name["libnvinfer-devel"].run_exports = {"weak": ["libnvinfer >=11.1,<11.2"]}
    by_name["pytorch"].build_number = 200
    by_name["cuda-version"].version = "13.0.1"
    problems = "\n".join(standins.check(items))
    assert "libnvinfer 11.2.0.0" in problems and "publishes no such version" in problems
    assert "libnvinfer-devel" in problems and "run_exports" in problems
    assert "pytorch 2.13.0 (linux-aarch64): build number 200" in problems
    assert "cuda-version 13.0.1" in problems


def test_what_conda_forge_does_not_publish_has_no_standin(standins):
    """A job whose CUDA conda-forge's runtime is not published for, or files outside a series,
    stop the stand-ins rather than be labelled as if published."""
    with pytest.raises(SystemExit, match="publishes no cuda-cudart"):
        standins.cuda_meta("linux-64", "13.0", "13.0.96", "13.0.88")
    with pytest.raises(SystemExit, match="publishes no python for linux-64 within 3.15"):
        standins.python_meta("linux-64", "3.15.0")
    with pytest.raises(SystemExit, match="outside the series"):
        standins.labelled(standins.newest("numpy", "linux-64", None), "1.26.4")
    with pytest.raises(SystemExit, match="no CUDA pytorch"):
        standins.pytorch_meta("13.4", "2.14.*", "2.14.0")
