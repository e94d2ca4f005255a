"""Where the user's tensor libraries meet DLPack: inputs made ready, streams
found, and results handed back in the library the inputs came from.

Nothing here checks an input against the method: the C API does (dtype,
rank, shape, memory) and says what it expected.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from .. import _native
from ..errors import OutputConversionError


def _root_module(value) -> str:
    return type(value).__module__.partition(".")[0]


def _is_torch_tensor(value) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.Tensor)


def prepare_inputs(values: Sequence) -> list:
    """The inputs as the binding takes them: torch tensors that need grad are detached
    (torch refuses to export them through DLPack)."""
    return [value.detach() if _is_torch_tensor(value) and value.requires_grad else value for value in values]


def stream_handle(stream) -> int | None:
    """A cudaStream_t as int from an int, torch.cuda.Stream, cupy Stream or `__cuda_stream__` object."""
    if stream is None:
        return None
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


def current_stream_of(values: Sequence) -> int | None:
    """The current CUDA stream of the library that made the CUDA inputs, if it has one."""
    for value in values:
        if _is_torch_tensor(value) and value.is_cuda:
            import torch

            return torch.cuda.current_stream(value.device).cuda_stream
        if _root_module(value) == "cupy" and hasattr(value, "__dlpack__"):
            device_type, _ = _native.device_of(value)
            if device_type in _native.CUDA_DEVICE_TYPES:
                import cupy

                return cupy.cuda.get_current_stream().ptr
    return None


class OutputLibrary:
    """Turns DLPack results into tensors of the library the inputs came from."""

    def __init__(self, inputs: Sequence):
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

    def convert_all(self, results: list, method: str) -> list:
        """Run results (DLPackResult, int, float, bool, None) with every tensor converted."""
        return [
            self.convert(item, index, method) if isinstance(item, _native.DLPackResult) else item
            for index, item in enumerate(results)
        ]

    def convert(self, result: _native.DLPackResult, index: int, method: str):
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
