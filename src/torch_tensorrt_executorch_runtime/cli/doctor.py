"""`torch-tensorrt-executorch doctor`: what is installed, what is missing, how to fix it.

The installation is sound (exit 0) when the plugin loads, owns the
`TensorRTBackend` registration, and the installed ExecuTorch is the one it was
built against. No GPU, no TensorRT runtime or no torch are reported with the
command that fixes them, and are not failures: programs can still be
inspected, and test providers run without them.
"""

from __future__ import annotations

import importlib.metadata
import json
import re
from pathlib import Path
from typing import Any

from .. import _activation, _native
from ..errors import DelegateCompatibilityError, Error
from ..providers import tensorrt_python

EXECUTORCH_PIN = "1.5.1"
CUDA_RUNTIME_PREFIX = "libcudart.so"
TENSORRT_DISTRIBUTIONS = {
    "tensorrt": ("tensorrt-cu13", "tensorrt-cu13-bindings", "tensorrt"),
    "tensorrt_lean": ("tensorrt-lean-cu13", "tensorrt-lean-cu13-bindings", "tensorrt-lean"),
    "tensorrt_dispatch": ("tensorrt-dispatch-cu13", "tensorrt-dispatch-cu13-bindings", "tensorrt-dispatch"),
    "tensorrt_rtx": ("tensorrt-rtx-cu13", "tensorrt-rtx-cu13-bindings", "tensorrt-rtx"),
}


def _cuda_runtime_hint() -> str:
    """What installs the CUDA runtime this build links."""
    if not _native.CUDA_RUNTIME_FROM_WHEELS:
        return "JetPack 6's CUDA 12.6 runtime: sudo apt-get install nvidia-jetpack (docs/jetson.md)"
    return f"pip install 'nvidia-cuda-runtime>={_native.CUDA_MAJOR}.0,<{_native.CUDA_MAJOR + 1}'"


def _distribution_version(*names: str) -> str | None:
    for name in names:
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return None


def collect() -> dict:
    """Everything doctor reports, as one JSON-ready dictionary."""
    report: dict = {"sound": True, "problems": [], "missing": []}

    def problem(text: str, fix: str) -> None:
        report["sound"] = False
        report["problems"].append({"problem": text, "fix": fix})

    def missing(text: str, fix: str) -> None:
        report["missing"].append({"missing": text, "fix": fix})

    try:
        report["package_version"] = importlib.metadata.version("torch-tensorrt-executorch-runtime")
    except importlib.metadata.PackageNotFoundError:
        report["package_version"] = None

    plugin: dict[str, Any] = {"path": str(_native.plugin_path()), "loaded": False, "error": None}
    report["plugin"] = plugin
    try:
        _activation.activate()
    except DelegateCompatibilityError as exc:
        plugin["error"] = str(exc)
    loaded = _native.is_loaded()
    if loaded:
        plugin["loaded"] = True
        plugin["library_path"] = _native.library_path()
        plugin["version"] = _native.version()
        plugin["c_api_version"] = _native.c_api_version()
        plugin["built_against_executorch"] = _native.executorch_version()
        plugin["owns_registration"] = _native.owns_registration()
        plugin["registration_owner"] = _native.registration_owner()
        plugin["cuda_allocator"] = _native.cuda_allocator_owner()
        if not plugin["owns_registration"]:
            problem(
                plugin["error"] or f"TensorRTBackend is registered by {plugin['registration_owner']}",
                "uninstall the other TensorRTBackend package (pip uninstall torch-tensorrt-executorch-runtime), "
                "then pip install --force-reinstall torch-tensorrt-executorch-runtime",
            )
    else:
        problem(
            plugin["error"] or "the plugin did not load",
            "pip install --force-reinstall torch-tensorrt-executorch-runtime",
        )

    executorch_version = _distribution_version("executorch")
    root = _native.package_root("executorch")
    lib_dir = _native.executorch_lib_dir()
    report["executorch"] = {
        "version": executorch_version,
        "path": str(root) if root else None,
        "lib": str(lib_dir) if lib_dir else None,
    }
    if executorch_version is None and loaded:
        # A conda install: the plugin found ExecuTorch's runtime (libexecutorch)
        # in the environment's lib/; only the Python package is absent.
        missing("executorch's Python package (export, executorch.runtime)",
                f"pip install executorch=={EXECUTORCH_PIN}")
    elif executorch_version is None:
        problem("executorch is not installed", f"pip install executorch=={EXECUTORCH_PIN}")
    elif executorch_version != EXECUTORCH_PIN:
        problem(
            f"executorch {executorch_version} is installed; the plugin is built for {EXECUTORCH_PIN}",
            f"pip install executorch=={EXECUTORCH_PIN}",
        )

    report["providers"] = []
    report["native_providers"] = [
        {"major": major, "provider": _activation.native_provider_name(major), "registered": False,
         "tensorrt": None, "detail": None}
        for major in sorted(_activation.NATIVE_MAJORS)
    ]
    if loaded and plugin.get("owns_registration"):
        report["providers"] = _native.provider_names()
        report["tensorrt_provider"] = _activation.tensorrt_provider()
        report["native_providers"] = [_native_provider(major) for major in sorted(_activation.NATIVE_MAJORS)]

    modules = []
    for module in tensorrt_python.DEFAULT_MODULES:
        version = _distribution_version(*TENSORRT_DISTRIBUTIONS[module])
        installed = module in tensorrt_python.installed_modules([module])
        modules.append({"module": module, "installed": installed, "version": version})
    report["tensorrt_python"] = modules
    report["tensorrt_libraries"] = {
        package: [str(p) for p in paths] for package, paths in _native.tensorrt_library_dirs().items()
    }
    report["tensorrt"] = tensorrt_by_major(report["native_providers"], modules)
    if not any(n["tensorrt"] for n in report["native_providers"]) and not any(m["installed"] for m in modules):
        missing(
            "a TensorRT runtime (needed to run real engines)",
            "pip install 'torch-tensorrt-executorch-runtime[tensorrt]' (or [lean], [rtx])",
        )

    cudart = _native.cuda_runtime_candidates()
    report["cuda_runtime"] = [str(p) for p in cudart]
    # What the plugin really loaded: in conda the prefix's lib/, with no nvidia wheels at all.
    report["cuda_runtime_loaded"] = next(iter(loaded_libraries(CUDA_RUNTIME_PREFIX)), None)
    if not cudart and not report["cuda_runtime_loaded"]:
        missing(f"the CUDA {_native.CUDA_MAJOR} runtime ({_native.CUDA_RUNTIME_FILE})", _cuda_runtime_hint())
    driver = _native.driver_report()
    report["cuda_driver"] = driver
    report["cuda_devices"] = _native.cuda_device_count() if loaded else None
    # The plugin's own answer, through the CUDA runtime it links: a driver that lists GPUs can still
    # be too old for that runtime (a CUDA 13 build on JetPack 6's CUDA 12.6 driver).
    report["cuda_unavailable"] = _native.cuda_unavailable_reason() if loaded else None
    if not driver["found"]:
        missing("an NVIDIA driver", "install the NVIDIA driver for your GPU (no GPU: engines cannot run here)")
    elif not driver["gpus"]:
        missing("a usable NVIDIA GPU", driver["detail"] or "check nvidia-smi")
    elif report["cuda_devices"] == 0:
        missing("a CUDA device the plugin can use", report["cuda_unavailable"] or "the CUDA runtime sees no GPU")

    report["torch"] = _torch_version()
    # executorch.runtime imports torch (its prebuilt extension links libtorch)
    # and executorch's own dependencies; this package's API needs neither.
    stock_missing = [
        name for name, present in (("torch", report["torch"]), ("executorch", executorch_version)) if not present
    ]
    report["stock_api"] = {"module": "executorch.runtime", "missing": stock_missing}
    if report["torch"] is None:
        missing(
            "torch: executorch.runtime (the stock ExecuTorch Python API) cannot be imported without it; "
            "this package's load(), its CLI and tte-run work without it (numpy)",
            "pip install 'torch-tensorrt-executorch-runtime[torch]' (with executorch's own dependencies: "
            "not the minimal install)",
        )
    return report


# What a native provider's describe_runtime says when it found its library
# (TensorRtLibrary::describe in cpp/providers/native/tensorrt_library.cpp).
_RUNTIME_LINE = re.compile(
    r"^TensorRT (?P<version>\d+\.\d+\.\d+)(?P<lean> lean runtime)? from (?P<path>.+) "
    r"\(provider built against TensorRT (?P<headers>\d+\.\d+\.\d+) headers\)$"
)


def parse_runtime_line(line: str) -> dict | None:
    """The library a native provider found, from its runtime line; None when the line says why none."""
    match = _RUNTIME_LINE.match(line)
    if match is None:
        return None
    return {
        "version": match["version"],
        "lean": match["lean"] is not None,
        "path": match["path"],
        "provider_headers": match["headers"],
    }


def _native_provider(major: int) -> dict:
    """Whether the native provider of TensorRT `major` is registered and which library it found (or why none)."""
    name = _activation.native_provider_name(major)
    try:
        line = _native.provider_runtime(name)
    except Error as exc:  # not registered: the plugin says why
        return {"major": major, "provider": name, "registered": False, "tensorrt": None, "detail": str(exc)}
    found = parse_runtime_line(line)
    return {"major": major, "provider": name, "registered": True, "tensorrt": found,
            "detail": None if found else line}


def tensorrt_by_major(native_providers: list[dict], modules: list[dict]) -> dict[str, list[dict]]:
    """Every TensorRT found, by major ("10", "11"): the libraries the native providers found and the
    TensorRT Python modules installed, each with its version and whether it is the lean runtime."""
    found: dict[str, list[dict]] = {str(n["major"]): [] for n in native_providers}
    for native in native_providers:
        library = native["tensorrt"]
        if library:
            found.setdefault(library["version"].split(".")[0], []).append(
                {"version": library["version"], "lean": library["lean"], "path": library["path"],
                 "found_by": native["provider"]}
            )
    for module in modules:
        if module["installed"] and module["version"] and module["module"] in ("tensorrt", "tensorrt_lean"):
            found.setdefault(module["version"].split(".")[0], []).append(
                {"version": module["version"], "lean": module["module"] == "tensorrt_lean", "path": None,
                 "found_by": f"Python module {module['module']}"}
            )
    return found


def _torch_version() -> str | None:
    """torch's version where Python finds it (found, not imported: importing takes seconds)."""
    if _native.package_root("torch") is None:
        return None
    return _distribution_version("torch") or "unknown version"


def loaded_libraries(prefix: str, maps: str | None = None) -> list[str]:
    """Files mapped into this process whose name starts with `prefix`, in load order.

    maps: the text of /proc/self/maps (read when not given); empty off Linux.
    """
    if maps is None:
        try:
            maps = Path("/proc/self/maps").read_text()
        except OSError:
            return []
    found: list[str] = []
    for line in maps.splitlines():
        fields = line.split(None, 5)
        if len(fields) == 6 and fields[5].startswith("/"):
            path = fields[5].removesuffix(" (deleted)")
            if Path(path).name.startswith(prefix) and path not in found:
                found.append(path)
    return found


def format_text(report: dict) -> str:
    lines = []
    plugin = report["plugin"]
    lines.append(f"torch-tensorrt-executorch-runtime {report.get('package_version') or '(not installed as a package)'}")
    if plugin["loaded"]:
        lines.append(
            f"plugin:        {plugin['library_path']} (version {plugin['version']}, C API {plugin['c_api_version']})"
        )
        owner = plugin.get("registration_owner")
        verdict = "this plugin" if plugin.get("owns_registration") else f"ANOTHER LIBRARY: {owner}"
        lines.append(f"registration:  TensorRTBackend owned by {verdict}")
        lines.append(f"built against: executorch {plugin['built_against_executorch']}")
    else:
        lines.append(f"plugin:        NOT LOADED from {plugin['path']}: {plugin['error']}")
    et = report["executorch"]
    lines.append(f"executorch:    {et['version'] or 'not installed'}" + (f" at {et['path']}" if et["path"] else ""))
    lines.append(f"providers:     {', '.join(report['providers']) or 'none'}")
    for native in report["native_providers"]:
        label = f"{native['provider']}:"
        if native["tensorrt"]:
            library = native["tensorrt"]
            kind = "lean runtime" if library["lean"] else "full runtime"
            lines.append(f"{label:<23}TensorRT {library['version']} ({kind}) from {library['path']}")
        elif native["registered"]:
            lines.append(f"{label:<23}registered, no TensorRT {native['major']} library: {native['detail']}")
        else:
            lines.append(f"{label:<23}not available: {native['detail'] or 'the plugin did not load'}")
    for major, found in sorted(report["tensorrt"].items(), key=lambda item: int(item[0])):
        label = f"TensorRT {major}:"
        listed = "; ".join(
            f"{f['version']} ({'lean' if f['lean'] else 'full'}) by {f['found_by']}" for f in found
        )
        lines.append(f"{label:<15}{listed or 'none found'}")
    trt = ", ".join(
        f"{m['module']} {m['version'] or ''}".strip() for m in report["tensorrt_python"] if m["installed"]
    )
    lines.append(f"TensorRT:      {trt or 'no TensorRT Python runtime installed'}")
    for package, paths in report["tensorrt_libraries"].items():
        names = ", ".join(Path(p).name for p in paths[:4]) + (" ..." if len(paths) > 4 else "")
        lines.append(f"               {package}: {names}")
    if report["cuda_runtime_loaded"]:
        lines.append(f"CUDA runtime:  {report['cuda_runtime_loaded']} (loaded)")
    else:
        lines.append(
            "CUDA runtime:  "
            + (", ".join(report["cuda_runtime"]) + " (not loaded)" if report["cuda_runtime"] else "not found")
        )
    driver = report["cuda_driver"]
    if driver["found"]:
        lines.append(f"CUDA driver:   {driver['version'] or 'unknown version'}")
    else:
        lines.append(f"CUDA driver:   {driver['detail']}")
    if report.get("cuda_devices") == 0 and report.get("cuda_unavailable"):
        lines.append(f"CUDA devices:  none usable by the plugin: {report['cuda_unavailable']}")
    if driver["gpus"]:
        for gpu in driver["gpus"]:
            lines.append(
                f"GPU {gpu['index']}:         {gpu['name']} (compute capability {gpu['compute_capability']}, "
                f"{gpu['memory_bytes'] / 2**30:.0f} GiB)"
            )
    else:
        works = "inspecting and packing work" if report["torch"] else "inspecting works"
        lines.append(f"GPUs:          none (engines cannot run here; {works})")
    lines.append(f"torch:         {report['torch'] or 'not installed (optional)'}")
    stock = report["stock_api"]
    if stock["missing"]:
        lines.append(
            f"stock API:     {stock['module']} cannot be imported here: needs {' and '.join(stock['missing'])} "
            "(this package's load(), CLI and tte-run do not)"
        )
    else:
        lines.append(
            f"stock API:     {stock['module']} (torch {report['torch']}, executorch {report['executorch']['version']})"
        )
    for item in report["problems"]:
        lines.append(f"PROBLEM: {item['problem']}\n  fix: {item['fix']}")
    for item in report["missing"]:
        lines.append(f"missing: {item['missing']}\n  fix: {item['fix']}")
    lines.append("installation is sound" if report["sound"] else "installation is NOT sound")
    return "\n".join(lines)


def command_doctor(args) -> int:
    report = collect()
    print(json.dumps(report, indent=2) if args.json else format_text(report))
    return 0 if report["sound"] else 1


def add_parser(sub) -> None:
    doctor = sub.add_parser("doctor", help="check the installation")
    doctor.add_argument("--json", action="store_true")
    doctor.set_defaults(handler=command_doctor)
