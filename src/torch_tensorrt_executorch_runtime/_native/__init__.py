"""The binding to the plugin's C API: the only code that calls it.

Everything above this package (activation, programs, providers, the CLI)
uses the names below, in plain Python values, DLPack objects and exceptions;
nothing else touches ctypes, the C structs or a TteStatus. Two parts, one
per need: the compiled extension `_compiled` (`methods`) runs methods, the
hot path; ctypes (`abi` mirrors the headers, `library` loads the plugin)
does everything else, once per program or provider.
"""

from __future__ import annotations

from . import library, program, providers
from .abi import BACKEND_NAME, CUDA_DEVICE_TYPES
from .cuda_driver import DeviceBlock, driver_report, synchronize_current_context
from .library import (
    CUDA_MAJOR,
    CUDA_RUNTIME_FILE,
    CUDA_RUNTIME_FROM_WHEELS,
    cuda_runtime_candidates,
    executorch_lib_dir,
    package_root,
    plugin_path,
    tensorrt_library_dirs,
)
from .methods import MethodHandle, Output, set_tensor_library_hooks
from .plugin import (
    LOG_LEVELS,
    c_api_version,
    cuda_allocator_owner,
    cuda_device_count,
    cuda_unavailable_reason,
    describe_blob,
    executorch_version,
    is_loaded,
    library_path,
    load_option_rows,
    log_level,
    owns_registration,
    registration_error,
    registration_owner,
    reset_runtime_stats,
    runtime_stats,
    set_log_level,
    version,
)
from .program import OpenOptions, ProgramHandle, open_buffer, open_file
from .providers import (
    MEMORY_KINDS,
    PROVIDER_KINDS,
    load_provider_library,
    provider_names,
    provider_runtime,
    register_provider,
    unregister_provider,
)


def load() -> None:
    """Load the plugin (once per process); raises PluginLoadError."""
    library.load_plugin()


def shutdown() -> None:
    """Close every open program, then unregister the Python providers.

    Runs at interpreter exit while the interpreter can still answer the
    callbacks that closing programs triggers.
    """
    program.close_all()
    providers.unregister_python_providers()


__all__ = [
    "BACKEND_NAME",
    "CUDA_DEVICE_TYPES",
    "CUDA_MAJOR",
    "CUDA_RUNTIME_FILE",
    "CUDA_RUNTIME_FROM_WHEELS",
    "DeviceBlock",
    "LOG_LEVELS",
    "MEMORY_KINDS",
    "MethodHandle",
    "OpenOptions",
    "Output",
    "PROVIDER_KINDS",
    "ProgramHandle",
    "c_api_version",
    "cuda_allocator_owner",
    "cuda_device_count",
    "cuda_unavailable_reason",
    "cuda_runtime_candidates",
    "describe_blob",
    "driver_report",
    "executorch_lib_dir",
    "executorch_version",
    "is_loaded",
    "library_path",
    "load",
    "load_option_rows",
    "load_provider_library",
    "log_level",
    "open_buffer",
    "open_file",
    "owns_registration",
    "package_root",
    "plugin_path",
    "provider_names",
    "provider_runtime",
    "register_provider",
    "registration_error",
    "registration_owner",
    "reset_runtime_stats",
    "runtime_stats",
    "set_log_level",
    "set_tensor_library_hooks",
    "shutdown",
    "synchronize_current_context",
    "tensorrt_library_dirs",
    "unregister_provider",
    "version",
]
