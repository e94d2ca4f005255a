"""A Python provider as the provider C ABI sees it.

The ABI names an engine's tensors by index, wants ScalarType values, alias
indices and dims of a checked rank; the protocol (`types`) speaks in names and
dtype names. The adapters here translate and check, in plain Python values, so
the binding (`_native.providers`, and the compiled binding for the batched
entry) only moves those values across the C boundary and turns exceptions
into statuses. On every execute the backend makes one call here:
`set_shapes` when the profile or a shape changed (each then reaches the
engine), and `enqueue_at`, which passes on only the addresses that changed
before the engine's `enqueue`; for an output whose shape depends on data,
`set_output_capacity` before it and `output_result` after.
"""

from __future__ import annotations

import logging
from typing import Any, Protocol, cast

from .. import _dtypes
from ..errors import NotAcceptedError, NotSupportedError
from .types import Engine, EngineLoadOptions, EngineProvider, IoTensor

logger = logging.getLogger("torch_tensorrt_executorch_runtime")

Dims = tuple[int, ...]
# TTE_MAX_RANK of engine_provider.h.
MAX_RANK = 16


class _ContextSharingProvider(Protocol):
    """An EngineProvider with its optional create_execution_context (see `types.EngineProvider`)."""

    def create_execution_context(self, engine: Any, options: EngineLoadOptions) -> Engine | None: ...


class EngineAdapter:
    """A Python engine, its I/O tensors checked once and addressed by index."""

    def __init__(self, engine, owner: ProviderAdapter):
        self.engine = engine
        self.owner = owner
        provider_name = self.provider_name = owner.name
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
        # What the engine was last given: its profile, and, per profile,
        # addresses by index. Addresses belong to an execution context, and
        # an engine may keep one context per profile (tensorrt-python does:
        # TensorRT's setTensorAddress is an IExecutionContext call), so an
        # address given under one profile is not known to another's.
        self._profile: int | None = None
        self._addresses: dict[int | None, dict[int, int]] = {}
        # The last full set the backend sent (it sends None when unchanged).
        self._sent: tuple[tuple[int, ...], tuple[int, ...]] | None = None

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
                    f"profile {profile} of input '{tensor.name}' has rank {len(dims)}, "
                    f"the tensor has rank {tensor.rank}"
                )
            result.append(dims)
        return result[0], result[1], result[2]

    def set_shapes(
        self, profile: int, input_indices: tuple[int, ...], input_dims: tuple[Dims, ...],
        output_indices: tuple[int, ...], stream: int | None,
    ) -> list[Dims]:
        """Select `profile` (when it changed), set every input's dims, return every output's."""
        if profile != self._profile:
            self._profile = None  # until the engine has it
            select = getattr(self.engine, "select_profile", None)
            if select is not None:
                select(profile, stream)
            elif profile != 0:
                raise NotSupportedError(f"engine of provider '{self.provider_name}' has only profile 0")
            self._profile = profile
        for index, dims in zip(input_indices, input_dims, strict=False):
            self.engine.set_input_shape(self.tensor(index).name, dims)
        return [self._output_shape(index) for index in output_indices]

    def _output_shape(self, index: int) -> Dims:
        name = self.tensor(index).name
        shape = tuple(int(d) for d in self.engine.get_output_shape(name))
        if len(shape) > MAX_RANK:
            raise ValueError(f"output '{name}' has rank {len(shape)}, more than {MAX_RANK}")
        return shape

    def enqueue_at(self, tensor_indices: tuple[int, ...] | None, addresses: tuple[int, ...] | None,
                   stream: int | None) -> None:
        """Pass on the addresses the selected profile's context lacks (None: the same as the
        previous call's, which that context may still lack after a profile switch), then enqueue."""
        if addresses is not None:
            if tensor_indices is None:  # the backend sends both or neither
                raise TypeError("enqueue_at: addresses without tensor indices")
            self._sent = (tuple(tensor_indices), tuple(addresses))
        if self._sent is not None:
            known = self._addresses.setdefault(self._profile, {})
            for index, address in zip(*self._sent, strict=False):
                if known.get(index) != address:
                    known.pop(index, None)  # unknown until the engine took it
                    self.engine.set_tensor_address(self.tensor(index).name, address)
                    known[index] = address
        self.engine.enqueue(stream)

    # Data-dependent outputs (get_output_shape reported a -1): the backend says how many bytes the
    # address it binds holds before each enqueue, and asks for the result after it.
    def _data_dependent_entry(self, name: str):
        entry = getattr(self.engine, name, None)
        if entry is None:
            raise NotSupportedError(
                f"engine of provider '{self.provider_name}' reports a data-dependent output shape but has no "
                "set_output_capacity/output_result: it cannot run engines whose output shapes depend on data"
            )
        return entry

    def set_output_capacity(self, index: int, nbytes: int) -> None:
        self._data_dependent_entry("set_output_capacity")(self.tensor(index).name, int(nbytes))

    def output_result(self, index: int) -> tuple[Dims, int]:
        """The shape the engine wrote and the address of its elements (the one set, or the engine's own)."""
        name = self.tensor(index).name
        shape, address = self._data_dependent_entry("output_result")(name)
        shape = tuple(int(d) for d in shape)
        if len(shape) > MAX_RANK or any(d < 0 for d in shape):
            raise ValueError(f"output '{name}': the engine reported the result shape {list(shape)}")
        return shape, int(address or 0)

    def capturable(self, stream: int | None) -> bool:
        capturable = getattr(self.engine, "capturable", None)
        return True if capturable is None else bool(capturable(stream))

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
        # Whether the backend may share one deserialized engine between loads of a plan.
        self.shares_engines = callable(getattr(provider, "create_execution_context", None))

    def deserialize(self, plan: memoryview, fields: dict) -> EngineAdapter:
        """`fields`: the load options the backend passed, as EngineLoadOptions' fields."""
        options = EngineLoadOptions(**fields)
        try:
            engine = self.provider.deserialize(plan, options.device_id, options)
        finally:
            try:
                plan.release()
            except BufferError:
                logger.warning("provider '%s' kept a view of the plan past deserialize; it is invalid now", self.name)
        if engine is None:
            raise NotAcceptedError(f"provider '{self.name}' does not accept this plan")
        return EngineAdapter(engine, self)

    def create_execution_context(self, shared: EngineAdapter, fields: dict) -> EngineAdapter:
        """Another engine on what `shared` deserialized (providers with create_execution_context)."""
        # The backend asks this only of providers that have the method (shares_engines).
        provider = cast(_ContextSharingProvider, self.provider)
        engine = provider.create_execution_context(shared.engine, EngineLoadOptions(**fields))
        if engine is None:
            raise NotSupportedError(f"provider '{self.name}' made no execution context on a loaded engine")
        return EngineAdapter(engine, self)

    def describe_runtime(self) -> str:
        describe = getattr(self.provider, "describe_runtime", None)
        return str(describe()) if describe is not None else ""

    def close(self) -> None:
        close = getattr(self.provider, "close", None)
        if close is not None:
            close()

