"""The plugin outputs build from this project's release archive (url and sha256, as a
conda-forge recipe names its source), and scripts/conda/release-archive.py makes that archive
the same way every time: one commit, one sha256."""

from __future__ import annotations

import hashlib
import importlib.util
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RECIPE_TEXT = (ROOT / "recipe" / "recipe.yaml").read_text()
SCRIPT = ROOT / "scripts" / "conda" / "release-archive.py"
# The outputs built from this repository's sources (the others repackage or build upstream's).
PROJECT_OUTPUTS = {"libtorch-tensorrt-executorch", "libtorch-tensorrt-executorch-devel",
                   "torch-tensorrt-executorch-runtime"}

needs_git = pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(),
                               reason="needs git and this repository's history")


def context() -> dict[str, str]:
    block = RECIPE_TEXT.split("\ncontext:\n", 1)[1].split("\n\n", 1)[0]
    return dict(re.findall(r'^  (\w+): "?([^"\n]+)"?$', block, re.M))


def release_module():
    spec = importlib.util.spec_from_file_location("release_archive", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_script(*args: str) -> str:
    """The archive's sha256, as the script prints it."""
    out = subprocess.run([sys.executable, str(SCRIPT), *args], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout
    (line,) = out.splitlines()
    sha256, path = line.split("  ", 1)
    assert hashlib.sha256(Path(path).read_bytes()).hexdigest() == sha256
    return sha256


def project_sources(output: dict) -> list[dict]:
    """The sources an output of this project builds from: its own and its staging build's."""
    return [*output["sources"], *(s for staging in output["staging"] for s in staging["sources"])]


def test_project_outputs_build_from_the_release_archive(rendered):
    ctx = context()
    version = ctx["version"]
    url = f"{ctx['project_url']}/releases/download/v{version}/torch-tensorrt-executorch-{version}.tar.gz"
    assert re.fullmatch(r"https://\S+", ctx["project_url"]) and re.fullmatch(r"[0-9a-f]{64}", ctx["release_sha256"])
    for platform, outputs in rendered.items():
        for o in outputs:
            if o["name"] not in PROJECT_OUTPUTS:
                continue
            sources = project_sources(o)
            assert not [s for s in sources if "path" in s], f"{o['name']} ({platform}) builds from a path source"
            ours = [s for s in sources if "executorch.whl" not in str(s.get("file_name", ""))]
            assert ours == [{"url": url, "sha256": ctx["release_sha256"]}], (o["name"], platform, sources)
    # The checkout is a source only in the pixi workspace's variant (pixi.toml's build-variants).
    paths = re.findall(r"^(.*)\n.*then:\n\s*path: \.\.$", RECIPE_TEXT, re.M)
    assert paths and all('if: tte_source is defined and tte_source == "checkout"' in line for line in paths), paths
    assert len(re.findall(r"^\s*-?\s*path:", RECIPE_TEXT, re.M)) == len(paths), "a path source outside the variant"


def test_the_workspace_variant_builds_the_checkout(render_module):
    """pixi-build's variant (tte_source = "checkout") makes the same outputs from the checkout."""
    from rattler_build import VariantConfig

    for platform in render_module.PLATFORMS:
        variants = render_module.variant_config(platform, "variants").merge(VariantConfig({"tte_source": ["checkout"]}))
        outputs = [o for o in render_module.render(platform, "variants", variants) if o["name"] in PROJECT_OUTPUTS]
        assert outputs, platform
        for o in outputs:
            ours = [s for s in project_sources(o) if "executorch.whl" not in str(s.get("file_name", ""))]
            assert ours == [{"path": ".."}], (o["name"], platform, ours)


@needs_git
def test_the_archive_of_a_commit_is_always_the_same(tmp_path):
    """Twice the same sha256 for one commit, and the same bytes as git and gzip make by hand."""
    first = run_script("HEAD", "-o", str(tmp_path / "one.tar.gz"))
    second = run_script("HEAD", "-o", str(tmp_path / "two.tar.gz"))
    assert first == second
    version = release_module().version_at("HEAD")
    archive = subprocess.run(["git", "-c", "tar.umask=0002", "archive", "--format=tar",
                              f"--prefix=torch-tensorrt-executorch-{version}/", "HEAD"],
                             cwd=ROOT, capture_output=True, check=True).stdout
    by_hand = subprocess.run(["gzip", "-n", "-9", "-c"], input=archive, capture_output=True, check=True).stdout
    assert hashlib.sha256(by_hand).hexdigest() == first
    # What the recipe's build and tests read from it, under one folder that rattler-build strips.
    with tarfile.open(tmp_path / "one.tar.gz") as tar:
        names = set(tar.getnames())
    top = f"torch-tensorrt-executorch-{version}"
    assert {n.split("/", 1)[0] for n in names} == {top}
    for path in ("CMakeLists.txt", "LICENSE", "pyproject.toml", "versions.json", "cpp/python/CMakeLists.txt",
                 "tests/fixtures/cpp/two_methods.pte", "tests/fixtures/cpp/add_one_dynamic.pte"):
        assert f"{top}/{path}" in names, f"the release archive has no {path}"


@needs_git
def test_the_working_tree_archive_is_always_the_same(tmp_path):
    assert run_script("--worktree", "-o", str(tmp_path / "one.tar.gz")) == run_script(
        "--worktree", "-o", str(tmp_path / "two.tar.gz"))


@needs_git
def test_recorded_sha256_is_the_archive_of_its_commit(tmp_path):
    """The recipe's release_sha256 is the script's archive of the commit its comment names."""
    (commit,) = re.findall(r"^  # release_sha256: the archive of .*?commit ([0-9a-f]{40})\)?\.$", RECIPE_TEXT, re.M)
    known = subprocess.run(["git", "cat-file", "-e", f"{commit}^{{commit}}"], cwd=ROOT, capture_output=True)
    if known.returncode != 0:
        pytest.skip(f"commit {commit} is not in this clone's history")
    assert run_script(commit, "-o", str(tmp_path / "recorded.tar.gz")) == context()["release_sha256"]


def test_record_rewrites_the_context(tmp_path):
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text(RECIPE_TEXT)
    release_module().record("0" * 64, "1" * 40, "v9.9.9", recipe)
    text = recipe.read_text()
    assert "  # release_sha256: the archive of v9.9.9 (commit " + "1" * 40 + ").\n" in text
    assert "\n  release_sha256: " + "0" * 64 + "\n" in text
    assert text.replace("0" * 64, context()["release_sha256"]).count("\n") == RECIPE_TEXT.count("\n")
