"""Activating the delegate: load the plugin, check who owns `TensorRTBackend`,
register an engine provider, and arrange a clean interpreter exit.

Importing the package activates it. When the import comes from the
command-line tool, a failure is kept instead of raised, so that `doctor` can
report a broken installation; everything else that needs the plugin raises it.
"""

from __future__ import annotations

import atexit
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from . import _logging, _native
from ._native import BACKEND_NAME
from .errors import DelegateCompatibilityError, RegistrationError
from .providers import tensorrt_python

if TYPE_CHECKING:
    from executorch.runtime import Runtime

# The native providers are named by TensorRT major ("tensorrt-native-10",
# "tensorrt-native-11"); the load option provider="tensorrt-native" means the
# one whose major matches the plan.
NATIVE_PROVIDER = "tensorrt-native"
NATIVE_MAJORS = (11, 10)
CLI_NAMES = ("torch-tensorrt-executorch",)
CLI_MODULES = ("torch_tensorrt_executorch_runtime", "torch_tensorrt_executorch_runtime.cli")

_lock = threading.RLock()
_active = False
_error: DelegateCompatibilityError | None = None
_tensorrt_provider: str | None = None
_exit_hook_installed = False


def imported_by_cli() -> bool:
    """Whether this process is the command-line tool (console script or `python -m`)."""
    argv = list(getattr(sys, "orig_argv", None) or sys.argv)
    if any(Path(arg).name in CLI_NAMES for arg in argv[:2]):
        return True
    for index, arg in enumerate(argv[1:], start=1):
        if arg == "-m":
            return index + 1 < len(argv) and argv[index + 1] in CLI_MODULES
        if not arg.startswith("-"):
            return False
    return False


def _check_registration() -> None:
    if _native.owns_registration():
        return
    ours = _native.library_path()
    owner = _native.registration_owner()
    if owner:
        raise RegistrationError(
            f"'{BACKEND_NAME}' is registered by another library, {owner}, not by this package's plugin "
            f"{ours}. A process can hold one {BACKEND_NAME}: uninstall the other package (for upstream's "
            "runtime wheel: pip uninstall torch-tensorrt-executorch-runtime, then reinstall this one), or "
            "do not load both."
        )
    reason = _native.registration_error() or "unknown reason"
    raise RegistrationError(f"the plugin {ours} could not register '{BACKEND_NAME}': {reason}")


def native_provider_name(major: int) -> str:
    """The native provider of one TensorRT major, "tensorrt-native-11"."""
    return f"{NATIVE_PROVIDER}-{major}"


def native_providers(names: list[str]) -> list[str]:
    """The native providers among registered provider `names`, in their order."""
    return [name for name in names if name in {native_provider_name(m) for m in NATIVE_MAJORS}]


def _register_tensorrt_provider() -> str:
    """The plugin registers the native providers itself (one per TensorRT major) when their libraries
    are installed; the Python provider joins them for TensorRT-RTX and other Python-only runtimes when
    one is installed, and stands in for them (saying what to install) when the wheel has none. Returns
    the provider tried first: "tensorrt-native" (the one of the plan's major) or "tensorrt-python"."""
    if not native_providers(_native.provider_names()):
        return tensorrt_python.register()
    if tensorrt_python.installed_modules():
        tensorrt_python.register()
    return NATIVE_PROVIDER


def activate() -> None:
    """Load the plugin and register the TensorRT provider (idempotent).

    Raises DelegateCompatibilityError (PluginLoadError, RegistrationError)
    when the delegate cannot be used in this process.
    """
    global _active, _error, _tensorrt_provider, _exit_hook_installed
    with _lock:
        if _active:
            return
        if _error is not None:
            raise _error
        try:
            _native.load()
            _check_registration()
        except DelegateCompatibilityError as exc:
            _error = exc
            raise
        _active = True
        _logging.apply_environment()
        if not _exit_hook_installed:
            # Programs close and Python providers go while the interpreter can
            # still run the callbacks their destruction triggers.
            atexit.register(_native.shutdown)
            _exit_hook_installed = True
        _tensorrt_provider = _register_tensorrt_provider()


def require() -> None:
    """Activate, or raise the activation error if there was one."""
    activate()


def activation_error() -> DelegateCompatibilityError | None:
    return _error


def tensorrt_provider() -> str | None:
    """Name of the TensorRT provider tried first (registered at activation)."""
    return _tensorrt_provider


def cuda_device_count() -> int:
    """CUDA devices this process can use (0 without a driver or GPU); never touches TensorRT."""
    require()
    return _native.cuda_device_count()


def get_runtime() -> Runtime:
    """`executorch.runtime.Runtime.get()`, after checking it sees our TensorRTBackend."""
    require()
    from executorch.runtime import Runtime

    runtime = Runtime.get()
    names = set(runtime.backend_registry.registered_backend_names)
    if BACKEND_NAME not in names:
        raise DelegateCompatibilityError(
            f"executorch.runtime does not list '{BACKEND_NAME}' although the plugin "
            f"{_native.library_path()} registered it: ExecuTorch's Python extension uses "
            "another copy of libexecutorch.so. Install this package into the same environment as executorch."
        )
    _check_registration()
    return runtime


def runtime_stats() -> dict[str, int]:
    """Process-wide counters of the plugin's copies, enqueues and CUDA-graph work."""
    require()
    return _native.runtime_stats()


def reset_runtime_stats() -> None:
    require()
    _native.reset_runtime_stats()
