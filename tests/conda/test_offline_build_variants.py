"""The CPython variants the offline build (scripts/conda/offline-build.py) builds in each job: the
per-CPython outputs (tensorrt, torch-tensorrt) for CPython 3.11 on linux-aarch64 and, in both
linux-64 jobs, for every CPython the stand-ins have, from the recipe's python_min to the newest
(3.10 to 3.13 where, as on the machines this project is built on, there is no 3.14 interpreter);
every other output once. The recipe is rendered with the build's own variant overrides."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

pytest.importorskip(
    "rattler", reason="py-rattler is not installed here; scripts/conda/test.sh runs these tests in .venv-conda")

ROOT = Path(__file__).resolve().parents[2]
# CPython series this machine has interpreters of, as the offline build's stand-ins look for them.
HERE = ("3.10", "3.11", "3.12", "3.13")
EXPECTED = {("linux-64", "13.4"): list(HERE), ("linux-64", "12.9"): list(HERE), ("linux-aarch64", "13.4"): ["3.11"]}


@pytest.fixture(scope="module")
def offline_build(render_module):
    spec = importlib.util.spec_from_file_location("offline_build_under_test",
                                                  ROOT / "scripts" / "conda" / "offline-build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def interpreters(offline_build, monkeypatch):
    """The stand-ins find an interpreter of each series in HERE, none of 3.14."""
    monkeypatch.setattr(offline_build.standins, "find_python",
                        lambda short: Path(f"python{short}") if short in HERE else None)
    return offline_build


def test_every_job_is_listed(offline_build):
    assert sorted(EXPECTED) == sorted(tuple(t.split(":")) for t in offline_build.TARGETS)


@pytest.mark.parametrize("job", sorted(EXPECTED))
def test_job_pythons(interpreters, job):
    """linux-64's jobs: every CPython here from the recipe's python_min (3.10) to the newest (3.13);
    where the job builds torch-tensorrt, every one has a pinned torch wheel (its pytorch stand-in)."""
    pythons = interpreters.job_pythons(*job)
    assert pythons == EXPECTED[job]
    if job in interpreters.TORCH_TENSORRT_TARGETS:
        assert all((job[0], v) in interpreters.standins.TORCH_WHEELS for v in pythons)
    if job in interpreters.ALL_PYTHONS_TARGETS:
        assert pythons[0] == interpreters.RECIPE_PYTHON_MIN
        assert pythons[-1] == interpreters.stand_in_pythons(job[0])[-1]


@pytest.mark.parametrize("job", sorted(EXPECTED))
def test_the_rendered_jobs_build_each_per_cpython_output_for_the_jobs_pythons(interpreters, render_module, job):
    """The recipe rendered under the build's variant overrides (with torch-tensorrt where the job
    builds it): tensorrt and torch-tensorrt once per CPython of the job, every other output once."""
    from rattler_build import VariantConfig

    platform, cuda = job
    overrides = interpreters.variant_overrides(ROOT, platform, cuda, job in interpreters.TORCH_TENSORRT_TARGETS)
    variants = render_module.variant_config(platform, "variants").merge(VariantConfig(overrides))
    outputs = render_module.render(platform, variants=variants)
    per_cpython: dict[str, list[str]] = {}
    for o in outputs:
        python = o["variant"].get("python")
        if python:
            per_cpython.setdefault(o["name"], []).append(python.split(".*")[0])
    expected = ["tensorrt"] + (["torch-tensorrt"] if job in interpreters.TORCH_TENSORRT_TARGETS else [])
    assert sorted(per_cpython) == expected
    for name in expected:
        assert sorted(per_cpython[name], key=lambda v: tuple(map(int, v.split(".")))) == EXPECTED[job], name
        assert {o["build_string"].split("_")[1] for o in outputs if o["name"] == name} == \
            {"py" + v.replace(".", "") for v in EXPECTED[job]}
    names = [o["name"] for o in outputs if o["name"] not in per_cpython]
    assert len(names) == len(set(names)), names
