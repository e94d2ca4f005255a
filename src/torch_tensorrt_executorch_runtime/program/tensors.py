"""Where the user's tensor libraries meet DLPack, for libraries the compiled
binding cannot serve alone: streams given as objects, the current stream of a
library without the DLPack C exchange API, and results handed back in the
library the inputs came from through its `from_dlpack`.

Torch (and any library publishing `__dlpack_c_exchange_api__`) never reaches
this module on a run: the binding borrows its tensors, asks it for its
stream and makes its results in C. Nothing here checks an input against the
method: the C API does (dtype, rank, shape, memory) and says what it
expected.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from .. import _native
from ..errors import OutputConversionError


def _root_module(value: object) -> str:
    return type(value).__module__.partition(".")[0]


def _is_torch_tensor(value: object) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.Tensor)


def stream_handle(stream: object) -> int:
    """A cudaStream_t as int from an int, torch.cuda.Stream, cupy Stream or `__cuda_stream__` object."""
    if isinstance(stream, int) and not isinstance(stream, bool):
        return stream
    protocol = getattr(stream, "__cuda_stream__", None)
    if protocol is not None:
        return int(protocol()[1])
    for attribute in ("cuda_stream", "ptr", "handle"):
        value = getattr(stream, attribute, None)
        if isinstance(value, int):
            return value
    raise TypeError(
        f"stream must be a CUDA stream handle (int), a torch.cuda.Stream or an object with __cuda_stream__; "
        f"got {type(stream).__name__}"
    )


def stream_of(value: Any) -> int | None:
    """The current CUDA stream of the library that made the CUDA tensor `value`, if it has one."""
    if _is_torch_tensor(value):
        import torch

        return torch.cuda.current_stream(value.device).cuda_stream
    if _root_module(value) == "cupy":
        import cupy

        stream: int = cupy.cuda.get_current_stream().ptr
        return stream
    return None


class OutputLibrary:
    """Turns run outputs into tensors of the library the inputs came from."""

    def __init__(self, inputs: Sequence[object]) -> None:
        self.name = "numpy"
        for value in inputs:
            if _is_torch_tensor(value):
                self.name = "torch"
                break
        else:
            for value in inputs:
                if hasattr(value, "__dlpack__"):
                    # A library with no from_dlpack gets numpy (host) or cupy (device).
                    module = sys.modules.get(_root_module(value))
                    if callable(getattr(module, "from_dlpack", None)):
                        self.name = _root_module(value)
                    break
            else:
                if "torch" in sys.modules:
                    self.name = "torch"

    def convert_all(self, results: list[Any], method: str) -> list[Any]:
        """Run results (Output, int, float, bool, None) with every tensor converted."""
        return [
            self.convert(item, index, method) if isinstance(item, _native.Output) else item
            for index, item in enumerate(results)
        ]

    def convert(self, result: _native.Output, index: int, method: str) -> Any:
        """`result` as a tensor of this library (numpy, cupy, torch or any with `from_dlpack`)."""
        on_device = result.device[0] in _native.CUDA_DEVICE_TYPES
        if self.name == "torch":
            import torch

            return torch.from_dlpack(result)
        if self.name == "numpy":
            if not on_device:
                import numpy

                return numpy.from_dlpack(result)
            try:
                import cupy
            except ImportError:
                result.release()
                raise OutputConversionError(
                    f"output {index} of '{method}' is in CUDA memory (device {result.device[1]}) and numpy "
                    "cannot hold it: install cupy (pip install cupy-cuda13x) to get cupy arrays, or pass torch tensors"
                ) from None
            return cupy.from_dlpack(result)
        return sys.modules[self.name].from_dlpack(result)


def convert_outputs(inputs: Sequence[object], results: list[Any], method: str) -> list[Any]:
    """The binding's hook: `results` in the inputs' library."""
    return OutputLibrary(inputs).convert_all(results, method)


_native.set_tensor_library_hooks(stream_of, convert_outputs)
