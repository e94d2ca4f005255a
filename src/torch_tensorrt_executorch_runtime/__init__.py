"""TensorRTBackend for the stock ExecuTorch runtime.

Importing this package loads the `libexecutorch_backend_tensorrt.so` plugin
shipped inside it, checks that it owns the `TensorRTBackend` registration and
registers a TensorRT engine provider (native when the plugin was built with
TensorRT, else the Python one). Then programs run through `load()` here, or
through `executorch.runtime.Runtime.get().load_program(...)`, in either import
order.

    import torch_tensorrt_executorch_runtime as tte
    program = tte.load("model.pte")
    outputs = program.forward(x)

The `tte-run` command (the C++ runner) is a console script in `_tte_run`.
"""

import importlib.metadata as _metadata

from . import _activation, _native, _tte_run, errors, providers
from ._activation import activate, cuda_device_count, get_runtime, reset_runtime_stats, runtime_stats
from ._logging import get_log_level, set_log_level
from ._native import BACKEND_NAME
from .errors import DelegateCompatibilityError
from .program import DelegateInfo, LoadOption, MethodInfo, Program, ValueInfo, load, load_options
from .providers import register_provider, register_provider_library, unregister_provider


def _activate_on_import() -> None:
    if _tte_run.launched_as_tte_run():
        # The tte-run command execs the C++ runner, which loads its own plugin.
        return
    try:
        activate()
    except DelegateCompatibilityError:
        # The command-line tool reports this itself (`doctor`).
        if not _activation.imported_by_cli():
            raise


def _version() -> str:
    try:
        return _metadata.version("torch-tensorrt-executorch-runtime")
    except _metadata.PackageNotFoundError:
        # A source checkout run against a build tree: the plugin carries the
        # same version (both come from versions.json).
        return _native.version() if _native.is_loaded() else "0+unknown"


_activate_on_import()
__version__ = _version()

__all__ = [
    "BACKEND_NAME",
    "DelegateCompatibilityError",
    "DelegateInfo",
    "LoadOption",
    "MethodInfo",
    "Program",
    "ValueInfo",
    "activate",
    "cuda_device_count",
    "errors",
    "get_log_level",
    "get_runtime",
    "load",
    "load_options",
    "providers",
    "register_provider",
    "register_provider_library",
    "reset_runtime_stats",
    "runtime_stats",
    "set_log_level",
    "unregister_provider",
]
