"""The recipe rendered offline for linux-64 and linux-aarch64: which packages
each platform gets, their variants, dependencies, run_exports and tests."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

PLUGIN = "libtorch-tensorrt-executorch"
PLUGIN_DEVEL = "libtorch-tensorrt-executorch-devel"
PYTHON_PACKAGE = "torch-tensorrt-executorch-runtime"
ARCH_OUTPUTS = {"libexecutorch", "libexecutorch-devel", PLUGIN, PLUGIN_DEVEL, "torch-tensorrt"}
PYTHONS = ["3.10", "3.11", "3.12", "3.13", "3.14"]


def by_name(outputs: list[dict], name: str) -> list[dict]:
    return [o for o in outputs if o["name"] == name]


def spec_names(specs: list) -> list[str]:
    """Package names of rendered requirements (strings or pin_* objects)."""
    names = []
    for item in specs:
        if isinstance(item, str):
            names.append(item.split()[0])
        else:
            (_, args), = item.items()
            names.append(args["name"])
    return names


def test_each_platform_gets_every_package(rendered):
    assert {o["name"] for o in rendered["linux-64"]} == ARCH_OUTPUTS | {PYTHON_PACKAGE}
    # The noarch Python package is built once, in the linux-64 job.
    assert {o["name"] for o in rendered["linux-aarch64"]} == ARCH_OUTPUTS


def test_plugin_cuda_variants_per_platform(rendered, versions):
    cuda = sorted(versions["conda_cuda_variants"])
    for name in (PLUGIN, PLUGIN_DEVEL):
        x86 = by_name(rendered["linux-64"], name)
        assert sorted(o["variant"]["cuda_compiler_version"] for o in x86) == cuda
        arm = by_name(rendered["linux-aarch64"], name)
        # conda-forge's TensorRT has linux-aarch64 builds for CUDA 13 (sbsa) only: no tegra.
        assert [o["variant"]["cuda_compiler_version"] for o in arm] == [c for c in cuda if c.startswith("13.")]
        assert all(o["variant"]["arm_variant_type"] == "sbsa" for o in arm)


def test_build_strings_and_numbers_distinguish_cuda(rendered):
    for platform, outputs in rendered.items():
        for o in outputs:
            if o["name"] not in (PLUGIN, PLUGIN_DEVEL, "torch-tensorrt"):
                continue
            cuda = o["variant"]["cuda_compiler_version"]
            assert o["build_string"].startswith("cuda" + cuda.replace(".", "")), o["build_string"]
            expected = 200 if cuda.startswith("13.") else 100
            assert o["build_number"] == expected
            assert o["build_string"].endswith(f"_{expected}")
    numbers = {o["variant"]["cuda_compiler_version"]: o["build_number"] for o in by_name(rendered["linux-64"], PLUGIN)}
    assert numbers["13.0"] > numbers["12.9"], "a solver free to choose should prefer CUDA 13"


def test_executorch_runtime_is_built_once_per_platform(rendered, versions):
    for platform, outputs in rendered.items():
        for name in ("libexecutorch", "libexecutorch-devel"):
            builds = by_name(outputs, name)
            assert len(builds) == 1, f"{name} on {platform} depends on CUDA or Python: {builds}"
            assert builds[0]["version"] == versions["executorch"]
            assert "cuda_compiler_version" not in builds[0]["variant"]


def test_executorch_wheel_source_matches_platform_and_version(rendered, versions):
    arch = {"linux-64": "x86_64", "linux-aarch64": "aarch64"}
    for platform, outputs in rendered.items():
        (lib,) = by_name(outputs, "libexecutorch")
        (staging,) = [s for s in lib["staging"] if s["name"] == "executorch-wheel"]
        assert staging["script"]["file"] == "install-executorch-wheel.sh"
    text = (ROOT / "recipe" / "recipe.yaml").read_text()
    for a in arch.values():
        assert re.search(rf"/executorch-{re.escape(versions['executorch'])}-cp3\d+-cp3\d+-manylinux_2_28_{a}\.whl\n"
                         r"\s+sha256: [0-9a-f]{64}\n", text), f"no pinned executorch wheel for {a}"


def test_plugin_build_dependencies(rendered, versions):
    for platform, outputs in rendered.items():
        for o in by_name(outputs, PLUGIN):
            cuda = o["variant"]["cuda_compiler_version"]
            (staging,) = o["staging"]
            assert staging["name"] == "torch-tensorrt-executorch-build"
            assert staging["script"]["file"] == "build.sh"
            build = staging["requirements"]["build"]
            assert f"gxx_{platform} 14.*" in build and f"gcc_{platform} 14.*" in build
            assert f"sysroot_{platform} 2.28.*" in build
            assert "cmake >=3.28" in build and "ninja" in build
            # The plugin has no CUDA kernels: nvcc is not needed.
            assert not any(str(b).startswith("cuda-nvcc") for b in build)
            host = staging["requirements"]["host"]
            trt = f"libnvinfer-devel >={versions['tensorrt_full_min']},<{versions['tensorrt_full_max_exclusive']}"
            for spec in (f"cuda-version {cuda}.*", "cuda-cudart-dev", f"cuda-crt-dev_{platform}", trt,
                         "nlohmann_json", "gtest"):
                assert spec in host, f"{spec} missing from the staging host of {platform} CUDA {cuda}"
            assert {"pin_subpackage": {"name": "libexecutorch-devel", "exact": True}} in host
            assert staging["requirements"]["ignore_run_exports"] == {"by_name": ["gtest"]}
            if platform == "linux-aarch64":
                assert "arm-variant * sbsa" in build


def test_plugin_run_dependencies(rendered, versions):
    trt = f"libnvinfer >={versions['tensorrt_full_min']},<{versions['tensorrt_full_max_exclusive']}"
    for platform, outputs in rendered.items():
        for o in by_name(outputs, PLUGIN):
            run = o["requirements"]["run"]
            assert {"pin_compatible": {"name": "cuda-version", "lower_bound": "x", "upper_bound": "x"}} in run
            assert trt in run
            assert o["inherits_from"] == "torch-tensorrt-executorch-build" and o["inherit_run_exports"]
            assert o["requirements"]["ignore_run_exports"] == {"by_name": ["cuda-version"]}
            constraints = o["requirements"].get("run_constraints", [])
            assert constraints == (["arm-variant * sbsa"] if platform == "linux-aarch64" else [])
            assert "*/libcuda.so*" in o["dynamic_linking"]["missing_dso_allowlist"]
            assert o["files"] == ["lib/libexecutorch_backend_tensorrt.so", "bin/tte-run"]


def test_only_devel_outputs_carry_run_exports(rendered):
    for platform, outputs in rendered.items():
        for o in outputs:
            exports = o["requirements"].get("run_exports")
            if o["name"].endswith("-devel"):
                assert exports, f"{o['name']} on {platform} has no run_exports"
            else:
                assert not exports, f"{o['name']} on {platform} has run_exports {exports}"
        (et_devel,) = by_name(outputs, "libexecutorch-devel")
        # A delegate is bound to one exact ExecuTorch release.
        assert et_devel["requirements"]["run_exports"] == {
            "weak": [{"pin_subpackage": {"name": "libexecutorch", "exact": True}}]}
        for devel in by_name(outputs, PLUGIN_DEVEL):
            (export,) = devel["requirements"]["run_exports"]["weak"]
            assert export["pin_subpackage"]["name"] == PLUGIN
            assert export["pin_subpackage"]["upper_bound"] == "x.x"
            assert devel["inherit_run_exports"] is False
            assert {"pin_subpackage": {"name": PLUGIN, "exact": True}} in devel["requirements"]["run"]


def test_python_package(rendered, versions, pyproject):
    (o,) = by_name(rendered["linux-64"], PYTHON_PACKAGE)
    assert o["noarch"] == "python" and o["version"] == versions["project"]
    (script,) = pyproject["project"]["scripts"].items()
    assert o["entry_points"] == [f"{script[0]} = {script[1]}"]
    run = o["requirements"]["run"]
    assert f"python >={o['variant']['python_min']}" in run
    assert f"{PLUGIN} =={versions['project']}" in run
    # The wheel's dependencies, in conda-forge's names; executorch and the
    # CUDA runtime arrive through the plugin package.
    wheel_deps = {re.split(r"[<>=!;\s]", d)[0] for d in pyproject["project"]["dependencies"]}
    conda_name = {"flatbuffers": "python-flatbuffers", "numpy": "numpy",
                  "executorch": PLUGIN, "nvidia-cuda-runtime": PLUGIN}
    assert wheel_deps <= set(conda_name), f"new wheel dependency without a conda mapping: {wheel_deps - set(conda_name)}"
    assert {conda_name[d] for d in wheel_deps} <= set(spec_names(run))


def test_torch_tensorrt_repackages_cuda13_wheels_per_python(rendered, versions):
    for platform, outputs in rendered.items():
        builds = by_name(outputs, "torch-tensorrt")
        assert sorted(o["variant"]["python"] for o in builds) == PYTHONS
        for o in builds:
            assert o["version"] == versions["torch_tensorrt"]
            assert o["variant"]["cuda_compiler_version"].startswith("13.")
            py = o["variant"]["python"].replace(".", "")
            assert f"_py{py}_" in o["build_string"]
            run = o["requirements"]["run"]
            assert f"pytorch >={versions['torch_min']},<{versions['torch_max_exclusive']} cuda13*" in run
            assert "cuda-version >=13,<14" in run
            # Torch-TensorRT's [executorch] extra asks for executorch<1.5; the
            # package must not carry that pin.
            assert not any("executorch" in str(r) and "<1.5" in str(r) for r in run)
            if platform == "linux-aarch64":
                assert "cross-python_linux-aarch64" in o["requirements"]["build"]


def test_torch_tensorrt_wheel_pins(versions):
    text = (ROOT / "recipe" / "recipe.yaml").read_text()
    v = re.escape(versions["torch_tensorrt"])
    for arch in ("x86_64", "aarch64"):
        for py in PYTHONS:
            tag = "cp" + py.replace(".", "")
            pattern = (rf'- if: {arch} and python == "{re.escape(py)}"\n\s+then:\n'
                       rf"\s+url: https://files\.pythonhosted\.org/\S+/torch_tensorrt-{v}-{tag}-{tag}-manylinux_2_28_{arch}\.whl\n"
                       r"\s+sha256: [0-9a-f]{64}\n")
            assert re.search(pattern, text), f"no pinned torch-tensorrt wheel for {tag} {arch}"


def test_every_output_has_tests(rendered):
    for platform, outputs in rendered.items():
        for o in outputs:
            kinds = [next(iter(t)) for t in o["tests"]]
            assert "package_contents" in kinds, f"{o['name']} has no package_contents test"
            assert len(kinds) >= 2, f"{o['name']} tests only its file list"
            contents = next(t["package_contents"] for t in o["tests"] if "package_contents" in t)
            if o["name"] != "torch-tensorrt":
                assert contents.get("strict") is True, f"{o['name']}: package_contents is not strict"


def test_cli_and_import_tests(rendered):
    (runtime,) = by_name(rendered["linux-64"], PYTHON_PACKAGE)
    imports = [t["python"]["imports"] for t in runtime["tests"] if "python" in t]
    assert imports == [["torch_tensorrt_executorch_runtime"]]
    scripts = " ".join(str(t["script"]) for t in runtime["tests"] if "script" in t)
    assert "torch-tensorrt-executorch --help" in scripts and "torch-tensorrt-executorch doctor" in scripts
    for plugin in by_name(rendered["linux-64"], PLUGIN):
        scripts = " ".join(str(t["script"]) for t in plugin["tests"] if "script" in t)
        assert "tte-run --help" in scripts and "RTLD_NOW" in scripts


@pytest.mark.parametrize("path", [
    "recipe/build.sh", "recipe/install-executorch-wheel.sh", "recipe/install-python-package.sh",
    "recipe/tests/executorch-consumer/CMakeLists.txt",
    "recipe/tests/plugin-consumer/CMakeLists.txt",
])
def test_recipe_files_exist(path):
    assert (ROOT / path).is_file()


def test_build_script_uses_the_wheels_cmake_entry():
    """recipe/build.sh configures the root CMakeLists.txt, and every option it
    passes is one the CMake sources define."""
    script = (ROOT / "recipe" / "build.sh").read_text()
    assert re.search(r'cmake -S "\$\{SRC_DIR\}"', script)
    cmake_sources = "\n".join(p.read_text() for p in [ROOT / "CMakeLists.txt", *(ROOT / "cmake").glob("*.cmake"),
                                                      ROOT / "cpp" / "CMakeLists.txt"])
    options = set(re.findall(r"-D((?:TTE_|EXECUTORCH_|TensorRT_)\w+)=", script))
    assert {"EXECUTORCH_ROOT", "TTE_CUDA_ROOT", "TTE_INSTALL_RPATH", "TTE_INSTALL_LIBDIR",
            "TTE_INSTALL_INCLUDEDIR", "TTE_INSTALL_BINDIR", "TTE_WITH_TENSORRT", "TTE_BUILD_TESTS"} <= options
    for option in options:
        assert re.search(rf"\b{option}\b", cmake_sources), f"build.sh passes -D{option}, which no CMake file reads"
