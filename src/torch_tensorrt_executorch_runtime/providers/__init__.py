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

The protocol's types live in `types`; `adapter` puts a Python provider in
the terms of the provider C ABI, which the binding (`_native`) serves.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Collection
from pathlib import Path

from .. import _native
from .._native.library import library_exists
from ..errors import NotAcceptedError
from .adapter import ProviderAdapter
from .types import Engine, EngineLoadOptions, EngineProvider, IoTensor

logger = logging.getLogger("torch_tensorrt_executorch_runtime")


def _check_choice(what: str, value: str, choices: Collection[str]) -> None:
    if value not in choices:
        raise ValueError(f"{what} must be one of {', '.join(choices)}, got '{value}'")


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
    _check_choice("memory", memory, _native.MEMORY_KINDS)
    _check_choice("kind", kind, _native.PROVIDER_KINDS)
    adapter = ProviderAdapter(provider, name=name, memory=memory, capturable=capturable, kind=kind)
    _native.register_provider(adapter)
    logger.debug("registered Python provider '%s' (%s memory, %s)", name, memory, kind)
    return name


def register_provider_library(path: str | os.PathLike[str], *, kind: str = "other") -> list[str]:
    """Load a provider library (exports `tte_engine_provider_entry`); returns the names it added."""
    _check_choice("kind", kind, _native.PROVIDER_KINDS)
    path = Path(path)
    # A folder that cannot be read is a PluginLoadError saying so, not a bare PermissionError.
    if not library_exists(path, "the provider library"):
        raise FileNotFoundError(f"provider library not found: {path}")
    before = set(_native.provider_names())
    _native.load_provider_library(path.resolve(), kind)
    return [name for name in _native.provider_names() if name not in before]


def unregister_provider(name: str) -> None:
    """Remove a provider; engines it already made keep working until destroyed."""
    _native.unregister_provider(name)


def providers() -> list[str]:
    """Registered provider names, in selection order."""
    return _native.provider_names()


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
