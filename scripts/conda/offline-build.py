#!/usr/bin/env python3
"""Build recipe/recipe.yaml, unchanged, offline; test every output; install and run it.

For machines that reach no conda channel. The conda-forge packages the recipe
needs come from a local file:// channel of stand-ins (scripts/conda/standins.py
says what each one holds and how close it comes); for the packages
tests/fixtures/conda-forge-snapshot.json lists, their names, versions, build
numbers and run_exports come from that snapshot of what conda-forge publishes,
every build it lists for a job in the channel, and the log says per job what
it lists and what the recipe's requirements take. For each target,
`rattler-build build` (py-rattler-build's CLI entry, with recipe/variants.yaml
narrowed to one CUDA version, the per-CPython outputs (tensorrt,
torch-tensorrt) to linux-aarch64's one stand-in CPython (3.11) there and on
linux-64 to every CPython of the stand-ins (3.10 to 3.13 here: from the
recipe's python_min to the newest this machine has), and python_min kept at
the recipe's 3.10 on linux-64 and narrowed to 3.11 on linux-aarch64) builds
every output the recipe yields, with the recipe's staging, rattler-build's
relinking and link checks, and runs each output's tests:
  linux-64       CUDA 12.9 and 13.4, tests native;
  linux-aarch64  CUDA 13.4 sbsa, cross-compiled on linux-64 with Debian's
                 aarch64 toolchain behind conda-style compiler stand-ins; the
                 tests run in linux-aarch64 environments with qemu-user
                 running every aarch64 program (scripts/conda/qemu-exec.c,
                 in place of binfmt_misc).
The CUDA 13.4 jobs also build torch-tensorrt from Torch-TensorRT's v2.13.0
source against the pytorch 2.13 stand-in of their platform and CPython
(PyPI's torch 2.13.0, CUDA 13.0). linux-64 runs its test under each CPython
it is built for (import, runtime library, ExecuTorch serialization read back
by the plugin); linux-aarch64 cross-builds
it in a second run without tests (its torch stand-in has none of NVIDIA's
CUDA libraries, so torch does not import), installs it into a fresh prefix
and checks that its libraries are aarch64 and link only what it declares.
The recipe names upstream's git tag; this build maps it to the source archive
in shared/sources beside the checkout (no machine here reaches GitHub) and
says so. linux-64 CUDA 12.9 builds no torch-tensorrt (no pytorch stand-in for
it) but builds and tests the tensorrt output it needs (CUDA 12 bindings).
libexecutorch and libexecutorch-devel are built in each platform's CUDA 13.4
job only, dllist (noarch) in linux-64's CUDA 13.4 job only; the other jobs
take them from the output channel (that job's upload), so linux-64 CUDA 13.4
runs first. After each job the log names, per package, the libnvinfer and cuda-version builds its host took (the build
fails on a host package of another CUDA version) and where its host took
libexecutorch-devel from; at the end, the jobs that built libexecutorch (one
per platform, else the build fails). The python stand-ins are linux-64's
CPythons the recipe builds for that conda-forge publishes and this machine
has (3.10 to 3.13 here), and linux-aarch64's Debian 3.11; each logs its
runs, and after each job the log says under which CPython each package's
python test imported and its python scripts ran (the build fails when a python test did not run under each CPython its
python_version names, "*" meaning the newest stand-in, or when a per-CPython
package's tests ran python under another CPython than its own), and for
which CPython series it built the per-CPython outputs (the build fails when
that is not the job's).
The plugin outputs' source is this project's release archive (url and sha256
in the recipe): this build packs the checkout the same way, with
scripts/conda/release-archive.py (`git archive` of HEAD, or the files git
does not ignore when the working tree differs from HEAD; --source-rev packs
a commit instead), maps the url to that file, builds with its sha256, and
says so.
Then, per target, the runtime packages go into a fresh prefix solved from the
channels, where the installed plugin and the compiled binding pass the ELF
check, and the CLI's `doctor` and `inspect` of a packed program and a program
run from Python (recipe/tests/python-run) run with no environment variables;
and a prefix holding what pixi's default environment declares runs the pixi
tasks' scripts (scripts/conda/env-build.sh, env-test.sh), and a prefix holding
what its packages environment declares (the packages built here) runs
`env-test.sh --installed`, the test-packages task.

Usage: scripts/conda/offline-build.py [--target linux-64:13.4 ...] [--no-env-tasks] [--source-rev REV]
Runs under .venv-conda (made by scripts/conda/setup-tools.sh on first use);
downloads wheels with pip and Debian packages with apt-get (cached under
build/); the public TensorRT 11.1 headers come from $TensorRT_ROOT, else
from shared/sdk/tensorrt-11.1 beside the checkout (../shared/...) or beside a
folder above it. Everything it writes is under build/conda-offline.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WORK = ROOT / "build" / "conda-offline"
STANDINS = WORK / "standins"
OUTPUT = WORK / "output"
# linux-64 CUDA 13.4 first: its job builds the linux-64 Python package the
# CUDA 12.9 install uses and libexecutorch(-devel), which the CUDA 12.9 job's
# plugin builds against (from the output channel), as on conda-forge.
TARGETS = ["linux-64:13.4", "linux-64:12.9", "linux-aarch64:13.4"]
# The jobs torch-tensorrt is built in: those a pytorch stand-in (PyPI's torch
# 2.13 wheels of the platform, CUDA 13, one per CPython) matches. linux-64 runs its
# test; linux-aarch64's torch stand-in does not import (no CUDA libraries), so
# that package is built without its test and checked by check_torch_tensorrt.
TORCH_TENSORRT_TARGETS = [("linux-64", "13.4"), ("linux-aarch64", "13.4")]
# The one job that builds dllist (noarch): linux-64's CUDA 13 job, as the
# recipe skips it elsewhere; every other job takes it from the output channel.
DLLIST_TARGET = ("linux-64", "13.4")
# The CPython series every job builds the per-CPython outputs (tensorrt, torch-tensorrt) for:
# linux-aarch64's one stand-in interpreter's, and that of every platform's pytorch stand-in.
BUILD_PYTHON = "3.11"
# The jobs that build them for every CPython the recipe builds for that the stand-ins have
# (job_pythons: 3.10 to 3.13 here), and run their tests under each.
ALL_PYTHONS_TARGETS = [("linux-64", "13.4"), ("linux-64", "12.9")]
QEMU = "/usr/bin/qemu-aarch64-static"
ARM64_SYSROOT = "/usr/aarch64-linux-gnu"
ELF_MACHINE = {"linux-64": "Advanced Micro Devices X86-64", "linux-aarch64": "AArch64"}
ELF_ARCH = {"linux-64": "x86_64", "linux-aarch64": "aarch64"}
# The abi3 baseline the recipe claims for the compiled binding (recipe/variants.yaml's python_min,
# conda-forge's): linux-64 builds with it; linux-aarch64 narrows python_min to its one stand-in
# CPython (3.11), the audit does not.
RECIPE_PYTHON_MIN = re.search(r'^python_min: \["([0-9.]+)"\]$', (ROOT / "recipe" / "variants.yaml").read_text(),
                              re.M).group(1)
# The CPython series recipe/variants.yaml builds for (3.10 to 3.14).
RECIPE_PYTHONS = re.findall(r'^  - (\d+\.\d+)\.\* ', (ROOT / "recipe" / "variants.yaml").read_text(), re.M)
# Every run of a stand-in interpreter is logged here (standins.RUNS_HOOK): which CPython each test ran.
PYTHON_RUNS = WORK / "python-runs.log"
# The pytorch minor recipe/variants.yaml builds torch-tensorrt against.
RECIPE_PYTORCH = re.search(r'^pytorch: \["([0-9.]+)"\]$', (ROOT / "recipe" / "variants.yaml").read_text(),
                           re.M).group(1)

try:
    import rattler
    import yaml
    from rattler.package_streaming import PackageArchive
    from rattler_build import JinjaConfig, PlatformConfig, VariantConfig
except ImportError:
    # Any interpreter can start this script; it continues in .venv-conda.
    venv_python = ROOT / ".venv-conda" / "bin" / "python"
    if not venv_python.exists():
        subprocess.run([str(ROOT / "scripts" / "conda" / "setup-tools.sh")], check=True)
    if Path(sys.prefix).resolve() == venv_python.parent.parent.resolve():
        sys.exit("offline-build: py-rattler-build did not install into .venv-conda")
    os.execv(str(venv_python), [str(venv_python), __file__, *sys.argv[1:]])

sys.path.insert(0, str(Path(__file__).resolve().parent))
import standins  # noqa: E402

# scripts/conda/release-archive.py, which makes the plugin outputs' source archive.
_spec = importlib.util.spec_from_file_location("release_archive",
                                               Path(__file__).resolve().parent / "release-archive.py")
release_archive = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(release_archive)


def log(message: str) -> None:
    print(f"[offline-build {time.strftime('%H:%M:%S')}] {message}", flush=True)


# ---- stand-ins and sources ----------------------------------------------------------

def recipe_requirements(cuda: str) -> dict[str, str]:
    """What the recipe's builds ask of the packages conda-forge publishes in several versions:
    name -> version spec (the variant's pins and the recipe's TensorRT range; python per job_pythons)."""
    context = recipe_context((ROOT / "recipe" / "recipe.yaml").read_text())
    return {"cuda-version": f"=={cuda}", "cuda-cudart-dev": "", "libnvinfer-devel":
            f">={context['tensorrt_min']},<{context['tensorrt_max']}"}


def stand_in_pythons(platform: str) -> list[str]:
    """The CPython series the stand-ins have. linux-64: every series the recipe builds for that
    conda-forge publishes (per the snapshot) and this machine has an interpreter of (3.10 to 3.13
    here), with BUILD_PYTHON (3.11, every job's per-CPython builds') always.
    linux-aarch64: Debian's arm64 3.11, the one arm64 interpreter here."""
    build = BUILD_PYTHON
    if platform != "linux-64":
        return [build]
    published = {b.series for b in standins.published("python", platform, None)}
    here = {v for v in RECIPE_PYTHONS if f"{v}.*" in published and standins.find_python(v) is not None}
    return order(here | {build})


def job_pythons(platform: str, cuda: str) -> list[str]:
    """The CPython series a job builds the per-CPython outputs for: BUILD_PYTHON; in
    ALL_PYTHONS_TARGETS, every stand-in CPython of the platform, and where the job builds
    torch-tensorrt, every one a torch wheel is pinned for (its pytorch stand-in)."""
    if (platform, cuda) not in ALL_PYTHONS_TARGETS:
        return [BUILD_PYTHON]
    pythons = stand_in_pythons(platform)
    if (platform, cuda) in TORCH_TENSORRT_TARGETS:
        pythons = [v for v in pythons if (platform, v) in standins.TORCH_WHEELS]
    return pythons


def python_min(platform: str) -> str:
    """python_min of the builds: the recipe's where the stand-ins have that CPython."""
    return RECIPE_PYTHON_MIN if RECIPE_PYTHON_MIN in stand_in_pythons(platform) else stand_in_pythons(platform)[0]


def make_standins(targets: list[tuple[str, str]]) -> None:
    """The stand-in channel: names, versions, build numbers and run_exports of the packages
    tests/fixtures/conda-forge-snapshot.json lists come from it (standins.check)."""
    platforms = sorted({p for p, _ in targets})
    work = WORK / "standin-files"
    # What conda-forge publishes for each job, per the snapshot, and what its solver takes for the
    # build's host: the channel holds every one of those builds; the solver chooses.
    for platform, cuda in targets:
        requirements = recipe_requirements(cuda)
        if (platform, cuda) in TORCH_TENSORRT_TARGETS:
            requirements["pytorch"] = f"{RECIPE_PYTORCH}.*"
        lines = standins.choices(platform, cuda, requirements)
        for series in job_pythons(platform, cuda):
            lines += standins.choices(platform, cuda, {"python": f"{series}.*"})
        for line in lines:
            log(f"{platform} CUDA {cuda} (conda-forge snapshot): {line}")
    items: list[standins.Standin] = []
    items += standins.tool_standins(work)
    items += standins.other_standins(work, platforms)
    for platform in platforms:
        cudas = sorted({c for p, c in targets if p == platform})
        for cuda in cudas:
            items += standins.cuda_standins(work, platform, cuda)
        items += standins.tensorrt_standins(work, platform, cudas)
        items += standins.compiler_standins(work, platform, ["14.2.0", "15.1.0"], ccache=WORK / "ccache")
        items += standins.runtime_standins(work, platform)
        pythons = stand_in_pythons(platform)
        log(f"{platform}: CPython stand-ins {', '.join(pythons)}")
        items += standins.python_standins(work, platform, pythons, runs_log=PYTHON_RUNS)
        items += standins.python_package_standins(work, platform, pythons)
        if platform != "linux-64":
            items.append(standins.cross_python_standin(work, platform))
    if "linux-64" not in platforms:
        pythons = stand_in_pythons("linux-64")
        items += standins.python_standins(work, "linux-64", pythons, runs_log=PYTHON_RUNS)
        items += standins.python_package_standins(work, "linux-64", pythons)
    items += standins.python_abi3_standins()
    # One per CPython the job builds torch-tensorrt for. A cross build of torch-tensorrt also
    # imports the build machine's torch (setup.py): linux-64's BUILD_PYTHON stand-in, there
    # whenever a linux-aarch64 job builds it (main() orders the jobs).
    for platform, cuda in TORCH_TENSORRT_TARGETS:
        if (platform, cuda) in targets:
            items += standins.pytorch_standins(work, platform, cuda, f"{RECIPE_PYTORCH}.*",
                                               job_pythons(platform, cuda))
            items += standins.torch_build_standins(work, platform)
    problems = standins.check(items)
    if problems:
        raise SystemExit("offline-build: stand-ins disagree with tests/fixtures/conda-forge-snapshot.json:\n  "
                         + "\n  ".join(problems))
    snapshot = {s.name for s in items if standins.snapshot_entry(s.name) is not None}
    for name in sorted(snapshot):
        versions = sorted({(s.version, s.build_string or "", s.subdir) for s in items if s.name == name})
        log(f"stand-in {name} (from the snapshot): " + ", ".join(f"{v} {b} ({d})".replace("  ", " ")
                                                                  for v, b, d in versions))
    standins.build_channel(STANDINS, work, items)


def source_copy(source_rev: str | None = None) -> Path:
    """recipe/'s files that git does not ignore, copied, with the sources mapped to local
    archives: the build reads the recipe from the copy and every source from an archive."""
    src = WORK / "src"
    shutil.rmtree(src, ignore_errors=True)
    listed = subprocess.run(["git", "ls-files", "-z", "-co", "--exclude-standard", "recipe"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        path = ROOT / name
        if path.is_file() or path.is_symlink():
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, src / name, follow_symlinks=False)
    map_upstream_sources(src)
    map_release_archive(src, source_rev)
    return src


def recipe_context(text: str) -> dict[str, str]:
    """The recipe's context values, with the ${{ name }} references among them filled in."""
    block = text.split("\ncontext:\n", 1)[1].split("\n\n", 1)[0]
    context = dict(re.findall(r'^  (\w+): "?([^"\n]+)"?$', block, re.M))
    for key, value in context.items():
        context[key] = re.sub(r"\$\{\{ *(\w+) *\}\}", lambda m: context[m.group(1)], value)
    return context


def map_release_archive(src: Path, source_rev: str | None) -> None:
    """Point the copied recipe's release archive (context release_archive, release_sha256) at
    this checkout's, made by scripts/conda/release-archive.py."""
    recipe = src / "recipe" / "recipe.yaml"
    text = recipe.read_text()
    context = recipe_context(text)
    if source_rev is not None:
        data, commit, version = release_archive.archive_commit(source_rev)
        what = f"git archive of {source_rev} ({commit[:12]})"
    elif release_archive.worktree_is_head():
        data, commit, version = release_archive.archive_commit("HEAD")
        what = f"git archive of HEAD ({commit[:12]})"
    else:
        data, commit, version = release_archive.archive_worktree()
        what = f"the working tree's files, which differ from HEAD ({commit[:12]})"
    if version != context["version"]:
        raise SystemExit(f"offline-build: the archive is of version {version}, the recipe builds {context['version']}")
    archive = WORK / "release" / f"{release_archive.NAME}-{version}.tar.gz"
    archive.parent.mkdir(parents=True, exist_ok=True)
    archive.write_bytes(data)
    digest = hashlib.sha256(data).hexdigest()
    lines = {key: re.search(rf"^  {key}: .+$", text, re.M) for key in ("release_archive", "release_sha256")}
    if not all(lines.values()):
        raise SystemExit("offline-build: recipe/recipe.yaml's context has no release_archive and release_sha256")
    text = text.replace(lines["release_archive"].group(0), f"  release_archive: {archive.as_uri()}")
    text = text.replace(lines["release_sha256"].group(0), f"  release_sha256: {digest}")
    recipe.write_text(text)
    log(f"source {context['release_archive']}: mapped to {archive}, made by scripts/conda/release-archive.py "
        f"from {what}")
    log(f"the recipe renders with that archive's sha256 {digest[:12]}... (context release_sha256 overridden; "
        f"the recipe records {context['release_sha256'][:12]}... for its release)")


# Upstream git sources of the recipe -> the archive of the same commit in
# shared/sources (its README names the commit of each archive).
UPSTREAM_ARCHIVES = {
    "https://github.com/pytorch/TensorRT.git": "TensorRT-2.13.0-trimmed.tar.gz",
}


def shared_sources() -> Path:
    for folder in [ROOT, *ROOT.parents]:
        candidate = folder / "shared" / "sources"
        if (candidate / "README.md").exists():
            return candidate
    raise SystemExit("offline-build: no shared/sources beside the checkout or above it: the upstream source "
                     f"archives ({', '.join(UPSTREAM_ARCHIVES.values())}) are build inputs of the offline build")


def map_upstream_sources(src: Path) -> None:
    """Point the copied recipe's git sources at the local archives of the same commits."""
    recipe = src / "recipe" / "recipe.yaml"
    text = recipe.read_text()
    context = recipe_context(text)
    for url, archive_name in UPSTREAM_ARCHIVES.items():
        match = re.search(rf"^(\s+)git: {re.escape(url)}\n\1rev: (.+)\n", text, re.M)
        if not match:
            raise SystemExit(f"offline-build: recipe/recipe.yaml has no git source {url} with a rev")
        indent, rev = match.group(1), match.group(2).strip()
        rev = re.sub(r"\$\{\{ *(\w+) *\}\}", lambda m: context[m.group(1)], rev)
        sources = shared_sources()
        archive = sources / archive_name
        if rev not in (sources / "README.md").read_text():
            raise SystemExit(f"offline-build: {sources / 'README.md'} does not name commit {rev} for {archive_name}")
        digest = hashlib.sha256(archive.read_bytes()).hexdigest()
        text = text.replace(match.group(0), f"{indent}url: {archive.as_uri()}\n{indent}sha256: {digest}\n")
        log(f"source {url} @ {rev}: mapped to {archive} (sha256 {digest[:12]}...), the same commit")
    recipe.write_text(text)


def qemu_shim() -> Path:
    """scripts/conda/qemu-exec.c, compiled for this machine."""
    out = WORK / "qemu-exec.so"
    source = ROOT / "scripts" / "conda" / "qemu-exec.c"
    if not out.exists() or out.stat().st_mtime < source.stat().st_mtime:
        subprocess.run(["gcc", "-shared", "-fPIC", "-O2", "-Wall", "-Wextra", "-o", str(out), str(source), "-ldl"],
                       check=True)
    return out


def emulation_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """Environment under which aarch64 programs run through qemu-user."""
    env = dict(os.environ if base is None else base)
    shim = str(qemu_shim())
    env.update(TTE_QEMU=QEMU, TTE_QEMU_SYSROOT=ARM64_SYSROOT, TTE_QEMU_MACHINE="183",
               TTE_QEMU_PRELOAD=shim, LD_PRELOAD=shim)
    return env


# ---- building -------------------------------------------------------------------------

def variant_overrides(src: Path, platform: str, cuda: str, torch_tensorrt: bool) -> dict[str, list[str]]:
    """recipe/variants.yaml narrowed to one CUDA version (and its zipped compiler and glibc), with
    torch-tensorrt (its pytorch variant) or without."""
    config = PlatformConfig(target_platform=platform, build_platform="linux-64", host_platform=platform)
    variants = VariantConfig.from_file_with_context(src / "recipe" / "variants.yaml", JinjaConfig(platform=config))
    chosen = variants["cuda_compiler_version"].index(cuda)
    # arm_variant_type is in the zip but exists on linux-aarch64 only. The
    # CUDA version picks the aarch64 job: 13.4 is sbsa's, 12.9 tegra's.
    present = set(variants.keys())
    narrowed = {key: [str(variants[key][chosen])] for key in variants.zip_keys[0] if key in present}
    # The per-CPython outputs are built for the job's CPython series (job_pythons: 3.11, and in
    # linux-64's CUDA 13.4 job also python_min and the newest here); python_min is the recipe's
    # where a stand-in of it exists (linux-64), else 3.11 (linux-aarch64).
    by_series = {str(v).split(".*")[0]: str(v) for v in variants["python"]}  # "3.13" -> "3.13.* *_cp313"
    narrowed["python"] = [by_series[series] for series in job_pythons(platform, cuda)]
    narrowed["python_min"] = [python_min(platform)]
    if not torch_tensorrt:
        # pytorch "0" matches no Torch-TensorRT: torch-tensorrt is skipped, the
        # tensorrt output it needs is still built.
        narrowed["pytorch"] = ["0"]
    return narrowed


def rattler_build(src: Path, platform: str, overrides: dict[str, list[str]], log_name: str,
                  skip_existing: str = "none", tests: bool = True) -> None:
    """`rattler-build build --recipe recipe -m recipe/variants.yaml --variant ...`, through
    py-rattler-build's CLI entry (its per-variant API solves a cross build's host
    environment for the build machine). Tests run for every output, the
    linux-aarch64 ones under qemu-user (emulation_env); `tests` False runs none
    of a cross build's ("native": a linux-aarch64 package is not tested)."""
    test = "native" if platform == "linux-64" or not tests else "native-and-emulated"
    args = dict(recipes=[str(src / "recipe" / "recipe.yaml")], target_platform=platform, build_platform="linux-64",
                channel=[OUTPUT.as_uri(), STANDINS.as_uri()], output_dir=str(OUTPUT),
                variant_config=[str(src / "recipe" / "variants.yaml")], ignore_recipe_variants=True,
                variant_overrides=overrides, test=test, skip_existing=skip_existing)
    code = ("import json, sys, warnings\nwarnings.simplefilter('ignore')\n"
            "from rattler_build.cli_api import build_recipes\nbuild_recipes(**json.loads(sys.argv[1]))\n")
    # The qemu-user preload serves the emulated tests only: a run without tests goes without it (the
    # build machine's torch, which a cross build of torch-tensorrt imports, aborts at exit under it).
    env = dict(os.environ) if platform == "linux-64" or not tests else emulation_env()
    # A test interpreter that dies of a signal prints nothing of its own; with the fault
    # handler it prints where (the test scripts inherit this environment).
    env["PYTHONFAULTHANDLER"] = "1"
    log_path = WORK / log_name
    with log_path.open("w") as log_file:
        result = subprocess.run([sys.executable, "-c", code, json.dumps(args)], env=env,
                                stdout=log_file, stderr=subprocess.STDOUT)
    if result.returncode != 0:
        print(log_path.read_text()[-3000:])
        # The build and test scripts keep their output beside them: a recipe's test
        # scripts in the output's test folder, the python tests' `pip check` in the
        # package's folder of rattler's package cache.
        cache = Path(os.environ.get("RATTLER_CACHE_DIR", Path.home() / ".cache" / "rattler" / "cache"))
        logs = sorted([*OUTPUT.glob("*/*/*/conda_build.log"), *cache.glob("pkgs/*/conda_build.log")],
                      key=lambda p: p.stat().st_mtime)
        if logs:
            print(f"--- {logs[-1]}")
            print(logs[-1].read_text()[-6000:])
            # What the failed test left beside its log (its scripts and their own output).
            folder = logs[-1].parent
            for path in sorted(folder.iterdir()):
                print(f"--- {path.name} ({path.stat().st_size} bytes)" if path.is_file() else f"--- {path.name}/")
                if path.is_file() and path.suffix in (".py", ".sh", ".txt") and path.stat().st_size < 20000:
                    print(path.read_text(errors="replace")[-3000:])
        raise SystemExit(f"offline-build: rattler-build failed for {platform} (log: {log_path})")


def built_packages() -> dict[Path, int]:
    """The packages in the output channel, with their modification times: a job that builds a
    package another job built already rewrites the same file."""
    return {p: p.stat().st_mtime_ns for p in OUTPUT.glob("*/*.conda") if p.parent.name != "broken"}


def rendered_recipe(package: Path) -> dict:
    """info/recipe/rendered_recipe.yaml of a built package: its recipe, variant and the
    dependencies rattler-build resolved for it."""
    data = read_package_file(package, "info/recipe/rendered_recipe.yaml")
    if data is None:
        raise SystemExit(f"offline-build: {package.name} has no info/recipe/rendered_recipe.yaml")
    return yaml.safe_load(data)


def check_host_cuda(platform: str, cuda: str, packages: list[Path]) -> None:
    """Every package the job built took, in its host, only builds for the job's CUDA: each resolved
    host package that depends on cuda-version admits the job's; the log names the libnvinfer
    and cuda-version builds each package was built against."""
    job = rattler.Version(cuda)
    for package in packages:
        resolved = rendered_recipe(package)["finalized_dependencies"].get("host") or {}
        records = resolved.get("resolved", [])
        wrong = []
        for record in records:
            for dep in record.get("depends", []):
                name, _, spec = dep.partition(" ")
                if name == "cuda-version" and spec and not rattler.VersionSpec(spec).matches(job):
                    wrong.append(f"{record['name']} {record['version']} {record['build']} ({dep})")
        shown = [f"{r['name']} {r['version']} {r['build']}"
                 + "".join(f" ({d})" for d in r.get("depends", []) if d.startswith("cuda-version "))
                 for r in records if r["name"] in ("libnvinfer", "cuda-version")]
        if shown:
            log(f"{platform} CUDA {cuda}: {package.name} was built against " + ", ".join(shown))
        if wrong:
            raise SystemExit(f"offline-build: {package.name} ({platform} CUDA {cuda}) was built against another "
                             f"CUDA's packages: {', '.join(wrong)}")


def check_host_origin(platform: str, cuda: str, packages: list[Path]) -> None:
    """Where each package's host took this recipe's own outputs from: the job's build, or (for
    the outputs built in one job per platform) the output channel, an earlier job's upload."""
    names = {p.name for p in packages}
    for package in packages:
        resolved = (rendered_recipe(package)["finalized_dependencies"].get("host") or {}).get("resolved", [])
        for record in resolved:
            if record["name"] in ("libexecutorch", "libexecutorch-devel"):
                origin = "built in this job" if record["fn"] in names else "built by an earlier job"
                log(f"{platform} CUDA {cuda}: {package.name}'s host took {record['fn']} from "
                    f"{record.get('channel', '?')} ({origin})")


def read_package_file(package: Path, name: str) -> bytes | None:
    async def read() -> bytes | None:
        return await (await PackageArchive.from_path(package)).read_file(name)
    return asyncio.run(read())


def package_paths(package: Path) -> set[str]:
    """The files a package installs (its info/paths.json)."""
    return {entry["_path"] for entry in json.loads(read_package_file(package, "info/paths.json"))["paths"]}


def python_runs(offset: int) -> list[tuple[str, Path, str, str]]:
    """(CPython version, sys.prefix, what it ran, the package under test or "-") of the stand-in
    interpreters' runs logged after `offset` (standins.RUNS_HOOK)."""
    if not PYTHON_RUNS.exists():
        return []
    with PYTHON_RUNS.open("rb") as f:
        f.seek(offset)
        lines = f.read().decode().splitlines()
    return [(version, Path(prefix), kind, tested)
            for version, prefix, kind, tested in (line.split("\t") for line in lines)]


def series(version: str) -> str:
    """"3.13" of "3.13.0", of "3.13.* *_cp313"."""
    return ".".join(version.split()[0].split(".")[:2])


def order(versions: set[str]) -> list[str]:
    return sorted(versions, key=standins.series_key)


def check_python_tests(platform: str, cuda: str, packages: list[Path], runs: list[tuple[str, Path, str, str]],
                       untested: set[Path]) -> None:
    """Which CPython each package's tests ran (the runs whose test environment holds that package
    file, standins.RUNS_HOOK): its python test's imports, its scripts. Every python_version entry
    of a python test must have run, a series under that series' stand-in, "*" under the newest;
    a per-CPython package's tests (its variant has python) must have run python, and under its
    own CPython only, unless it was built without tests (`untested`)."""
    pythons = stand_in_pythons(platform)
    for package in packages:
        mine = [(version, kind) for version, _, kind, tested in runs if f"{tested}.conda" == package.name]
        imports = order({v for v, kind in mine if kind == "imports"})
        # Script tests: an interpreter script, or python (or a console script) a command ran.
        scripts = order({v for v, kind in mine if kind in ("script", "other")})
        own = rendered_recipe(package)["build_configuration"]["variant"].get("python")
        which = f"{package.name} (CPython {series(own)})" if own else package.name
        tests = yaml.safe_load(read_package_file(package, "info/tests/tests.yaml") or b"[]")
        wanted = [t["python"].get("python_version") for t in tests if "python" in t]
        asked = [v for entry in wanted if entry for v in (entry if isinstance(entry, list) else [entry])]
        if wanted:
            log(f"{platform} CUDA {cuda}: {which}: python test (python_version: "
                f"{', '.join(asked) or 'none, its build'}) imported under CPython {', '.join(imports) or 'none'}"
                + (f"; its script tests ran python under CPython {', '.join(scripts)}" if scripts else ""))
        elif scripts:
            log(f"{platform} CUDA {cuda}: {which}: its script tests ran python under CPython {', '.join(scripts)}")
        if own and package not in untested:
            ran = {series(v) for v, _ in mine}
            if ran != {series(own)}:
                raise SystemExit(f"offline-build: {package.name}'s tests ran python under CPython "
                                 f"{', '.join(order(ran)) or 'none'}, not under its own, {series(own)}")
        if not wanted:
            continue
        ran = {series(v) for v in imports}
        expected = {pythons[-1] if v == "*" else v.removesuffix(".*") for v in asked}
        if own:
            expected.add(series(own))
        if not imports or not expected <= ran:
            raise SystemExit(f"offline-build: {package.name}'s python test ran under {sorted(ran)}, "
                             f"not under {sorted(expected)}")


def check_job_pythons(platform: str, cuda: str, packages: list[Path]) -> None:
    """The CPython series the job built each per-CPython output for: job_pythons, every one of
    them, for tensorrt and, where the job builds it, torch-tensorrt."""
    built: dict[str, set[str]] = {}
    for package in packages:
        recipe = rendered_recipe(package)
        own = recipe["build_configuration"]["variant"].get("python")
        if own:
            built.setdefault(recipe["recipe"]["package"]["name"], set()).add(series(own))
    expected = set(job_pythons(platform, cuda))
    names = sorted({*built, "tensorrt", *(["torch-tensorrt"] if (platform, cuda) in TORCH_TENSORRT_TARGETS else [])})
    log(f"{platform} CUDA {cuda}: CPython variants built: "
        + "; ".join(f"{name} {', '.join(order(built.get(name, set()))) or 'none'}" for name in names))
    wrong = [f"{name} for CPython {', '.join(order(built.get(name, set()))) or 'none'}" for name in names
             if built.get(name) != expected]
    if wrong:
        raise SystemExit(f"offline-build: {platform} CUDA {cuda} built {'; '.join(wrong)}, "
                         f"expected CPython {', '.join(order(expected))}")


def torch_tensorrt_untested(platform: str, cuda: str) -> bool:
    """Whether the job builds torch-tensorrt without its test (a cross build: linux-aarch64)."""
    return (platform, cuda) in TORCH_TENSORRT_TARGETS and platform != "linux-64"


def build(src: Path, platform: str, cuda: str) -> list[Path]:
    """Every output of one job and its tests. torch-tensorrt, where a pytorch stand-in exists: on
    linux-64 with the rest; on linux-aarch64, whose torch stand-in cannot import (its test
    would), in a second run of the same recipe and variants without tests, where every other
    output is skipped as built, and checked by check_torch_tensorrt instead."""
    before = built_packages()
    runs_offset = PYTHON_RUNS.stat().st_size if PYTHON_RUNS.exists() else 0
    untested = torch_tensorrt_untested(platform, cuda)
    overrides = variant_overrides(src, platform, cuda, (platform, cuda) in TORCH_TENSORRT_TARGETS and not untested)
    outputs = "tensorrt" + (", torch-tensorrt" if (platform, cuda) in TORCH_TENSORRT_TARGETS else "")
    pythons = job_pythons(platform, cuda)
    unpinned = [v for v in stand_in_pythons(platform) if v not in pythons and (platform, cuda) in ALL_PYTHONS_TARGETS]
    log(f"{platform} CUDA {cuda}: rattler-build, every output and its tests; the per-CPython outputs ({outputs}) "
        f"for CPython {', '.join(pythons)}"
        + (f" (not {', '.join(unpinned)}, a stand-in CPython no torch wheel is pinned for)" if unpinned else ""))
    rattler_build(src, platform, overrides, f"build-{platform}-{cuda}.log")
    tested = built_packages()
    if untested:
        log(f"{platform} CUDA {cuda}: rattler-build, torch-tensorrt without its test (torch does not import here)")
        rattler_build(src, platform, variant_overrides(src, platform, cuda, True),
                      f"build-{platform}-{cuda}-torch-tensorrt.log", skip_existing="local", tests=False)
    after = built_packages()
    packages = sorted(p for p, mtime in after.items() if before.get(p) != mtime)
    for package in packages:
        log(f"  built {package.relative_to(OUTPUT)}")
    check_host_cuda(platform, cuda, packages)
    check_host_origin(platform, cuda, packages)
    # What the run without tests wrote.
    untested_packages = {p for p in packages if tested.get(p) != after[p]}
    check_python_tests(platform, cuda, packages, python_runs(runs_offset), untested_packages)
    check_job_pythons(platform, cuda, packages)
    return packages


# ---- environments ---------------------------------------------------------------------

def virtual_packages(platform: str) -> list:
    if platform == "linux-64":
        return [p.into_generic() for p in rattler.VirtualPackage.detect()]
    return [rattler.GenericVirtualPackage(rattler.PackageName(name), rattler.Version(version),
                                          rattler.BuildString(build))
            for name, version, build in (("__unix", "0", "0"), ("__linux", "6.1", "0"),
                                         ("__glibc", "2.36", "0"), ("__archspec", "1", "aarch64"))]


def create_env(prefix: Path, specs: list[str], platform: str, channels: list[Path]) -> list:
    shutil.rmtree(prefix, ignore_errors=True)

    async def solve_and_install():
        records = await rattler.solve(sources=[c.as_uri() for c in channels], specs=specs,
                                      platforms=[platform, "noarch"], virtual_packages=virtual_packages(platform))
        await rattler.install(records, target_prefix=prefix, show_progress=False, platform=rattler.Platform(platform))
        return records
    return asyncio.run(solve_and_install())


def activation(prefix: Path) -> str:
    """Shell lines that run a prefix's activation scripts, as conda would."""
    scripts = sorted((prefix / "etc" / "conda" / "activate.d").glob("*.sh"))
    return "".join(f'. "{s}"\n' for s in scripts)


# ---- installed: the CLI with no environment variables ----------------------------------

def check_abi3(binding: Path) -> None:
    """abi3audit (the wheel's test runs it too): every symbol the binding takes from libpython is in
    the stable ABI of the recipe's python_min, so one package serves that CPython and every later one."""
    abi3audit = ROOT / ".venv" / "bin" / "abi3audit"
    if not abi3audit.exists():
        raise SystemExit("offline-build: .venv/bin/abi3audit is missing: run scripts/setup.sh")
    result = subprocess.run([str(abi3audit), "--strict", "--assume-minimum-abi3", RECIPE_PYTHON_MIN, "--report",
                             str(binding)], capture_output=True, text=True)
    if result.returncode != 0:
        print(result.stdout[-3000:], result.stderr[-3000:])
        raise SystemExit(f"offline-build: {binding.name} is not abi3 within CPython {RECIPE_PYTHON_MIN}")


def check_installed(platform: str, cuda: str) -> None:
    prefix = WORK / f"env-{platform}-{cuda}"
    bs = f"cuda{cuda.replace('.', '')}_*"
    records = create_env(prefix, ["torch-tensorrt-executorch-runtime", f"libtorch-tensorrt-executorch * {bs}",
                                  "libtorch-tensorrt-executorch-devel", f"python {BUILD_PYTHON}.*"],
                         platform, [OUTPUT, STANDINS])
    log(f"{platform} CUDA {cuda}: installed " + ", ".join(f"{r.name.normalized} {r.version} {r.build}" for r in records
                                                         if "tensorrt-executorch" in r.name.normalized
                                                         or "executorch" in r.name.normalized))
    # What the solver took of the packages conda-forge publishes in several versions.
    log(f"{platform} CUDA {cuda}: the solver took " + ", ".join(
        f"{r.name.normalized} {r.version} {r.build}" for r in records
        if r.name.normalized in ("libnvinfer", "cuda-version", "cuda-cudart", "python")))
    # The compiled binding (abi3) links no libpython and nothing of the
    # prefix: it opens the plugin the Python side found in lib/.
    (binding,) = prefix.glob("lib/python3.*/site-packages/torch_tensorrt_executorch_runtime/_native/_compiled*.so")
    subprocess.run([sys.executable, str(ROOT / "scripts" / "conda" / "elf-check.py"), "--root", str(prefix),
                    "--machine", ELF_MACHINE[platform], "--forbid", "libpython",
                    str(prefix / "lib" / "libexecutorch_backend_tensorrt.so"),
                    str(prefix / "lib" / "libtte_provider_tensorrt11.so"), str(prefix / "bin" / "tte-run"),
                    str(binding)], check=True)
    check_abi3(binding)
    log(f"{platform} CUDA {cuda}: the compiled binding is abi3 within CPython {RECIPE_PYTHON_MIN}'s stable ABI")
    clean = {"PATH": f"{prefix / 'bin'}:/usr/bin:/bin"}
    # aarch64: a shell started with the qemu-user preload runs the entry point
    # (whose #! interpreter is the environment's aarch64 python) under qemu;
    # only the emulator's settings are added, and the program never sees the preload.
    env, launcher = clean, []
    if platform != "linux-64":
        env, launcher = emulation_env(clean), ["/bin/sh", "-c", 'exec "$@"', "sh"]
    program = ROOT / "tests" / "fixtures" / "cpp" / "two_methods.pte"
    for args in (["doctor"], ["inspect", str(program)]):
        result = subprocess.run([*launcher, str(prefix / "bin" / "torch-tensorrt-executorch"), *args], env=env,
                                capture_output=True, text=True)
        print(result.stdout.rstrip())
        if result.returncode != 0:
            print(result.stderr[-3000:])
            raise SystemExit(f"offline-build: torch-tensorrt-executorch {args[0]} failed in {prefix}")
        log(f"{platform} CUDA {cuda}: torch-tensorrt-executorch {args[0]} ran with no environment variables")
    # A program run from Python through the compiled binding (the package's own test script).
    result = subprocess.run([*launcher, str(prefix / "bin" / "python"),
                             str(ROOT / "recipe" / "tests" / "python-run" / "run_program.py"),
                             str(ROOT / "tests" / "fixtures" / "cpp" / "add_one_dynamic.pte")],
                            env=env, capture_output=True, text=True, cwd=prefix)
    print(result.stdout.rstrip())
    if result.returncode != 0:
        print(result.stderr[-3000:])
        raise SystemExit(f"offline-build: running a program from Python failed in {prefix}")
    log(f"{platform} CUDA {cuda}: a program ran from Python with no environment variables")


def check_torch_tensorrt(platform: str, cuda: str) -> None:
    """torch-tensorrt built without its test (linux-aarch64): it installs into a fresh prefix solved
    from the channels (dllist from linux-64's CUDA 13 job), and every library it ships is for the
    target's machine and links only what the package declares (the package test's library checks,
    recipe/tests/torch-tensorrt/check_torch_tensorrt.py --links-only, which import nothing)."""
    prefix = WORK / f"env-{platform}-{cuda}-torch-tensorrt"
    bs = f"cuda{cuda.replace('.', '')}_*"
    records = create_env(prefix, [f"torch-tensorrt * {bs}", f"python {BUILD_PYTHON}.*"], platform,
                         [OUTPUT, STANDINS])
    def origin(record) -> str:
        return "output channel" if record.url.startswith(OUTPUT.as_uri()) else "stand-in"
    log(f"{platform} CUDA {cuda}: installed " + ", ".join(
        f"{r.name.normalized} {r.version} {r.build} ({origin(r)})" for r in records
        if r.name.normalized in ("torch-tensorrt", "tensorrt", "dllist", "pytorch", "libnvinfer")))
    (package,) = prefix.glob("lib/python3.*/site-packages/torch_tensorrt")
    subprocess.run([sys.executable, str(ROOT / "recipe" / "tests" / "torch-tensorrt" / "check_torch_tensorrt.py"),
                    "--links-only", str(package), "--machine", ELF_ARCH[platform]], check=True)
    log(f"{platform} CUDA {cuda}: torch-tensorrt's libraries are {ELF_ARCH[platform]} and link only what it declares "
        "(not imported: its torch stand-in has no CUDA libraries)")
    # Its strict package_contents test did not run either: it must hold the files of linux-64's
    # package of the same recipe and CPython, which passed it.
    build = f"cuda{cuda.replace('.', '')}_py{BUILD_PYTHON.replace('.', '')}_*"
    (here,) = OUTPUT.glob(f"{platform}/torch-tensorrt-*-{build}.conda")
    (reference,) = OUTPUT.glob(f"linux-64/torch-tensorrt-*-{build}.conda")
    files, expected = package_paths(here), package_paths(reference)
    if files != expected:
        raise SystemExit(f"offline-build: {here.name} differs from {reference.name}: missing "
                         f"{sorted(expected - files)[:10]}, extra {sorted(files - expected)[:10]}")
    # pip wrote its console script on the build machine: it must run the prefix's python.
    head = (prefix / "bin" / "torchtrtrun").read_text().splitlines()[:3]
    if not any(str(prefix / "bin" / "python") in line for line in head):
        raise SystemExit(f"offline-build: {prefix}/bin/torchtrtrun does not run the prefix's python: {head}")
    log(f"{platform} CUDA {cuda}: {here.name} holds the files of {reference.name} ({len(files)}), "
        "which passed the strict package_contents test; bin/torchtrtrun runs the prefix's python")


def pixi_env_specs(environment: str) -> list[str]:
    """The conda dependencies pixi's `environment` declares for linux-64 (pixi.toml)."""
    with open(ROOT / "pixi.toml", "rb") as f:
        manifest = tomllib.load(f)
    features = manifest["environments"][environment]["features"]
    tables = [manifest.get("dependencies", {})] + [manifest["feature"][f].get("dependencies", {}) for f in features]
    specs = []
    for table in tables:
        for name, value in table.items():
            if isinstance(value, dict):
                # A source dependency on the workspace's package (recipe/): the package just built.
                specs.append(name)
            elif name not in ("rattler-build",):
                specs.append(f"{name} {value}" if value != "*" else name)
    return specs


def run_task_script(prefix: Path, environment: str, build_dir: Path, *command: str) -> None:
    """A pixi task's command (run from the repository root) in `prefix`, with the environment's
    activation and nothing else inherited."""
    env = {"HOME": os.environ.get("HOME", "/"), "CONDA_PREFIX": str(prefix), "PIXI_ENVIRONMENT_NAME": environment,
           "PATH": f"{prefix / 'bin'}:/usr/bin:/bin", "TTE_CONDA_BUILD_DIR": str(build_dir)}
    script = activation(prefix) + "exec " + " ".join(f'"{word}"' for word in command) + "\n"
    log(f"pixi task script {' '.join(command)} ({environment} environment)")
    subprocess.run(["bash", "-c", script], cwd=ROOT, env=env, check=True)


def check_env_tasks() -> None:
    """pixi's `build` and `test` tasks: `build` and `test-native` in a prefix holding the default
    environment's packages, `test-packages` in one holding the packages environment's (the
    packages this build made, where pixi-build would build them from recipe/)."""
    prefix = WORK / "pixi-env"
    shutil.rmtree(WORK / "pixi-build", ignore_errors=True)
    create_env(prefix, pixi_env_specs("default"), "linux-64", [OUTPUT, STANDINS])
    log(f"pixi default environment stand-in: {prefix}")
    run_task_script(prefix, "default", WORK / "pixi-build", "scripts/conda/env-build.sh")
    run_task_script(prefix, "default", WORK / "pixi-build", "scripts/conda/env-test.sh")
    prefix = WORK / "pixi-packages-env"
    shutil.rmtree(WORK / "pixi-packages", ignore_errors=True)
    create_env(prefix, pixi_env_specs("packages"), "linux-64", [OUTPUT, STANDINS])
    log(f"pixi packages environment stand-in: {prefix}")
    run_task_script(prefix, "packages", WORK / "pixi-packages", "scripts/conda/env-test.sh", "--installed")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", nargs="+", default=TARGETS, help="platform:cuda pairs (default: all)")
    parser.add_argument("--no-env-tasks", action="store_true", help="skip the pixi tasks' scripts")
    parser.add_argument("--source-rev", metavar="REV",
                        help="build the plugin outputs from the archive of this commit, not from the checkout")
    args = parser.parse_args()
    unknown = [t for t in args.target if t not in TARGETS]
    if unknown:
        parser.error(f"unknown target {', '.join(unknown)}: expected platform:cuda, one of {', '.join(TARGETS)}")
    targets = [tuple(t.split(":")) for t in args.target]
    # libexecutorch and -devel are built in each platform's CUDA 13 job only: the other jobs take
    # them from the output channel, so that job comes first and cannot be left out.
    for index, (platform, cuda) in enumerate(targets):
        if not cuda.startswith("13.") and not any(p == platform and c.startswith("13.") for p, c in targets[:index]):
            parser.error(f"{platform}:{cuda} builds against libexecutorch-devel from {platform}'s CUDA 13 job "
                         f"(the one job that builds it): name {platform}:{TARGETS[0].split(':')[1]} before it")
        # dllist likewise, in one job of all; a cross build of torch-tensorrt also needs linux-64's torch.
        if ((platform, cuda) in TORCH_TENSORRT_TARGETS and (platform, cuda) != DLLIST_TARGET
                and DLLIST_TARGET not in targets[:index]):
            parser.error(f"{platform}:{cuda} builds torch-tensorrt, which requires dllist (built in "
                         f"{':'.join(DLLIST_TARGET)} only) and cross-builds with linux-64's torch: "
                         f"name {':'.join(DLLIST_TARGET)} before it")
    started = time.time()
    WORK.mkdir(parents=True, exist_ok=True)
    PYTHON_RUNS.unlink(missing_ok=True)
    make_standins(targets)
    log(f"stand-ins ready ({time.time() - started:.0f} s)")
    src = source_copy(args.source_rev)
    shutil.rmtree(OUTPUT, ignore_errors=True)
    OUTPUT.mkdir(parents=True)
    timings = {}
    executorch_jobs: dict[str, list[str]] = {}
    dllist_jobs: list[str] = []
    for platform, cuda in targets:
        t = time.time()
        packages = build(src, platform, cuda)
        if any(p.name.startswith("libexecutorch-") for p in packages):
            executorch_jobs.setdefault(platform, []).append(cuda)
        if any(p.name.startswith("dllist-") for p in packages):
            dllist_jobs.append(f"{platform} CUDA {cuda}")
        check_installed(platform, cuda)
        if torch_tensorrt_untested(platform, cuda):
            check_torch_tensorrt(platform, cuda)
        timings[f"{platform} CUDA {cuda}"] = time.time() - t
    for platform, cudas in executorch_jobs.items():
        jobs = ", ".join(f"CUDA {c}" for c in cudas)
        log(f"{platform}: libexecutorch and libexecutorch-devel were built in {len(cudas)} job(s): {jobs}")
        if len(cudas) != 1:
            raise SystemExit(f"offline-build: libexecutorch was built in more than one {platform} job ({jobs})")
    if DLLIST_TARGET in targets:
        log(f"dllist (noarch) was built in {len(dllist_jobs)} job(s): {', '.join(dllist_jobs)}")
        if len(dllist_jobs) != 1:
            raise SystemExit(f"offline-build: dllist was built in {len(dllist_jobs)} jobs ({', '.join(dllist_jobs)}), "
                             "expected one")
    if not args.no_env_tasks and ("linux-64", "13.4") in targets:
        t = time.time()
        check_env_tasks()
        timings["pixi tasks"] = time.time() - t
    for name, seconds in timings.items():
        log(f"{name}: {seconds:.0f} s")
    log(f"done in {time.time() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
