"""A Python provider as the provider C ABI sees it.

The ABI names an engine's tensors by index, wants ScalarType values, alias
indices and dims of a checked rank; the protocol (`types`) speaks in names and
dtype names. The adapters here translate and check, in plain Python values, so
the binding (`_native.providers`) only moves those values across the C
boundary and turns exceptions into statuses.
"""

from __future__ import annotations

import logging

from .. import _dtypes
from ..errors import NotAcceptedError, NotSupportedError
from .types import EngineLoadOptions, EngineProvider, IoTensor

logger = logging.getLogger("torch_tensorrt_executorch_runtime")

Dims = tuple[int, ...]


class EngineAdapter:
    """A Python engine, its I/O tensors checked once and addressed by index."""

    def __init__(self, engine, provider_name: str):
        self.engine = engine
        self.provider_name = provider_name
        tensors = list(engine.io_tensors)
        for tensor in tensors:
            if not isinstance(tensor, IoTensor):
                raise TypeError(
                    f"provider '{provider_name}': io_tensors must hold IoTensor objects, got {type(tensor).__name__}"
                )
        self.tensors = tensors
        # Kept alive here: the ABI's descriptors point into these bytes.
        self.c_names = [t.name.encode("utf-8") for t in tensors]
        index = {t.name: i for i, t in enumerate(tensors)}
        if len(index) != len(tensors):
            raise ValueError(f"provider '{provider_name}': engine I/O tensor names are not unique")
        self.aliased = []
        for tensor in tensors:
            if tensor.aliased_input is None:
                self.aliased.append(-1)
            elif tensor.aliased_input in index:
                self.aliased.append(index[tensor.aliased_input])
            else:
                raise ValueError(
                    f"provider '{provider_name}': output '{tensor.name}' aliases unknown input '{tensor.aliased_input}'"
                )
        self.scalar_types = [_dtypes.scalar_type(t.dtype) for t in tensors]
        self.num_profiles = int(getattr(engine, "num_profiles", 1))

    def tensor(self, index: int) -> IoTensor:
        if not 0 <= index < len(self.tensors):
            raise IndexError(f"I/O tensor index {index} out of range (engine has {len(self.tensors)})")
        return self.tensors[index]

    def profile_shape(self, profile: int, index: int) -> tuple[Dims, Dims, Dims]:
        tensor = self.tensor(index)
        shapes = self.engine.profile_shape(profile, tensor.name)
        if len(shapes) != 3:
            raise ValueError(f"profile_shape of '{tensor.name}' must return (min, opt, max)")
        result = []
        for dims in shapes:
            dims = tuple(int(d) for d in dims)
            if len(dims) != tensor.rank:
                raise ValueError(
                    f"profile {profile} of input '{tensor.name}' has rank {len(dims)}, the tensor has rank {tensor.rank}"
                )
            result.append(dims)
        return result[0], result[1], result[2]

    def select_profile(self, profile: int, stream: int | None) -> None:
        select = getattr(self.engine, "select_profile", None)
        if select is not None:
            select(profile, stream)
        elif profile != 0:
            raise NotSupportedError(f"engine of provider '{self.provider_name}' has only profile 0")

    def set_input_shape(self, index: int, dims: Dims) -> None:
        self.engine.set_input_shape(self.tensor(index).name, dims)

    def output_shape(self, index: int, capacity: int) -> Dims:
        name = self.tensor(index).name
        shape = tuple(int(d) for d in self.engine.get_output_shape(name))
        if len(shape) > capacity:
            raise ValueError(f"output '{name}' has rank {len(shape)}, more than {capacity}")
        return shape

    def set_tensor_address(self, index: int, address: int) -> None:
        self.engine.set_tensor_address(self.tensor(index).name, address)

    def enqueue(self, stream: int | None) -> None:
        self.engine.enqueue(stream)

    def close(self) -> None:
        close = getattr(self.engine, "close", None)
        if close is not None:
            close()


class ProviderAdapter:
    """A registered Python provider and how it was registered."""

    def __init__(self, provider: EngineProvider, *, name: str, memory: str, capturable: bool, kind: str):
        if not callable(getattr(provider, "deserialize", None)):
            raise TypeError(f"a provider needs a deserialize(plan, device_id, options) method; got {provider!r}")
        if not name or not isinstance(name, str):
            raise ValueError("a provider needs a non-empty name")
        self.provider = provider
        self.name = name
        self.memory = memory
        self.capturable = bool(capturable)
        self.kind = kind

    def deserialize(self, plan: memoryview, device_id: int, weight_streaming_budget: int | None) -> EngineAdapter:
        options = EngineLoadOptions(device_id=device_id, weight_streaming_budget=weight_streaming_budget)
        try:
            engine = self.provider.deserialize(plan, device_id, options)
        finally:
            try:
                plan.release()
            except BufferError:
                logger.warning("provider '%s' kept a view of the plan past deserialize; it is invalid now", self.name)
        if engine is None:
            raise NotAcceptedError(f"provider '{self.name}' does not accept this plan")
        return EngineAdapter(engine, self.name)

    def close(self) -> None:
        close = getattr(self.provider, "close", None)
        if close is not None:
            close()

