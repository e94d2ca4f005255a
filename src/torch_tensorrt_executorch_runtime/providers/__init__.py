"""Engine providers: the public extension point of the TensorRTBackend delegate.

A provider turns the engine bytes inside a delegate blob into something the
backend can run. The plugin asks, for each delegate it loads, the provider
named by the `provider` load option, else every registered provider in order
(native, Python, others; each in registration order) until one accepts the
plan. Providers come from three places:

- compiled into the plugin (`tensorrt-native`, where TensorRT headers existed
  at build time);
- a shared library exporting `tte_engine_provider_entry`
  (`register_provider_library`);
- a Python object following the protocol below (`register_provider`). The
  Python TensorRT provider (`tensorrt-python`, see `tensorrt_python`) is one.

Writing a provider in Python::

    class MyEngine:
        io_tensors = [IoTensor("x", is_input=True, dtype="float32", rank=2),
                      IoTensor("y", is_input=False, dtype="float32", rank=2)]
        num_profiles = 1
        def profile_shape(self, profile, name): return (1, 4), (2, 4), (8, 4)
        def set_input_shape(self, name, shape): self.shape = shape
        def get_output_shape(self, name): return self.shape
        def set_tensor_address(self, name, address): ...
        def enqueue(self, stream): ...          # stream is None for host memory

    class MyProvider:
        def deserialize(self, plan, device_id, options):
            if not plan[:4] == b"MINE":
                raise NotAcceptedError("not my format")   # or return None
            return MyEngine()

    register_provider(MyProvider(), name="mine", memory="host")

Addresses are integers: CUDA device pointers for `memory="device"`, host
pointers for `memory="host"`. `plan` is a memoryview valid only during
`deserialize`. Raising from any method fails that call with the exception's
message (`NotAcceptedError` passes the plan on to the next provider).
Registering affects later loads only.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from ..errors import NotAcceptedError


@dataclasses.dataclass(frozen=True)
class IoTensor:
    """One I/O tensor of an engine, in the engine's own order."""

    name: str
    is_input: bool
    dtype: str | int  # an ExecuTorch ScalarType name ("float32") or value
    rank: int
    # For an output the engine writes into one of its inputs in place
    # (TensorRT KV-cache update): that input's name.
    aliased_input: str | None = None
    is_shape_tensor: bool = False


@dataclasses.dataclass(frozen=True)
class EngineLoadOptions:
    """What the backend passes to `deserialize` besides the plan."""

    device_id: int
    weight_streaming_budget: int | None = None


@runtime_checkable
class Engine(Protocol):
    io_tensors: Sequence[IoTensor]
    num_profiles: int

    def profile_shape(self, profile: int, name: str) -> tuple[Sequence[int], Sequence[int], Sequence[int]]:
        """(min, opt, max) dims of input `name` in optimization profile `profile`."""

    def set_input_shape(self, name: str, shape: tuple[int, ...]) -> None: ...

    def get_output_shape(self, name: str) -> Sequence[int]:
        """After all input shapes are set."""

    def set_tensor_address(self, name: str, address: int) -> None: ...

    def enqueue(self, stream: int | None) -> None:
        """Launch the engine on `stream` (a cudaStream_t as int; None for host providers)."""

    # Optional: select_profile(profile: int, stream: int | None) -> None and
    # close() -> None (called when the backend destroys the engine).


@runtime_checkable
class EngineProvider(Protocol):
    def deserialize(self, plan: memoryview, device_id: int, options: EngineLoadOptions) -> Engine | None:
        """Return an engine, or None / raise NotAcceptedError for a plan in another format."""


def register_provider(
    provider: EngineProvider,
    *,
    name: str,
    memory: str = "device",
    capturable: bool = False,
    kind: str = "other",
) -> str:
    """Register a Python provider under `name` and return the name.

    memory: "device" (addresses are CUDA device pointers; the backend stages
    host tensors) or "host" (host pointers; no GPU needed). capturable: True
    when `enqueue` only launches stream-ordered CUDA work and may be captured
    into a CUDA graph. kind: "python" puts it with the Python TensorRT
    provider in the selection order, "other" (default) after it.
    """
    from . import _bridge

    return _bridge.register(provider, name=name, memory=memory, capturable=capturable, kind=kind)


def register_provider_library(path, *, kind: str = "other") -> list[str]:
    """Load a provider library (exports `tte_engine_provider_entry`); returns the names it added."""
    from . import _bridge

    return _bridge.register_library(path, kind=kind)


def unregister_provider(name: str) -> None:
    """Remove a provider; engines it already made keep working until destroyed."""
    from . import _bridge

    _bridge.unregister(name)


def providers() -> list[str]:
    """Registered provider names, in selection order."""
    from . import _bridge

    return _bridge.names()


__all__ = [
    "Engine",
    "EngineLoadOptions",
    "EngineProvider",
    "IoTensor",
    "NotAcceptedError",
    "providers",
    "register_provider",
    "register_provider_library",
    "unregister_provider",
]
