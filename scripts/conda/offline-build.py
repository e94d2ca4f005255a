#!/usr/bin/env python3
"""Build the recipe's C++ packages with rattler-build, offline, and install them.

For machines that reach no conda channel: the conda-forge packages the recipe
needs are replaced by stand-ins built first into a local file:// channel
(build/conda-offline/standins), each named and versioned like the
conda-forge package it replaces:
  - with the same files, from the same components: cuda-cudart, cuda-cudart-dev,
    cuda-crt-dev_linux-64 (the nvidia-cuda-runtime and -crt wheels, in
    targets/x86_64-linux/), nlohmann_json (Debian's headers and CMake package),
    libstdcxx and libgcc (this machine's libstdc++.so.6 and libgcc_s.so.1);
  - as wrappers around this machine's tools: cmake, ninja (the project .venv's),
    python (the interpreter running this script), gcc_linux-64 and
    gxx_linux-64 (empty: CMake finds the system compiler; they carry the
    libgcc/libstdcxx run_exports of the real ones), sysroot_linux-64 (empty,
    run_exports __glibc >=2.28), unzip (empty: the system's);
  - empty, because their contents cannot be had here: cuda-version, gtest
    (the C++ tests run elsewhere), libnvinfer and libnvinfer-devel (no
    TensorRT headers exist here, so the plugin is built with
    TTE_WITH_TENSORRT=OFF, passed through an unisolated build environment).
Then it builds libexecutorch, libexecutorch-devel, libtorch-tensorrt-executorch
and libtorch-tensorrt-executorch-devel (CUDA 13.0, linux-64) from
recipe/recipe.yaml (in a copy of the files git does not ignore) with rattler-build's own staging, relinking, link checks and
the recipe's tests (package_contents, scripts, the CMake consumers), solves
and installs them from the file:// channels into a fresh prefix, and checks
the installed plugin and tte-run there with readelf and a clean environment.

What this proves: the recipe's mechanics (staging and inherit, file
selection, build strings, run_exports and inherited dependencies, $ORIGIN
relinking, tests). What it cannot: anything about conda-forge's real
packages (compilers, sysroot, TensorRT).

Usage: scripts/conda/offline-build.py   (continues in .venv-conda; downloads wheels with pip)
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WORK = ROOT / "build" / "conda-offline"
STANDINS = WORK / "standins"
OUTPUT = WORK / "output"
ENV = WORK / "env"
WHEELS = ROOT / "build" / "conda-wheels"
CUDA = "13.0"
TARGET = "targets/x86_64-linux"
CXX_OUTPUTS = ["libexecutorch", "libexecutorch-devel", "libtorch-tensorrt-executorch",
               "libtorch-tensorrt-executorch-devel"]

try:
    import rattler
    import rattler.package_streaming
    from rattler_build import (EnvironmentIsolation, JinjaConfig, PlatformConfig, RenderConfig,
                               Stage0Recipe, ToolConfiguration, VariantConfig)
    from rattler_build.progress import ProgressCallback
except ImportError:
    # Any interpreter can start this script; it continues in .venv-conda.
    venv_python = ROOT / ".venv-conda" / "bin" / "python"
    if not venv_python.exists():
        subprocess.run([str(ROOT / "scripts" / "conda" / "setup-tools.sh")], check=True)
    if Path(sys.prefix).resolve() == venv_python.parent.parent.resolve():
        sys.exit("conda-offline-build: py-rattler-build did not install into .venv-conda")
    os.execv(str(venv_python), [str(venv_python), __file__, *sys.argv[1:]])


def log(message: str) -> None:
    print(f"[conda-offline-build] {message}", flush=True)


class BuildLog(ProgressCallback):
    """rattler-build's messages: all to a file, warnings and errors also here."""

    def __init__(self, path: Path):
        self.file = path.open("w")

    def on_build_step(self, event) -> None:
        self.file.write(f"== {event.step_name}: {event.message}\n")
        self.file.flush()

    def on_log(self, event) -> None:
        self.file.write(f"{event.level}: {event.message}\n")
        self.file.flush()
        if event.level in ("warn", "error"):
            print(f"    rattler-build {event.level}: {event.message}", flush=True)


def fetch_wheel(spec: str) -> Path:
    """A manylinux x86_64 wheel, downloaded with the project's pip (cached)."""
    WHEELS.mkdir(parents=True, exist_ok=True)
    before = set(WHEELS.iterdir())
    platforms = ["manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64"]
    cmd = [str(ROOT / ".venv" / "bin" / "python"), "-m", "pip", "download", "-q", "--no-deps",
           "--only-binary=:all:", "--python-version", "3.12", "-d", str(WHEELS), spec]
    for p in platforms:
        cmd += ["--platform", p]
    subprocess.run(cmd, check=True, stderr=subprocess.DEVNULL)
    name = spec.split("==")[0].replace("-", "_")
    version = spec.split("==")[1].rstrip("*").rstrip(".")
    hits = sorted(p for p in WHEELS.glob(f"{name}-{version}*.whl"))
    if not hits:
        raise SystemExit(f"conda-offline-build: pip gave no wheel for {spec} (new files: {set(WHEELS.iterdir()) - before})")
    return hits[-1]


def extract(wheel: Path, member_prefix: str, dest: Path) -> None:
    with zipfile.ZipFile(wheel) as z:
        for info in z.infolist():
            if info.filename.startswith(member_prefix) and not info.is_dir():
                target = dest / info.filename[len(member_prefix):]
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(z.read(info))


def wrapper(path: Path, program: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'#!/bin/sh\nexec "{program}" "$@"\n')
    path.chmod(0o755)


def standin_contents() -> list[dict]:
    """(name, version, files directory or None, run, run_exports) of each stand-in."""
    src = WORK / "standin-src"
    shutil.rmtree(src, ignore_errors=True)
    cudart = fetch_wheel(f"nvidia-cuda-runtime=={CUDA}.*")
    crt = fetch_wheel(f"nvidia-cuda-crt=={CUDA}.*")
    cudart_version = cudart.name.split("-")[1]
    crt_version = crt.name.split("-")[1]

    d = src / "cuda-cudart"
    extract(cudart, "nvidia/cu13/lib/libcudart.so.13", d / TARGET / "lib" / "libcudart.so.13")
    (d / "lib").mkdir(parents=True)
    os.symlink(f"../{TARGET}/lib/libcudart.so.13", d / "lib" / "libcudart.so.13")
    d = src / "cuda-cudart-dev"
    extract(cudart, "nvidia/cu13/include/", d / TARGET / "include")
    (d / TARGET / "lib").mkdir(parents=True)
    os.symlink("libcudart.so.13", d / TARGET / "lib" / "libcudart.so")
    extract(crt, "nvidia/cu13/include/", src / "cuda-crt-dev" / TARGET / "include")

    d = src / "nlohmann_json"
    shutil.copytree("/usr/include/nlohmann", d / "include" / "nlohmann")
    shutil.copytree("/usr/share/cmake/nlohmann_json", d / "share" / "cmake" / "nlohmann_json")
    for name, lib in (("libstdcxx", "libstdc++.so.6"), ("libgcc", "libgcc_s.so.1")):
        found = subprocess.run(["gcc", f"-print-file-name={lib}"], capture_output=True, text=True,
                               check=True).stdout.strip()
        (src / name / "lib").mkdir(parents=True)
        shutil.copy(os.path.realpath(found), src / name / "lib" / lib)
    wrapper(src / "cmake" / "bin" / "cmake", str(ROOT / ".venv" / "bin" / "cmake"))
    wrapper(src / "cmake" / "bin" / "ctest", str(ROOT / ".venv" / "bin" / "ctest"))
    wrapper(src / "ninja" / "bin" / "ninja", str(ROOT / ".venv" / "bin" / "ninja"))
    interpreter = Path(sys.base_prefix) / "bin" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
    wrapper(src / "python" / "bin" / "python", str(interpreter))

    cuda_pin = f"cuda-version >={CUDA},<{CUDA.split('.')[0]}.{int(CUDA.split('.')[1]) + 1}"
    return [
        {"name": "cuda-version", "version": CUDA},
        {"name": "cuda-cudart", "version": cudart_version, "dir": src / "cuda-cudart", "run": [cuda_pin]},
        {"name": "cuda-cudart-dev", "version": cudart_version, "dir": src / "cuda-cudart-dev",
         "run": [f"cuda-cudart =={cudart_version}", cuda_pin],
         "run_exports": [f"cuda-cudart >={cudart_version},<{int(CUDA.split('.')[0]) + 1}.0a0"]},
        {"name": "cuda-crt-dev_linux-64", "version": crt_version, "dir": src / "cuda-crt-dev"},
        {"name": "nlohmann_json", "version": "3.11.2", "dir": src / "nlohmann_json"},
        {"name": "libstdcxx", "version": "12.2.0", "dir": src / "libstdcxx"},
        {"name": "libgcc", "version": "12.2.0", "dir": src / "libgcc"},
        {"name": "cmake", "version": "3.31.10", "dir": src / "cmake"},
        {"name": "ninja", "version": "1.13.0", "dir": src / "ninja"},
        {"name": "python", "version": f"{sys.version_info[0]}.{sys.version_info[1]}.0", "dir": src / "python"},
        # Build-environment packages pass run_exports on only when strong.
        {"name": "gcc_linux-64", "version": "14.2.0", "run_exports": {"strong": ["libgcc >=12"]}},
        {"name": "gxx_linux-64", "version": "14.2.0", "run": ["gcc_linux-64 ==14.2.0"],
         "run_exports": {"strong": ["libstdcxx >=12", "libgcc >=12"]}},
        {"name": "sysroot_linux-64", "version": "2.28", "run_exports": {"strong": ["__glibc >=2.28,<3.0.a0"]}},
        {"name": "unzip", "version": "6.0"},
        {"name": "gtest", "version": "1.12.1"},
        {"name": "libnvinfer", "version": "11.1.0.106"},
        {"name": "libnvinfer-devel", "version": "11.1.0.106", "run": ["libnvinfer ==11.1.0.106"],
         "run_exports": ["libnvinfer >=11.1.0.106,<12"]},
    ]


def standin_recipe(s: dict) -> str:
    recipe = {
        "package": {"name": s["name"], "version": s["version"]},
        "build": {"number": 0, "dynamic_linking": {"binary_relocation": False}},
        "requirements": {},
        "about": {"summary": f"Stand-in for conda-forge's {s['name']}, for an offline recipe build"},
    }
    if s.get("dir"):
        recipe["source"] = {"path": str(s["dir"])}
        recipe["build"]["script"] = ['cp -a . "$PREFIX/"']
    else:
        recipe["build"]["script"] = ["true"]
    if s.get("run"):
        recipe["requirements"]["run"] = s["run"]
    if s.get("run_exports"):
        recipe["requirements"]["run_exports"] = s["run_exports"]
    return json.dumps(recipe)  # JSON is YAML


def build_standins() -> None:
    shutil.rmtree(STANDINS, ignore_errors=True)
    for s in standin_contents():
        Stage0Recipe.from_yaml(standin_recipe(s)).run_build(
            output_dir=STANDINS, channels=[STANDINS.as_uri()], no_include_recipe=True,
            tool_config=ToolConfiguration(test_strategy="skip"))
    log(f"{len(list(STANDINS.glob('linux-64/*.conda')))} stand-ins in {STANDINS}")


def source_copy() -> Path:
    """The files git does not ignore, copied, so the build sees one consistent tree."""
    src = WORK / "src"
    shutil.rmtree(src, ignore_errors=True)
    listed = subprocess.run(["git", "ls-files", "-z", "-co", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        if (ROOT / name).is_file():
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, src / name, follow_symlinks=False)
    if not (src / "LICENSE").exists():
        log("the repository has no LICENSE, which the recipe packages: using a placeholder for this build only")
        (src / "LICENSE").write_text("placeholder for an offline test build; the repository needs a LICENSE\n")
    return src


def build_recipe() -> list[Path]:
    src = source_copy()
    platform = PlatformConfig(target_platform="linux-64", build_platform="linux-64", host_platform="linux-64")
    variants = VariantConfig.from_file_with_context(src / "recipe" / "variants.yaml",
                                                    JinjaConfig(platform=platform))
    variants = variants.merge(VariantConfig({"cuda_compiler_version": [CUDA], "python": ["3.12"]}))
    rendered = Stage0Recipe.from_file(src / "recipe" / "recipe.yaml").render(
        variants, RenderConfig(platform=platform))
    by_name = {}
    for variant in rendered:
        by_name.setdefault(variant.recipe.package.name, variant)
    shutil.rmtree(OUTPUT, ignore_errors=True)
    # Reach recipe/build.sh only through an unisolated environment.
    os.environ.update(TTE_WITH_TENSORRT="OFF", TTE_RUN_TESTS="OFF")
    packages = []
    for name in CXX_OUTPUTS:
        log(f"rattler-build: {name} {by_name[name].recipe.build.string}")
        result = by_name[name].run_build(
            tool_config=ToolConfiguration(test_strategy="native"), output_dir=OUTPUT,
            channels=[OUTPUT.as_uri(), STANDINS.as_uri()], env_isolation=EnvironmentIsolation.NONE,
            progress_callback=BuildLog(WORK / f"{name}.log"))
        packages += [Path(p) for p in result.packages]
    return packages


def show_metadata(package: Path) -> dict:
    """index.json and run_exports.json of a built package."""
    dest = WORK / "inspect" / package.name
    shutil.rmtree(dest, ignore_errors=True)
    rattler.package_streaming.extract(package, dest)
    index = json.loads((dest / "info" / "index.json").read_text())
    exports_file = dest / "info" / "run_exports.json"
    exports = json.loads(exports_file.read_text()) if exports_file.exists() else {}
    log(f"{package.name}: depends {index.get('depends', [])}; run_exports {exports or 'none'}")
    return {"index": index, "run_exports": exports}


async def install() -> None:
    shutil.rmtree(ENV, ignore_errors=True)
    records = await rattler.solve(
        sources=[OUTPUT.as_uri(), STANDINS.as_uri()],
        specs=["libtorch-tensorrt-executorch-devel", "libtorch-tensorrt-executorch"],
        platforms=["linux-64", "noarch"],
        virtual_packages=[p.into_generic() for p in rattler.VirtualPackage.detect()])
    log("solved: " + ", ".join(f"{r.name.normalized} {r.version} {r.build}" for r in records))
    await rattler.install(records, target_prefix=ENV, show_progress=False)


def check_installed() -> None:
    checker = [sys.executable, str(ROOT / "scripts" / "conda" / "elf-check.py"), "--root", str(ENV),
               "--machine", "Advanced Micro Devices X86-64",
               str(ENV / "lib" / "libexecutorch_backend_tensorrt.so"), str(ENV / "bin" / "tte-run")]
    subprocess.run(checker, check=True)
    clean = {"PATH": f"{ENV / 'bin'}:/usr/bin:/bin", "HOME": os.environ.get("HOME", "/")}
    probe = textwrap.dedent("""
        import ctypes, os, sys
        plugin = ctypes.CDLL(sys.argv[1], mode=os.RTLD_NOW)
        plugin.tte_c_api_version.restype = ctypes.c_uint32
        print("installed plugin loads with RTLD_NOW, C API", plugin.tte_c_api_version())
    """)
    subprocess.run([sys.executable, "-c", probe, str(ENV / "lib" / "libexecutorch_backend_tensorrt.so")],
                   env=clean, check=True)
    subprocess.run([str(ENV / "bin" / "tte-run"), "--help"], env=clean, check=True, stdout=subprocess.DEVNULL)
    log("installed tte-run --help ran with a clean environment")


def main() -> int:
    WORK.mkdir(parents=True, exist_ok=True)
    build_standins()
    packages = build_recipe()
    for package in packages:
        show_metadata(package)
    asyncio.run(install())
    check_installed()
    log("done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
