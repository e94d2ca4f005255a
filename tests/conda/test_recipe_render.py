"""The recipe rendered offline under recipe/variants.yaml for linux-64 and
linux-aarch64: which packages each platform gets, their variants,
dependencies, run_exports, licenses and tests."""

from __future__ import annotations

import copy
import importlib.util
import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RECIPE_TEXT = (ROOT / "recipe" / "recipe.yaml").read_text()

PLUGIN = "libtorch-tensorrt-executorch"
PLUGIN_DEVEL = "libtorch-tensorrt-executorch-devel"
PYTHON_PACKAGE = "torch-tensorrt-executorch-runtime"
ARCH_OUTPUTS = {"libexecutorch", "libexecutorch-devel", PLUGIN, PLUGIN_DEVEL, "tensorrt", "torch-tensorrt"}
PYTHONS = ["3.10", "3.11", "3.12", "3.13", "3.14"]
GLIBC = {"linux-64": "2.28", "linux-aarch64": "2.34"}


def strip_pypi_requirements(text: str) -> str:
    """recipe/strip-pypi-requirements.py's strip(), loaded from its file."""
    path = ROOT / "recipe" / "strip-pypi-requirements.py"
    spec = importlib.util.spec_from_file_location("strip_pypi_requirements", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.strip(text)


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


def python_of(output: dict) -> str:
    return re.match(r"\d+\.\d+", output["variant"]["python"]).group(0)


def test_each_platform_gets_every_package(rendered):
    # The Python package carries the compiled (abi3) binding: one build per platform.
    for platform in ("linux-64", "linux-aarch64"):
        noarch = {"dllist"} if platform == "linux-64" else set()
        assert {o["name"] for o in rendered[platform]} == ARCH_OUTPUTS | {PYTHON_PACKAGE} | noarch


def test_plugin_cuda_variants_per_platform(rendered, versions):
    cuda = sorted(versions["conda_cuda_variants"])
    for name in (PLUGIN, PLUGIN_DEVEL):
        x86 = by_name(rendered["linux-64"], name)
        assert sorted(o["variant"]["cuda_compiler_version"] for o in x86) == cuda
        arm = by_name(rendered["linux-aarch64"], name)
        # linux-aarch64: CUDA 13 on sbsa (conda-forge's TensorRT), and CUDA 12.9
        # on tegra (Jetson on JetPack 6, whose TensorRT is JetPack's).
        assert sorted((o["variant"]["cuda_compiler_version"], o["variant"]["arm_variant_type"]) for o in arm) == [
            ("12.9", "tegra"), *((c, "sbsa") for c in cuda if c.startswith("13."))]


def is_tegra(output: dict) -> bool:
    return output["variant"].get("arm_variant_type") == "tegra"


def test_build_strings_and_numbers_distinguish_cuda(rendered):
    for _platform, outputs in rendered.items():
        for o in outputs:
            if o["name"] not in (PLUGIN, PLUGIN_DEVEL, "tensorrt"):
                continue
            cuda = o["variant"]["cuda_compiler_version"]
            assert o["build_string"].startswith("cuda" + cuda.replace(".", "")), o["build_string"]
            expected = 200 if cuda.startswith("13.") else 100
            assert o["build_number"] == expected
            assert o["build_string"].endswith(f"_{expected}")
    numbers = {o["variant"]["cuda_compiler_version"]: o["build_number"] for o in by_name(rendered["linux-64"], PLUGIN)}
    assert numbers["13.4"] > numbers["12.9"], "a solver free to choose should prefer CUDA 13"


def test_executorch_runtime_is_built_once_per_platform(rendered, versions):
    """One libexecutorch package per platform: one hash, no CUDA key, the devel test's
    compiler left out of it."""
    for platform, outputs in rendered.items():
        for name in ("libexecutorch", "libexecutorch-devel"):
            builds = by_name(outputs, name)
            assert len(builds) == 1, f"{name} on {platform} splits by CUDA or compiler: {builds}"
            assert builds[0]["version"] == versions["executorch"]
            assert not {"cuda_compiler_version", "cxx_compiler_version", "arm_variant_type"} & set(builds[0]["variant"])
        (lib,) = by_name(outputs, "libexecutorch")
        assert lib["requirements"]["build"] == [f"sysroot_{platform} {GLIBC[platform]}.*"]
        assert lib["requirements"]["host"] == ["libstdcxx", "libgcc"]
        # rattler-build relinks and link-checks the repackaged libraries.
        assert lib["dynamic_linking"].get("binary_relocation", True) is not False


# How a job that does not build libexecutorch-devel asks for it: the version, and the build number
# of the recipe's context (the CUDA 13 job's build of the same recipe).
EXECUTORCH_DEVEL_FROM_CHANNEL = ("libexecutorch-devel =={executorch} *_"
                                 + re.search(r"^  build: (\d+)$", RECIPE_TEXT, re.M).group(1))


@pytest.mark.parametrize("config", ["variants", "conda-forge"])
def test_executorch_runtime_is_built_in_one_cuda_job(render_module, versions, config):
    """libexecutorch and -devel are built in exactly one CUDA job per platform (linux-64's
    CUDA 13 job, linux-aarch64's sbsa CUDA 13 job), so no two feedstock jobs upload the same
    file; every other job that builds the plugin takes libexecutorch-devel from the channel
    (the CUDA 13 job's upload), by version and build number, and renders on its own (a
    pin_subpackage of an output its job skips is a render error in rattler-build)."""
    from_channel = EXECUTORCH_DEVEL_FROM_CHANNEL.format(executorch=versions["executorch"])
    pin = {"pin_subpackage": {"name": "libexecutorch-devel", "exact": True}}
    for platform in render_module.PLATFORMS:
        builders = {name: [] for name in ("libexecutorch", "libexecutorch-devel")}
        plugin_jobs = 0
        for job, variants in render_module.jobs(platform, config):
            outputs = render_module.render(platform, variants=variants)
            for name, built in builders.items():
                if by_name(outputs, name):
                    built.append(job)
            plugins = by_name(outputs, PLUGIN) + by_name(outputs, PLUGIN_DEVEL)
            plugin_jobs += bool(plugins)
            here = bool(by_name(outputs, "libexecutorch-devel"))
            for o in plugins:
                sections = [o["requirements"].get("host", []) if o["name"] == PLUGIN else o["requirements"]["run"],
                            *(s["requirements"]["host"] for s in o["staging"])]
                for specs in sections:
                    assert (pin in specs) == here and (from_channel in specs) == (not here), (platform, job, specs)
        for name, built in builders.items():
            assert len(built) == 1, f"{name} on {platform} ({config}) is built in {len(built)} CUDA jobs: {built}"
            assert built[0]["cuda_compiler_version"].startswith("13."), built
            assert built[0].get("arm_variant_type", "sbsa") == "sbsa", built
        if platform == "linux-64":
            assert plugin_jobs == 2, "the linux-64 CUDA 12.9 and 13 jobs both build the plugin"


DLLIST_VERSION = re.search(r'^  dllist_version: "([0-9.]+)"$', RECIPE_TEXT, re.M).group(1)


@pytest.mark.parametrize("config", ["variants", "conda-forge"])
def test_dllist_is_built_in_one_job(render_module, config):
    """dllist is noarch: one package serves every platform and CUDA job, so exactly one job of
    all builds it (linux-64's CUDA 13 job) and no two feedstock jobs upload the same file. Every
    other job that builds torch-tensorrt, which requires it, renders on its own and names it by a
    plain spec, which the channel that job uploads to satisfies."""
    dllist = f"dllist >={DLLIST_VERSION},<{int(DLLIST_VERSION.split('.')[0]) + 1}"
    builders, takers = [], []
    for platform in render_module.PLATFORMS:
        for job, variants in render_module.jobs(platform, config):
            outputs = render_module.render(platform, variants=variants)
            if by_name(outputs, "dllist"):
                builders.append((platform, job))
            for o in by_name(outputs, "torch-tensorrt"):
                assert dllist in o["requirements"]["run"], (platform, job, o["requirements"]["run"])
                if not by_name(outputs, "dllist"):
                    takers.append((platform, job["cuda_compiler_version"]))
    assert len(builders) == 1, f"dllist ({config}) is built in {len(builders)} jobs: {builders}"
    ((platform, job),) = builders
    assert platform == "linux-64" and job["cuda_compiler_version"].startswith("13."), builders
    assert ("linux-aarch64", "13.4") in takers and ("linux-64", "12.9") in takers, takers


def test_executorch_wheel_source_matches_platform_and_version(rendered, versions):
    for _platform, outputs in rendered.items():
        (lib,) = by_name(outputs, "libexecutorch")
        (staging,) = [s for s in lib["staging"] if s["name"] == "executorch-wheel"]
        assert staging["script"]["file"] == "install-executorch-wheel.sh"
        # The delegates that load vendor SDKs conda does not have are left out.
        assert not [f for f in lib["files"] if "openvino" in f or "qnn" in f]
    for arch in ("x86_64", "aarch64"):
        assert re.search(rf"/executorch-{re.escape(versions['executorch'])}-cp3\d+-cp3\d+-manylinux_2_28_{arch}\.whl\n"
                         r"\s+sha256: [0-9a-f]{64}\n", RECIPE_TEXT), f"no pinned executorch wheel for {arch}"


@pytest.mark.parametrize("target, build, arch", [
    ("linux-64", "linux-64", "x86_64"),
    ("linux-aarch64", "linux-64", "x86_64"),  # cross: flatc runs on the x86-64 build machine
    ("linux-aarch64", "linux-aarch64", "aarch64"),  # native: a Jetson or an aarch64 runner
])
def test_python_package_runs_the_build_machines_flatc(render_module, target, build, arch):
    """The .pte reader's bindings are generated by the executorch wheel's flatc, which runs on
    the build machine: its wheel is the build machine's, whatever the target."""
    (o,) = by_name(render_module.render(target, build_platform=build), PYTHON_PACKAGE)
    wheels = [s for s in o["sources"] if str(s.get("url", "")).endswith(".whl")]
    assert len(wheels) == 1 and wheels[0]["file_name"] == "executorch.whl", o["sources"]
    assert wheels[0]["url"].endswith(f"_{arch}.whl"), wheels[0]["url"]


def test_third_party_licenses_ship_with_libexecutorch(rendered):
    (lib,) = by_name(rendered["linux-64"], "libexecutorch")
    files = lib["about"]["license_file"]
    kept = sorted(p.name for p in (ROOT / "recipe" / "licenses" / "executorch").iterdir())
    assert sorted(Path(f).name for f in files if f.startswith("licenses/")) == kept, "a license file is not shipped"
    assert "executorch-LICENSE" in files
    readme = (ROOT / "recipe" / "licenses" / "executorch" / "README.md").read_text()
    for component in ("XNNPACK", "KleidiAI", "pthreadpool", "cpuinfo", "FP16", "FXdiv", "FlatBuffers",
                      "FlatCC", "Eigen", "pocketfft", "PyTorch"):
        assert component in readme, f"{component} is not listed in the third-party license table"
    for name in kept:
        if name != "README.md":
            assert name in readme, f"{name} is shipped but not explained"
    for spdx in ("BSD-3-Clause", "BSD-2-Clause", "MIT", "Apache-2.0", "MPL-2.0"):
        assert spdx in lib["about"]["license"]


def test_executorch_headers_ship_pytorch_license(rendered):
    """libexecutorch-devel's headers include PyTorch's c10 headers."""
    (devel,) = by_name(rendered["linux-64"], "libexecutorch-devel")
    assert devel["about"]["license_file"] == ["executorch-LICENSE", "licenses/executorch/PyTorch-LICENSE"]


def test_plugin_build_dependencies(rendered, versions):
    compilers = {"12.9": "14", "13.4": "15"}
    for platform, outputs in rendered.items():
        for o in by_name(outputs, PLUGIN):
            cuda = o["variant"]["cuda_compiler_version"]
            (staging,) = o["staging"]
            assert staging["name"] == "torch-tensorrt-executorch-build"
            assert staging["script"]["file"] == "build.sh"
            build = staging["requirements"]["build"]
            gcc = compilers[cuda]
            assert f"gxx_{platform} {gcc}.*" in build and f"gcc_{platform} {gcc}.*" in build
            assert f"sysroot_{platform} {GLIBC[platform]}.*" in build
            # conda-forge enables CUDA variants only for recipes using the CUDA compiler.
            assert f"cuda-nvcc_{platform} {cuda}.*" in build
            assert "cmake >=3.28" in build and "ninja" in build
            host = staging["requirements"]["host"]
            trt = f"libnvinfer-devel >={versions['tensorrt_full_min']},<{versions['tensorrt_full_max_exclusive']}"
            for spec in (f"cuda-version =={cuda}", "cuda-cudart-dev", f"cuda-crt-dev_{platform}",
                         "nlohmann_json", "gtest"):
                assert spec in host, f"{spec} missing from the staging host of {platform} CUDA {cuda}"
            # conda-forge has no tegra TensorRT: that build takes TensorRT 10's
            # headers from the build's TensorRT root and links none.
            assert (trt in host) == (not is_tegra(o))
            env = staging["script"]["env"]
            assert env["TTE_TENSORRT_MAJOR"] == ("10" if is_tegra(o) else "11")
            assert env.get("TTE_ARM_VARIANT", "") == o["variant"].get("arm_variant_type", "")
            # Pinned where the job builds it (CUDA 13), from the channel elsewhere.
            et_devel = ({"pin_subpackage": {"name": "libexecutorch-devel", "exact": True}} if cuda.startswith("13.")
                        else EXECUTORCH_DEVEL_FROM_CHANNEL.format(executorch=versions["executorch"]))
            assert et_devel in host
            assert staging["requirements"]["ignore_run_exports"] == {"by_name": ["gtest"]}
            variant = o["variant"].get("arm_variant_type")
            assert (f"arm-variant * {variant}" in build) == (platform == "linux-aarch64")
            # The output's own build carries the sysroot rattler-build's link checks read.
            assert o["requirements"]["build"] == [f"sysroot_{platform} {GLIBC[platform]}.*"]


def test_plugin_run_dependencies(rendered, versions):
    trt = f"libnvinfer-devel >={versions['tensorrt_full_min']},<{versions['tensorrt_full_max_exclusive']}"
    for platform, outputs in rendered.items():
        for o in by_name(outputs, PLUGIN):
            run = o["requirements"]["run"]
            assert {"pin_compatible": {"name": "cuda-version", "lower_bound": "x", "upper_bound": "x"}} in run
            # libnvinfer only through libnvinfer-devel's run_exports (any 11.x from the
            # one built against: 11.3 too), never a pin to one minor; tegra: TensorRT is
            # JetPack's, found at run time, never a conda package.
            assert not [s for s in spec_names(run) if s.startswith("libnvinfer")]
            host_trt = [s for s in o["requirements"]["host"] if isinstance(s, str) and s.startswith("libnvinfer-devel")]
            assert host_trt == ([] if is_tegra(o) else [trt])
            assert o["inherits_from"] == "torch-tensorrt-executorch-build" and o["inherit_run_exports"]
            assert o["requirements"]["ignore_run_exports"] == {"by_name": ["cuda-version"]}
            constraints = o["requirements"].get("run_constraints", [])
            variant = o["variant"].get("arm_variant_type")
            assert constraints == ([f"arm-variant * {variant}"] if platform == "linux-aarch64" else [])
            assert "*/libcuda.so*" in o["dynamic_linking"]["missing_dso_allowlist"]
            major = "10" if is_tegra(o) else "11"
            assert o["files"] == ["lib/libexecutorch_backend_tensorrt.so", f"lib/libtte_provider_tensorrt{major}.so",
                                  "bin/tte-run"]


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
    for platform in ("linux-64", "linux-aarch64"):
        # One build per platform, in the CUDA 13 job, for every CPython >= python_min.
        (o,) = by_name(rendered[platform], PYTHON_PACKAGE)
        assert o["variant"]["cuda_compiler_version"] == "13.4"
        assert "python" not in o["variant"], "the Python package splits by CPython version"
        assert o["noarch"] is None and o["python_version_independent"] is True
        assert o["version"] == versions["project"]
        # conda-forge's abi3 convention: python-abi3 at python_min in host, whose
        # run_exports give cpython >=python_min; python's own python_abi is ignored.
        python_min = o["variant"]["python_min"]
        assert f"python {python_min}.*" in o["requirements"]["host"]
        assert f"python-abi3 {python_min}.*" in o["requirements"]["host"]
        assert o["requirements"]["ignore_run_exports"]["by_name"] == ["python_abi"]
        assert o["script"]["env"]["TTE_PYTHON_SABI"] == python_min
        build = o["requirements"]["build"]
        assert f"gcc_{platform} 15.*" in build and "cmake >=3.28" in build
        if platform == "linux-aarch64":
            assert "cross-python_linux-aarch64" in build
    script = (ROOT / "recipe" / "install-python-package.sh").read_text()
    assert "cmake -S cpp/python" in script and '-DTTE_PYTHON_SABI="${TTE_PYTHON_SABI}"' in script
    (o,) = by_name(rendered["linux-64"], PYTHON_PACKAGE)
    scripts = dict(pyproject["project"]["scripts"])
    # The wheel's tte-run execs the runner it ships; in conda, bin/tte-run is
    # the runner itself (libtorch-tensorrt-executorch), so no entry point.
    assert scripts.pop("tte-run") == "torch_tensorrt_executorch_runtime._tte_run:main"
    (script,) = scripts.items()
    assert o["entry_points"] == [f"{script[0]} = {script[1]}"]
    run = o["requirements"]["run"]
    assert f"python >={o['variant']['python_min']}" in run
    assert f"{PLUGIN} =={versions['project']}" in run
    # The wheel's dependencies, in conda-forge's names; executorch and the
    # CUDA runtime arrive through the plugin package (install-python-package.sh
    # takes them out of the metadata, so pip check passes).
    wheel_deps = {re.split(r"[<>=!;\s]", d)[0]
                  for d in pyproject["tool"]["scikit-build"]["metadata"]["dependencies"]["result"]}
    conda_name = {"flatbuffers": "python-flatbuffers", "numpy": "numpy",
                  "executorch": PLUGIN, "nvidia-cuda-runtime": PLUGIN}
    assert wheel_deps <= set(conda_name), (
        f"new wheel dependency without a conda mapping: {wheel_deps - set(conda_name)}")
    assert {conda_name[d] for d in wheel_deps} <= set(spec_names(run))
    # install-python-package.sh takes them out with strip-pypi-requirements.py:
    # run on this pyproject.toml, it leaves everything else as it is.
    assert "recipe/strip-pypi-requirements.py pyproject.toml" in (
        ROOT / "recipe" / "install-python-package.sh").read_text()
    stripped = tomllib.loads(strip_pypi_requirements((ROOT / "pyproject.toml").read_text()))
    left = stripped["tool"]["scikit-build"]["metadata"]["dependencies"].pop("result")
    full = copy.deepcopy(pyproject)
    wheel_list = full["tool"]["scikit-build"]["metadata"]["dependencies"].pop("result")
    assert left == [d for d in wheel_list if not d.startswith(("executorch", "nvidia-cuda-runtime"))]
    assert len(left) == len(wheel_list) - 2 and stripped == full
    # The plugin is found in the environment's lib/ (library.plugin_path), not through a link.
    assert "ln -s" not in (ROOT / "recipe" / "install-python-package.sh").read_text()


# NVIDIA's TensorRT bindings wheels: CUDA 12 for x86_64 only, CUDA 13 for x86_64 and aarch64
# (sbsa); conda-forge's pytorch 2.13 has CUDA 12.9 and 13 builds on both.
BINDINGS_CUDA = {"linux-64": ["12.9", "13.4"], "linux-aarch64": ["13.4"]}


def test_tensorrt_bindings_per_python(rendered, versions):
    for platform, outputs in rendered.items():
        builds = by_name(outputs, "tensorrt")
        assert sorted((o["variant"]["cuda_compiler_version"], python_of(o)) for o in builds) == [
            (cuda, python) for cuda in BINDINGS_CUDA[platform] for python in PYTHONS]
        for o in builds:
            assert o["version"] == "11.1.0.106"
            major = o["variant"]["cuda_compiler_version"].split(".")[0]
            assert f"cuda-version >={major},<{int(major) + 1}" in o["requirements"]["run"]
            assert o["variant"].get("arm_variant_type", "sbsa") == "sbsa"
            assert f"_py{python_of(o).replace('.', '')}_" in o["build_string"]
            run = o["requirements"]["run"]
            for lib in ("libnvinfer", "libnvinfer-plugin", "libnvonnxparser"):
                assert f"{lib} >={versions['tensorrt_full_min']},<{versions['tensorrt_full_max_exclusive']}" in run
            (wheel,) = [s for s in o["sources"] if "bindings" in s.get("url", "")]
            arch = "x86_64" if platform == "linux-64" else "aarch64"
            tag = "cp" + python_of(o).replace(".", "")
            assert re.search(rf"tensorrt_cu{major}_bindings-11\.1\.0\.106-{tag}-none-manylinux_2_\d+_{arch}\.whl$",
                             wheel["url"])
            assert re.fullmatch(r"[0-9a-f]{64}", wheel["sha256"])
            (module,) = [s for s in o["sources"] if s.get("target_directory") == "tensorrt-module"]
            assert module["url"].endswith(f"/tensorrt_cu{major}-11.1.0.106.tar.gz")
            assert re.fullmatch(r"[0-9a-f]{64}", module["sha256"])
            imports = [t["python"]["imports"] for t in o["tests"] if "python" in t]
            assert imports == [["tensorrt", "tensorrt_bindings"]]
            if platform == "linux-aarch64":
                assert "cross-python_linux-aarch64" in o["requirements"]["build"]


# Host requirements conda-forge publishes one build of per CUDA major (or minor): without a
# cuda-version pin the solver takes the newest, another CUDA's, whatever the job's CUDA is.
CUDA_BUILT_HOST = ("libnvinfer-devel", "libnvinfer-plugin-devel", "libnvonnxparser-devel", "cuda-cudart-dev")


@pytest.mark.parametrize("config", ["variants", "conda-forge"])
def test_cuda_built_host_requirements_pin_the_jobs_cuda(rendered, rendered_conda_forge, config):
    """Every output (and staging build) whose host takes a package built per CUDA version pins
    cuda-version to its job's CUDA: the tensorrt bindings of the CUDA 12.9 job must get a CUDA
    12 libnvinfer, not the CUDA 13 build the solver prefers."""
    outputs_by_platform = rendered if config == "variants" else rendered_conda_forge
    checked = set()
    for platform, outputs in outputs_by_platform.items():
        for o in outputs:
            cuda = o["variant"].get("cuda_compiler_version")
            for where, requirements in [("output", o["requirements"]),
                                        *((s["name"], s["requirements"]) for s in o["staging"])]:
                host = requirements.get("host", [])
                if not set(spec_names(host)) & set(CUDA_BUILT_HOST):
                    continue
                assert cuda not in (None, "None"), (o["name"], platform)
                assert f"cuda-version =={cuda}" in host, \
                    f"{o['name']} ({where}) on {platform} CUDA {cuda}: host takes CUDA builds, no cuda-version pin"
                checked.add(o["name"])
    assert {"tensorrt", "torch-tensorrt", PLUGIN} <= checked, checked


def test_torch_tensorrt_from_source(rendered, versions):
    """Torch-TensorRT built from upstream's v2.13.0 tag with this recipe's patches, per
    CPython and CUDA job the tensorrt output has: linux-64 CUDA 12.9 and 13, sbsa CUDA 13."""
    for platform, outputs in rendered.items():
        builds = by_name(outputs, "torch-tensorrt")
        assert sorted((o["variant"]["cuda_compiler_version"], python_of(o)) for o in builds) == [
            (cuda, python) for cuda in BINDINGS_CUDA[platform] for python in PYTHONS]
        for o in builds:
            assert o["version"] == versions["conda_torch_tensorrt"]["version"]
            major = o["variant"]["cuda_compiler_version"].split(".")[0]
            assert f"cuda-version >={major},<{int(major) + 1}" in o["requirements"]["run"]
            assert o["variant"].get("arm_variant_type", "sbsa") == "sbsa"
            assert o["variant"]["pytorch"] == "2.13"
            run = o["requirements"]["run"]
            assert "pytorch * cuda*" in run
            pins = {r["pin_subpackage"]["name"]: r["pin_subpackage"] for r in run
                    if isinstance(r, dict) and "pin_subpackage" in r}
            assert pins["tensorrt"]["upper_bound"] == "x.x.x"
            assert "dllist >=2.0.0,<3" in run
            host = spec_names(o["requirements"]["host"])
            for name in ("pytorch", "libnvinfer-devel", "cuda-cudart-dev", "libcublas-dev", "nccl", "pyyaml"):
                assert name in host, f"{name} not in torch-tensorrt's host requirements"
            build = spec_names(o["requirements"]["build"])
            assert f"cuda-nvcc_{platform}" in build and "cmake" in build
            # Cross-compiled (linux-aarch64 on linux-64), setup.py imports the build machine's
            # torch, which imports its numpy.
            cross = {"python", f"cross-python_{platform}", "pytorch", "numpy"}
            assert (cross <= set(build)) == (platform != "linux-64"), build
            # Torch-TensorRT's [executorch] extra must not become a pin on ExecuTorch.
            assert not any("executorch" in str(r) and "<" in str(r) for r in run)
            scripts = " ".join(str(t["script"]) for t in o["tests"] if "script" in t)
            assert "check_torch_tensorrt.py ${{ torch_tensorrt_version }}" in scripts
    source = re.search(r"name: torch-tensorrt\n.*?\n    source:\n(.*?)\n    build:", RECIPE_TEXT, re.S).group(1)
    assert "git: https://github.com/pytorch/TensorRT.git" in source and "rev: ${{ torch_tensorrt_commit }}" in source
    commit = re.search(r"torch_tensorrt_commit: (\w+)", RECIPE_TEXT).group(1)
    assert re.fullmatch(r"[0-9a-f]{40}", commit)
    patches = re.findall(r"- (patches/torch-tensorrt/\S+)", source)
    on_disk = sorted(str(p.relative_to(ROOT / "recipe"))
                     for p in (ROOT / "recipe" / "patches" / "torch-tensorrt").glob("*.patch"))
    assert patches == on_disk, "every patch in recipe/patches/torch-tensorrt is applied, in order"


def test_torch_tensorrt_needs_pytorch_2_13(render_module):
    """Under conda-forge's global pytorch pin (2.12), before its pytorch213 migration, the
    output is skipped rather than built against a pytorch it does not load into."""
    for platform in render_module.PLATFORMS:
        variants = render_module.variant_config(platform, "variants")
        variants = variants.merge(type(variants)({"pytorch": ["2.12"]}))
        assert not by_name(render_module.render(platform, variants=variants), "torch-tensorrt")


def test_torch_tensorrt_patches_apply_to_the_source_archive(tmp_path):
    """The recipe's patches apply to the v2.13.0 source (the archive in shared/sources,
    when this checkout has one beside it)."""
    import subprocess
    import tarfile
    archive = next((f / "shared" / "sources" / "TensorRT-2.13.0-trimmed.tar.gz" for f in [ROOT, *ROOT.parents]
                    if (f / "shared" / "sources" / "TensorRT-2.13.0-trimmed.tar.gz").exists()), None)
    if archive is None:
        pytest.skip("no shared/sources/TensorRT-2.13.0-trimmed.tar.gz beside the checkout")
    wanted = ("setup.py", "dev_dep_versions.yml", "cmake/Modules/FindTensorRT.cmake", "core/runtime/CMakeLists.txt")
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            relative = member.name.split("/", 1)[-1]
            if relative in wanted:
                member.name = relative
                tar.extract(member, tmp_path, filter="data")
    for patch in sorted((ROOT / "recipe" / "patches" / "torch-tensorrt").glob("*.patch")):
        subprocess.run(["git", "apply", "--check", "-p1", str(patch)], cwd=tmp_path, check=True)
        subprocess.run(["git", "apply", "-p1", str(patch)], cwd=tmp_path, check=True)
    runtime = (tmp_path / "core" / "runtime" / "CMakeLists.txt").read_text()
    assert "TRTRuntimeConfig.cpp" in runtime and "RuntimeSettings.cpp" in runtime
    assert '"tensorrt>=11.1.0,<11.2.0"' in (tmp_path / "setup.py").read_text()


def test_wheel_pins_are_well_formed(versions):
    """Each bindings wheel is selected by its architecture, CUDA major (on x86_64, where
    NVIDIA publishes two) and CPython, and pinned by sha256."""
    for major, arches in (("13", ("x86_64", "aarch64")), ("12", ("x86_64",))):
        for arch in arches:
            cuda = rf'match\(cuda_compiler_version, ">={major},<{int(major) + 1}"\) and ' if arch == "x86_64" else ""
            for py in PYTHONS:
                tag = "cp" + py.replace(".", "")
                wheel = rf"tensorrt_cu{major}_bindings-11\.1\.0\.106-{tag}-none-manylinux_2_\d+_{arch}\.whl"
                pattern = (rf'- if: {arch} and {cuda}match\(python, "{re.escape(py)}\.\*"\)\n\s+then:\n'
                           rf"\s+url: https://files\.pythonhosted\.org/\S+/{wheel}\n"
                           r"\s+sha256: [0-9a-f]{64}\n")
                assert re.search(pattern, RECIPE_TEXT), f"no pinned {wheel} for {tag} {arch}"


def test_every_output_has_tests(rendered):
    for _platform, outputs in rendered.items():
        for o in outputs:
            kinds = [next(iter(t)) for t in o["tests"]]
            assert "package_contents" in kinds, f"{o['name']} has no package_contents test"
            assert len(kinds) >= 2, f"{o['name']} tests only its file list"
            contents = next(t["package_contents"] for t in o["tests"] if "package_contents" in t)
            assert contents.get("strict") is True, f"{o['name']}: package_contents is not strict"
            for test in o["tests"]:
                if "python" in test:
                    assert test["python"].get("pip_check", True), f"{o['name']} turns pip check off"


def test_python_tests_run_at_the_lowest_and_newest_cpython(rendered):
    """An output built once for every CPython (noarch: python, or abi3 and version independent)
    tests its imports under python_min and under the newest CPython ("*", the newest the
    channel has: conda-forge's newest, 3.14 in the 2026-12-04 snapshot); a per-CPython build
    (tensorrt) under its own."""
    seen = set()
    for platform, outputs in rendered.items():
        for o in outputs:
            versions = [t["python"].get("python_version") for t in o["tests"] if "python" in t]
            if not versions:
                continue
            seen.add(o["name"])
            if o["noarch"] == "python" or o["python_version_independent"]:
                python_min = o["variant"]["python_min"]
                assert versions == [[f"{python_min}.*", "*"]], (o["name"], platform, versions)
            else:
                assert "python" in o["variant"] and versions == [None], (o["name"], platform, versions)
    assert {"dllist", PYTHON_PACKAGE, "tensorrt"} <= seen, seen


def test_cli_and_import_tests(rendered):
    (runtime,) = by_name(rendered["linux-64"], PYTHON_PACKAGE)
    imports = [t["python"]["imports"] for t in runtime["tests"] if "python" in t]
    assert imports == [["torch_tensorrt_executorch_runtime", "torch_tensorrt_executorch_runtime._native._compiled"]]
    scripts = " ".join(str(t["script"]) for t in runtime["tests"] if "script" in t)
    for command in ("torch-tensorrt-executorch --help", "torch-tensorrt-executorch doctor",
                    "torch-tensorrt-executorch inspect tests/fixtures/cpp/",
                    "python tests/python-run/run_program.py tests/fixtures/cpp/add_one_dynamic.pte"):
        assert command in scripts
    contents = next(t["package_contents"] for t in runtime["tests"] if "package_contents" in t)
    assert "site-packages/torch_tensorrt_executorch_runtime/_native/_compiled.abi3.so" in contents["files"]
    for plugin in by_name(rendered["linux-64"], PLUGIN):
        scripts = " ".join(str(t["script"]) for t in plugin["tests"] if "script" in t)
        assert "tte-run --help" in scripts and "RTLD_NOW" in scripts and "tensorrt-native" in scripts
        # The conda provider links the prefix's libnvinfer: checked as a NEEDED entry.
        assert 'n.startswith("libnvinfer")' in scripts and "DT_NEEDED" in scripts
        # The tegra provider (TensorRT 10's) links none.
        assert 'if major == "11"' in scripts and "assert not linked" in scripts
    for _platform, outputs in rendered.items():
        for plugin in by_name(outputs, PLUGIN):
            contents = next(t["package_contents"] for t in plugin["tests"] if "package_contents" in t)
            major = "10" if is_tegra(plugin) else "11"
            assert contents["lib"] == ["executorch_backend_tensorrt", f"tte_provider_tensorrt{major}"]


@pytest.mark.parametrize("path", [
    "recipe/build.sh", "recipe/install-executorch-wheel.sh", "recipe/install-python-package.sh",
    "recipe/install-tensorrt-bindings.sh", "recipe/build-torch-tensorrt.sh",
    "recipe/tests/torch-tensorrt/check_torch_tensorrt.py",
    "recipe/tests/executorch-consumer/CMakeLists.txt", "recipe/tests/plugin-consumer/CMakeLists.txt",
    "recipe/tests/python-run/run_program.py", "cpp/python/CMakeLists.txt",
    "tests/fixtures/cpp/two_methods.pte", "tests/fixtures/cpp/add_one_dynamic.pte",
])
def test_recipe_files_exist(path):
    assert (ROOT / path).is_file()


def test_build_script_uses_the_wheels_cmake_entry():
    """recipe/build.sh configures the root CMakeLists.txt with the native provider and
    the C++ tests on (off only when cross-compiling), and every option it passes is one
    the CMake sources define."""
    script = (ROOT / "recipe" / "build.sh").read_text()
    assert re.search(r'cmake -S "\$\{SRC_DIR\}"', script)
    assert "-DTTE_WITH_TENSORRT=ON" in script and "ctest" in script
    assert re.search(r"CONDA_BUILD_CROSS_COMPILATION.*\n\s+tests=OFF", script)
    cmake_sources = "\n".join(p.read_text() for p in [ROOT / "CMakeLists.txt", *(ROOT / "cmake").glob("*.cmake"),
                                                      ROOT / "cpp" / "CMakeLists.txt"])
    options = set(re.findall(r"-D((?:TTE_|EXECUTORCH_|TensorRT_)\w+)=", script))
    assert {"EXECUTORCH_ROOT", "TTE_CUDA_ROOT", "TTE_INSTALL_RPATH", "TTE_INSTALL_LIBDIR", "TTE_GLIBC_COMPAT",
            "TTE_INSTALL_INCLUDEDIR", "TTE_INSTALL_BINDIR", "TTE_WITH_TENSORRT", "TTE_BUILD_TESTS"} <= options
    for option in options:
        assert re.search(rf"\b{option}\b", cmake_sources), f"build.sh passes -D{option}, which no CMake file reads"


def test_recipe_turns_no_check_off():
    assert "binary_relocation: false" not in RECIPE_TEXT, "link checks are off for an output"
    assert "pip_check: false" not in RECIPE_TEXT


# Homepages: this project's outputs name the project; the outputs of upstream projects
# (repackaged or built from upstream's source) name upstream's.
UPSTREAM_HOMEPAGES = {
    "libexecutorch": "https://github.com/pytorch/executorch",
    "libexecutorch-devel": "https://github.com/pytorch/executorch",
    "tensorrt": "https://developer.nvidia.com/tensorrt",
    "dllist": "https://github.com/wardbrian/dllist",
    "torch-tensorrt": "https://github.com/pytorch/TensorRT",
}


def test_homepages_and_maintainers(rendered):
    project_url = re.search(r"^  project_url: (\S+)$", RECIPE_TEXT, re.M).group(1)
    for _platform, outputs in rendered.items():
        for o in outputs:
            expected = UPSTREAM_HOMEPAGES.get(o["name"], project_url)
            assert o["about"]["homepage"] == expected, (o["name"], o["about"]["homepage"])
            maintainers = o["extra"].get("recipe-maintainers")
            assert isinstance(maintainers, list) and maintainers, f"{o['name']} names no recipe-maintainers"
            assert all(isinstance(m, str) and re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9-]*(/[A-Za-z0-9-]+)?", m)
                       for m in maintainers), maintainers


# rattler-build's link checks per output that ships compiled code: (overlinking, overdepending).
# Overlinking (a library from a package that is not a run requirement) fails every build
# but torch-tensorrt's; overdepending (a run_export from host that nothing links) fails
# where rattler-build attributes every link to the package that declares it (docs/conda.md).
LINK_CHECKS = {
    "libexecutorch": ("error", "error"),
    PLUGIN: ("error", "ignore"),
    PYTHON_PACKAGE: ("error", "error"),
    "tensorrt": ("error", "error"),
    "torch-tensorrt": ("ignore", "ignore"),
}


def test_link_checks(rendered):
    for platform, outputs in rendered.items():
        for o in outputs:
            linking = o["dynamic_linking"]
            behaviour = (linking.get("overlinking_behavior", "ignore"), linking.get("overdepending_behavior", "ignore"))
            if o["name"] in LINK_CHECKS:
                assert behaviour == LINK_CHECKS[o["name"]], (o["name"], platform, linking)
            else:
                # Headers, CMake files or pure Python: nothing for the checks to read.
                assert o["name"].endswith("-devel") or o["noarch"] == "python", o["name"]
            allowed = linking.get("missing_dso_allowlist", [])
            # The driver is the system's; libcudart is cuda-cudart's (see the recipe).
            assert set(allowed) <= {"*/libcuda.so*", "*/libcudart.so*"}, allowed
            assert ("*/libcudart.so*" in allowed) == (o["name"] == PLUGIN)
    for platform, outputs in rendered.items():
        for o in by_name(outputs, "tensorrt"):
            # The sysroot makes glibc's libraries system libraries for the checks; the C++
            # runtime NVIDIA's extension links is a run requirement.
            assert f"sysroot_{platform} {GLIBC[platform]}.*" in o["requirements"]["build"]
            assert {"libstdcxx", "libgcc"} <= set(o["requirements"]["host"]) & set(o["requirements"]["run"])
