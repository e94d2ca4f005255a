"""The one place that finds and loads shared libraries.

The plugin ships in this package's `lib/` folder; its RUNPATH points at the
executorch and nvidia wheels beside it. Before loading it we load the
`libexecutorch*.so` of the executorch package Python itself imports, so the
plugin binds to that copy (matched by SONAME) and registers into the same
backend registry as `executorch.runtime`, even when the two packages live in
different site directories. Libraries are never closed: the plugin's static
registration and the function pointers it holds must outlive every caller.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import threading
from pathlib import Path

from ..errors import PluginLoadError
from . import abi

LIBRARY_ENV = "TORCH_TENSORRT_EXECUTORCH_LIBRARY"
LIBRARY_FILE = "libexecutorch_backend_tensorrt.so"
PACKAGE_DIR = Path(__file__).resolve().parent.parent

# The ExecuTorch libraries the plugin links, in dependency order.
EXECUTORCH_LIBRARIES = (
    "libexecutorch.so",
    "libexecutorch_threadpool.so",
    "libexecutorch_etdump.so",
    "libexecutorch_kernels_optimized.so",
    "libexecutorch_backend_xnnpack.so",
)


def _built_cuda_major() -> int:
    """The CUDA major the plugin links, as its build recorded it (12: the JetPack 6 build)."""
    try:
        from .._generated.build_config import CUDA_MAJOR
    except ImportError:
        # A source checkout that was never built (no plugin to load either):
        # the PyPI wheels' CUDA.
        return 13
    return CUDA_MAJOR


CUDA_MAJOR = _built_cuda_major()
CUDA_RUNTIME_FILE = f"libcudart.so.{CUDA_MAJOR}"
# On JetPack 6 (the CUDA 12 build) the CUDA runtime is JetPack's own, which
# the dynamic loader finds; a pip CUDA wheel there is not one for Jetson.
CUDA_RUNTIME_FROM_WHEELS = CUDA_MAJOR != 12

_lock = threading.Lock()
_plugin: ctypes.CDLL | None = None
_keep: list[ctypes.CDLL] = []


def plugin_path() -> Path:
    """Where the plugin is loaded from: $TORCH_TENSORRT_EXECUTORCH_LIBRARY, else lib/.

    The wheel ships it in this package's lib/; the conda package ships it in
    the environment's lib/ (<prefix>/lib, three levels above this folder),
    where its $ORIGIN rpath finds ExecuTorch, the CUDA runtime and TensorRT.
    """
    override = os.environ.get(LIBRARY_ENV)
    if override:
        return Path(override)
    in_package = PACKAGE_DIR / "lib" / LIBRARY_FILE
    in_environment = PACKAGE_DIR.parents[2] / LIBRARY_FILE
    if not library_exists(in_package, "the TensorRTBackend plugin") and library_exists(
        in_environment, "the TensorRTBackend plugin"
    ):
        return in_environment
    return in_package.resolve()


def library_exists(path: Path, what: str) -> bool:
    """Whether `path` exists; a folder that cannot be read is an import-time error saying so."""
    try:
        return path.exists()
    except OSError as exc:
        raise PluginLoadError(
            f"cannot read {what} {path}: {exc.strerror or exc}. Make it readable by this user "
            f"(e.g. chmod -R a+rX {path.parent}) or reinstall the package it belongs to"
        ) from exc


def package_root(name: str) -> Path | None:
    """Folder of an installed package, found without importing it."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError, OSError):
        return None
    if spec is None:
        return None
    for location in spec.submodule_search_locations or ():
        return Path(location)
    if spec.origin:
        return Path(spec.origin).parent
    return None


def executorch_lib_dir() -> Path | None:
    root = package_root("executorch")
    if root is None:
        return None
    lib = root / "lib"
    return lib if library_exists(lib / "libexecutorch.so", "ExecuTorch's runtime library") else None


def cuda_runtime_candidates() -> list[Path]:
    """The nvidia-cuda-runtime wheel's libcudart (either of its layouts); none for the JetPack 6 build."""
    found: list[Path] = []
    if not CUDA_RUNTIME_FROM_WHEELS:
        return found
    try:
        spec = importlib.util.find_spec("nvidia")
    except (ImportError, ValueError):
        spec = None
    for location in (spec.submodule_search_locations if spec else None) or ():
        for sub in (f"cu{CUDA_MAJOR}/lib", "cuda_runtime/lib"):
            candidate = Path(location) / sub / CUDA_RUNTIME_FILE
            try:
                if candidate.exists():
                    found.append(candidate)
            except OSError:
                continue  # an unreadable wheel is as good as none; the load error names what is missing
    return found


def _load(path: Path) -> ctypes.CDLL:
    handle = ctypes.CDLL(str(path))
    _keep.append(handle)
    return handle


def _preload_executorch() -> list[str]:
    """Load the executorch package's libraries; returns what could not be loaded."""
    lib_dir = executorch_lib_dir()
    if lib_dir is None:
        return []
    problems = []
    for name in EXECUTORCH_LIBRARIES:
        candidate = lib_dir / name
        if not library_exists(candidate, "ExecuTorch's library"):
            continue
        try:
            _load(candidate)
        except OSError as exc:
            problems.append(f"{candidate}: {exc}")
    return problems


def _preload_cuda_runtime() -> None:
    for candidate in cuda_runtime_candidates():
        try:
            _load(candidate)
            return
        except OSError:
            continue


def apply_prototypes(lib: ctypes.CDLL) -> list[str]:
    """Set restype/argtypes of every C API function; returns the missing names."""
    missing = []
    for name, (restype, argtypes) in abi.PROTOTYPES.items():
        try:
            function = getattr(lib, name)
        except AttributeError:
            missing.append(name)
            continue
        function.restype = restype
        function.argtypes = argtypes
    return missing


def load_plugin() -> ctypes.CDLL:
    """Load the plugin once per process and return its handle."""
    global _plugin
    with _lock:
        if _plugin is not None:
            return _plugin
        path = plugin_path()
        if not library_exists(path, "the TensorRTBackend plugin"):
            where = f"${LIBRARY_ENV}" if os.environ.get(LIBRARY_ENV) else "the package"
            raise PluginLoadError(
                f"TensorRTBackend plugin not found at {path} (from {where}). "
                "Reinstall with: pip install --force-reinstall torch-tensorrt-executorch-runtime"
            )
        preload_problems = _preload_executorch()
        try:
            lib = _load(path)
        except OSError as first:
            # RUNPATH missed a dependency (a relocated install): bring the
            # CUDA runtime in from the nvidia wheel and try once more.
            _preload_cuda_runtime()
            try:
                lib = _load(path)
            except OSError as second:
                hint = ""
                if executorch_lib_dir() is None:
                    hint = " ExecuTorch is not installed: pip install executorch==1.5.1."
                elif preload_problems:
                    hint = " ExecuTorch's libraries failed to load: " + "; ".join(preload_problems)
                raise PluginLoadError(
                    f"cannot load the TensorRTBackend plugin {path}: {second}.{hint}"
                ) from first
        missing = apply_prototypes(lib)
        if missing:
            raise PluginLoadError(
                f"{path} is not a TensorRTBackend plugin this package can use: it lacks "
                + ", ".join(missing)
            )
        version = lib.tte_c_api_version()
        if version < abi.TTE_C_API_VERSION:
            raise PluginLoadError(
                f"{path} has C API version {version}; this package needs "
                f"{abi.TTE_C_API_VERSION} or later. Reinstall torch-tensorrt-executorch-runtime."
            )
        _plugin = lib
        return lib


def loaded_plugin() -> ctypes.CDLL | None:
    """The plugin handle if it has been loaded, without loading it."""
    return _plugin



def cuda_driver() -> ctypes.CDLL | None:
    """The CUDA driver library (libcuda.so.1), or None where no driver is installed."""
    try:
        return _load(Path("libcuda.so.1"))
    except OSError:
        return None


def tensorrt_library_dirs() -> dict[str, list[Path]]:
    """Shared libraries of the TensorRT wheels, by wheel package (`tensorrt_libs`, ...)."""
    found = {}
    for package in ("tensorrt_libs", "tensorrt_lean_libs", "tensorrt_dispatch_libs", "tensorrt_rtx_libs"):
        root = package_root(package)
        try:
            if root is not None and root.is_dir():
                found[package] = sorted(p for p in root.iterdir() if ".so" in p.name)
        except OSError:
            continue  # unreadable: reported as not installed
    return found
