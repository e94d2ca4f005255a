"""Activating the delegate: load the plugin, check who owns `TensorRTBackend`,
register an engine provider, and arrange a clean interpreter exit.

Importing the package activates it. When the import comes from the
command-line tool, a failure is kept instead of raised, so that `doctor` can
report a broken installation; everything else that needs the plugin raises it.
"""

from __future__ import annotations

import atexit
import ctypes
import sys
import threading
from pathlib import Path

from . import _c_api, _library, _logging
from ._c_api import BACKEND_NAME
from .errors import DelegateCompatibilityError, RegistrationError

NATIVE_PROVIDER = "tensorrt-native"
CLI_NAMES = ("torch-tensorrt-executorch",)
CLI_MODULES = ("torch_tensorrt_executorch_runtime", "torch_tensorrt_executorch_runtime.cli")

_lock = threading.RLock()
_lib: ctypes.CDLL | None = None
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


def _check_registration(lib: ctypes.CDLL) -> None:
    if lib.tte_owns_backend_registration():
        return
    error = _c_api.TteError()
    lib.tte_registration_status(ctypes.byref(error))
    owner = lib.tte_registration_owner_path()
    ours = (lib.tte_library_path() or b"").decode("utf-8", errors="replace")
    if owner:
        owner = owner.decode("utf-8", errors="replace")
        raise RegistrationError(
            f"'{BACKEND_NAME}' is registered by another library, {owner}, not by this package's plugin "
            f"{ours}. A process can hold one {BACKEND_NAME}: uninstall the other package (for upstream's "
            "runtime wheel: pip uninstall torch-tensorrt-executorch-runtime, then reinstall this one), or "
            "do not load both."
        )
    reason = error.text() or "unknown reason"
    raise RegistrationError(f"the plugin {ours} could not register '{BACKEND_NAME}': {reason}")


def _register_tensorrt_provider() -> str:
    from .providers import _bridge, tensorrt_python

    names = _bridge.names()
    if NATIVE_PROVIDER in names:
        return NATIVE_PROVIDER
    return tensorrt_python.register()


def _shutdown() -> None:
    # Close our programs and unregister Python providers while the
    # interpreter can still run the callbacks their destruction triggers.
    from . import program
    from .providers import _bridge

    program.close_all()
    _bridge.shutdown()


def activate() -> None:
    """Load the plugin and register the TensorRT provider (idempotent).

    Raises DelegateCompatibilityError (PluginLoadError, RegistrationError)
    when the delegate cannot be used in this process.
    """
    global _lib, _error, _tensorrt_provider, _exit_hook_installed
    with _lock:
        if _lib is not None:
            return
        if _error is not None:
            raise _error
        try:
            lib = _library.load_plugin()
            _check_registration(lib)
        except DelegateCompatibilityError as exc:
            _error = exc
            raise
        _lib = lib
        _logging.apply_environment()
        if not _exit_hook_installed:
            atexit.register(_shutdown)
            _exit_hook_installed = True
        _tensorrt_provider = _register_tensorrt_provider()


def require() -> ctypes.CDLL:
    """The activated plugin; raises the activation error if there was one."""
    activate()
    assert _lib is not None
    return _lib


def activation_error() -> DelegateCompatibilityError | None:
    return _error


def tensorrt_provider() -> str | None:
    """Name of the TensorRT provider registered at activation."""
    return _tensorrt_provider


def cuda_device_count() -> int:
    """CUDA devices this process can use (0 without a driver or GPU); never touches TensorRT."""
    return int(require().tte_cuda_device_count())


def get_runtime():
    """`executorch.runtime.Runtime.get()`, after checking it sees our TensorRTBackend."""
    lib = require()
    from executorch.runtime import Runtime

    runtime = Runtime.get()
    names = set(runtime.backend_registry.registered_backend_names)
    if BACKEND_NAME not in names:
        raise DelegateCompatibilityError(
            f"executorch.runtime does not list '{BACKEND_NAME}' although the plugin "
            f"{(lib.tte_library_path() or b'').decode()} registered it: ExecuTorch's Python extension uses "
            "another copy of libexecutorch.so. Install this package into the same environment as executorch."
        )
    _check_registration(lib)
    return runtime


def runtime_stats() -> dict[str, int]:
    """Process-wide counters of the plugin's copies, enqueues and CUDA-graph work."""
    lib = require()
    stats = _c_api.TteRuntimeStats(struct_size=ctypes.sizeof(_c_api.TteRuntimeStats))
    lib.tte_get_runtime_stats(ctypes.byref(stats))
    return {name: int(getattr(stats, name)) for name, _ in _c_api.TteRuntimeStats._fields_ if name != "struct_size"}


def reset_runtime_stats() -> None:
    require().tte_reset_runtime_stats()
