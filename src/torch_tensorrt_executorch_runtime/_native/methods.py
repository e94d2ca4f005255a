"""Method handles: the hot path of a run, in the compiled extension (which
also serves the batched entry of Python providers: see `providers`).

`_compiled` (built from cpp/python/, an abi3 module) holds a `TteMethod*`
per `MethodHandle` and runs it in one C call: inputs borrowed through the
DLPack C exchange API of their library where it has one (torch), else
through `__dlpack__`; the stream taken from that library; owned outputs
allocated by that library and handed back as its tensors. The extension
calls back into Python only for what it cannot do alone: the exception of a
failed call (`errors.error_for_status`), and, for libraries without the
exchange API, their current stream and their `from_dlpack`, which the layer
that knows the libraries provides (`set_tensor_library_hooks`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..errors import PluginLoadError, error_for_status
from . import library

_missing: ImportError | None
try:
    from . import _compiled
except ImportError as exc:
    # A source tree used beside a build (packing, reading programs) has no
    # compiled binding; only running a method needs it.
    # (mypy has no type for "a module or None"; _require_compiled checks.)
    _compiled = None  # type: ignore[assignment]
    _missing = exc
else:
    _missing = None

# The type checker sees the extension's types (_compiled.pyi); without the
# binding, both names are a type no result is an instance of.
if TYPE_CHECKING or _compiled is not None:
    MethodHandle = _compiled.Method
    Output = _compiled.Output
else:
    MethodHandle = Output = type(None)

_lock = threading.Lock()
_bound = False
_stream_of: Callable | None = None
_convert_outputs: Callable | None = None


def set_tensor_library_hooks(stream_of: Callable, convert_outputs: Callable) -> None:
    """What a run asks of libraries without the DLPack C exchange API.

    stream_of(value) -> int | None: the current CUDA stream of the library
    that made a CUDA input. convert_outputs(inputs, results, method) -> list:
    `results` with each `Output` turned into a tensor of the inputs' library.
    """
    global _stream_of, _convert_outputs, _bound
    with _lock:
        _stream_of, _convert_outputs = stream_of, convert_outputs
        _bound = False


def _require_compiled():
    if _compiled is None:
        raise PluginLoadError(
            f"the compiled binding of torch_tensorrt_executorch_runtime cannot be imported ({_missing}); "
            "reinstall with: pip install --force-reinstall torch-tensorrt-executorch-runtime"
        )
    return _compiled


def compiled():
    """The compiled extension (raises PluginLoadError where it cannot be imported)."""
    return _require_compiled()


def _bind() -> None:
    global _bound
    compiled = _require_compiled()
    with _lock:
        if _bound:
            return
        if _stream_of is None or _convert_outputs is None:
            raise RuntimeError("set_tensor_library_hooks() must run before a method is opened")
        library.load_plugin()
        compiled.bind(str(library.plugin_path()), error_for_status, _stream_of, _convert_outputs)
        _bound = True


def open_method(program: int, name: str) -> MethodHandle:
    """A handle on method `name` of the `TteProgram*` at `program` (loads the method)."""
    if not _bound:
        _bind()
    return MethodHandle(program, name)


def stats() -> dict[str, int]:
    """How many inputs and outputs took each DLPack path since the process started."""
    return _require_compiled().stats()


def exchange_api_version(tensor_type: type) -> tuple[int, int] | None:
    """The DLPack C exchange API version runs use for `tensor_type`, or None (the `__dlpack__` path)."""
    return _require_compiled().exchange_api_version(tensor_type)
