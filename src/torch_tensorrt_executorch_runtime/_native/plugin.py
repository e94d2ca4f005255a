"""The plugin itself through its C API: versions, registration, log level,
CUDA devices, statistics and the delegate blob reader.

`call` is the one place where a failed C API call (a TteStatus and its
TteError message) becomes an exception; every module of this binding calls
through it.
"""

from __future__ import annotations

import ctypes
import json
from typing import TypedDict

from ..errors import TTE_OK, error_for_status
from . import abi, library

LOG_LEVELS = {
    "debug": abi.TTE_LOG_DEBUG,
    "info": abi.TTE_LOG_INFO,
    "warning": abi.TTE_LOG_WARNING,
    "error": abi.TTE_LOG_ERROR,
    "off": abi.TTE_LOG_OFF,
}
_LOG_LEVEL_NAMES = {value: name for name, value in LOG_LEVELS.items()}


def lib() -> ctypes.CDLL:
    """The plugin, loaded on first use (raises PluginLoadError)."""
    return library.load_plugin()


def is_loaded() -> bool:
    return library.loaded_plugin() is not None


def call(function, *args) -> None:
    """Call a C API function whose last parameter is a TteError*; raise on failure."""
    error = abi.TteError()
    status = function(*args, ctypes.byref(error))
    if status != TTE_OK:
        raise error_for_status(status, error.text())


def take_string(pointer: ctypes.c_void_p) -> str:
    """Decode a `char*` the library allocated, then free it with tte_free_string."""
    if not pointer.value:
        return ""
    try:
        return ctypes.string_at(pointer.value).decode("utf-8")
    finally:
        lib().tte_free_string(pointer)


def _text(value: bytes | None) -> str | None:
    return value.decode("utf-8", errors="replace") if value else None


def version() -> str:
    return lib().tte_version().decode()


def c_api_version() -> int:
    return int(lib().tte_c_api_version())


def executorch_version() -> str:
    return lib().tte_executorch_version().decode()


def library_path() -> str:
    """Where the loaded plugin lives (the dynamic loader's answer)."""
    return _text(lib().tte_library_path()) or ""


def owns_registration() -> bool:
    """Whether the registry's `TensorRTBackend` is this plugin's backend."""
    return bool(lib().tte_owns_backend_registration())


def registration_error() -> str:
    """Why registering `TensorRTBackend` failed; "" when it succeeded."""
    error = abi.TteError()
    if lib().tte_registration_status(ctypes.byref(error)) == TTE_OK:
        return ""
    return error.text() or "unknown reason"


def registration_owner() -> str | None:
    """Path of the library that owns the `TensorRTBackend` registration, if any."""
    return _text(lib().tte_registration_owner_path())


def cuda_allocator_owner() -> str | None:
    return _text(lib().tte_cuda_allocator_owner())


def cuda_device_count() -> int:
    """CUDA devices this process can use (0 without a driver or GPU); never touches TensorRT."""
    return int(lib().tte_cuda_device_count())


def cuda_unavailable_reason() -> str:
    """Why cuda_device_count() is 0 (no driver, a driver too old for the plugin's CUDA, no GPU), else ""."""
    return _text(lib().tte_cuda_unavailable_reason()) or ""


def set_log_level(name: str) -> None:
    """Set the plugin's level: a key of LOG_LEVELS."""
    lib().tte_set_log_level(LOG_LEVELS[name])


def log_level() -> str:
    return _LOG_LEVEL_NAMES.get(int(lib().tte_get_log_level()), "off")


def runtime_stats() -> dict[str, int]:
    stats = abi.TteRuntimeStats(struct_size=ctypes.sizeof(abi.TteRuntimeStats))
    lib().tte_get_runtime_stats(ctypes.byref(stats))
    return {name: int(getattr(stats, name)) for name, *_ in abi.TteRuntimeStats._fields_ if name != "struct_size"}


def reset_runtime_stats() -> None:
    lib().tte_reset_runtime_stats()


class LoadOptionRow(TypedDict):
    """One row of tte_load_option_info, decoded."""

    name: str
    accepted_types: int  # bits 1 << TTE_OPTION_BOOL, _INT, _STRING
    type: str
    must_be: str
    fallback: str
    doc: str
    program_only: bool


def load_option_rows() -> list[LoadOptionRow]:
    """The plugin's table of load options (tte_load_option_info), a row each, in its order."""
    rows: list[LoadOptionRow] = []
    for index in range(int(lib().tte_num_load_options())):
        info = abi.TteLoadOptionInfo(struct_size=ctypes.sizeof(abi.TteLoadOptionInfo))
        call(lib().tte_load_option_info, index, ctypes.byref(info))
        rows.append(
            {
                "name": _text(info.name) or "",
                "accepted_types": int(info.accepted_types),
                "type": _text(info.type) or "",
                "must_be": _text(info.must_be) or "",
                "fallback": _text(info.fallback) or "",
                "doc": _text(info.doc) or "",
                "program_only": bool(info.program_only),
            }
        )
    return rows


def describe_blob(payload: bytes) -> dict:
    """A TensorRTBackend delegate blob parsed by the plugin's reader (tte_blob_describe_json)."""
    out = ctypes.c_void_p()
    buffer = ctypes.create_string_buffer(payload, len(payload))
    call(lib().tte_blob_describe_json, ctypes.cast(buffer, ctypes.c_void_p), len(payload), ctypes.byref(out))
    return json.loads(take_string(out))
