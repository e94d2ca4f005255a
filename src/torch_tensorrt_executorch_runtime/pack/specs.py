"""Engine specs: `TensorSpec`, `EngineSpec`, checked without torch, and the blob each engine becomes."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TypeGuard

from .. import _dtypes
from .._platform import this_platform
from .blob import ALIAS_KINDS, AliasedIo, BlobMetadata, IoBinding, write_blob

DTYPES = _dtypes.names_accepted_by(_dtypes.PACK)
WEIGHT_STREAMING_BUDGET_KEY = "weight_streaming_budget"
TARGET_DEVICE_KEY = "target_device"
_WEIGHT_STREAMING_BUDGET_LIMIT = 2**63

# (min, opt, max) of a dynamic input dim.
DimRange = tuple[int, int, int]
# An int, (min, opt, max), "input_name:dim", or (outputs only) "<=N": a dim
# the engine knows only after it runs (data-dependent), at most N.
DimSpec = int | DimRange | str


class PackError(ValueError):
    """A spec cannot be packed; the message names the tensor, engine or method and why."""


def _canonical_dtype(dtype: object, where: str) -> str:
    name = _dtypes.canonical_name(dtype)
    if name not in DTYPES:
        raise PackError(f"{where}: unsupported dtype '{dtype}'; expected one of {', '.join(DTYPES)}")
    return name

def is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)

_REFERENCE = re.compile(r"^(?P<name>.+):(?P<dim>\d+)$", re.DOTALL)
# "<=N": no input is named "<=N" by accident of this spelling, since a
# reference always ends in ":<dim>".
_UPPER_BOUND = re.compile(r"^<=(?P<bound>\d+)$")

@dataclass(frozen=True)
class TensorSpec:
    """One engine I/O tensor.

    shape: input dims are ints or (min, opt, max) ranges; output dims are ints,
    "input_name:dim", or "<=N" for a data-dependent dim (known only after the
    engine ran, e.g. nonzero's count) of at most N, which ExecuTorch plans as
    a dynamic dim with upper bound N. A range with min == max is a static dim.
    """

    name: str
    dtype: str
    shape: Sequence[DimSpec]

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise PackError(f"tensor name must be a non-empty str, got {self.name!r}")
        where = f"tensor '{self.name}'"
        object.__setattr__(self, "dtype", _canonical_dtype(self.dtype, where))
        if isinstance(self.shape, (str, bytes)) or not isinstance(self.shape, Sequence):
            raise PackError(f"{where}: shape must be a sequence of dims, got {self.shape!r}")
        dims = []
        for i, dim in enumerate(self.shape):
            dims.append(self._check_dim(dim, f"{where} dim {i}"))
        object.__setattr__(self, "shape", tuple(dims))

    @staticmethod
    def _check_dim(dim: object, where: str) -> DimSpec:
        if is_int(dim):
            if dim < 0:
                raise PackError(f"{where}: size must be >= 0, got {dim}")
            return dim
        if isinstance(dim, str):
            if dim.startswith("<="):
                if _UPPER_BOUND.match(dim) is None:
                    raise PackError(f"{where}: a data-dependent dim is '<=N' with N an int >= 0, got '{dim}'")
                return dim
            match = _REFERENCE.match(dim)
            if match is None:
                raise PackError(f"{where}: expected 'input_name:dim' or '<=N', got '{dim}'")
            return dim
        if isinstance(dim, (tuple, list)):
            if len(dim) != 3 or not all(is_int(v) for v in dim):
                raise PackError(f"{where}: a range is (min, opt, max) of ints, got {tuple(dim)!r}")
            low, opt, high = dim
            if not 0 <= low <= opt <= high:
                raise PackError(f"{where}: range needs 0 <= min <= opt <= max, got {tuple(dim)!r}")
            if low == high:
                return low
            if high < 2:
                raise PackError(
                    f"{where}: range {tuple(dim)!r} must allow a size of at least 2 "
                    "(torch.export specializes sizes 0 and 1); make it static"
                )
            return (low, opt, high)
        raise PackError(f"{where}: a dim is an int, (min, opt, max), 'input_name:dim' or '<=N', got {dim!r}")

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def is_dynamic(self) -> bool:
        return any(not is_int(dim) for dim in self.shape)

    @property
    def is_data_dependent(self) -> bool:
        return any(upper_bound(dim) is not None for dim in self.shape)


def upper_bound(dim: DimSpec) -> int | None:
    """N of a data-dependent dim "<=N", else None."""
    match = _UPPER_BOUND.match(dim) if isinstance(dim, str) else None
    return int(match.group("bound")) if match is not None else None

def parse_reference(dim: str) -> tuple[str, int]:
    match = _REFERENCE.match(dim)
    assert match is not None
    return match.group("name"), int(match.group("dim"))

@dataclass(frozen=True)
class EngineSpec:
    """A serialized engine and its I/O, as one TensorRTBackend delegate.

    aliased_io: (output, input, kind) triples, kind "kv_cache_update" (the
    default when a pair is given) or "user". target_platform, device_id,
    hardware_compatible and serialized_metadata go into the blob verbatim;
    weight_streaming_budget (bytes) into a compile spec of that name.
    write_binding_names=False leaves io_bindings empty, so the runtime takes
    the names from the engine's numeric suffixes.
    """

    engine: bytes
    inputs: Sequence[TensorSpec]
    outputs: Sequence[TensorSpec]
    aliased_io: Sequence[tuple] = ()
    device_id: int = 0
    hardware_compatible: bool = False
    serialized_metadata: str = ""
    target_platform: str = field(default_factory=this_platform)
    weight_streaming_budget: int | None = None
    write_binding_names: bool = True

    def __post_init__(self) -> None:
        if not isinstance(self.engine, (bytes, bytearray, memoryview)):
            raise PackError(f"engine must be bytes (a serialized plan), got {type(self.engine).__name__}")
        object.__setattr__(self, "engine", bytes(self.engine))
        if not self.engine:
            raise PackError("engine is empty: pass the serialized plan's bytes")
        for role in ("inputs", "outputs"):
            specs = getattr(self, role)
            if isinstance(specs, TensorSpec) or not isinstance(specs, Sequence):
                raise PackError(f"{role} must be a sequence of TensorSpec, got {specs!r}")
            for spec in specs:
                if not isinstance(spec, TensorSpec):
                    raise PackError(f"{role} must hold TensorSpec objects, got {spec!r}")
            object.__setattr__(self, role, tuple(specs))
        if not self.inputs:
            raise PackError("an engine needs at least one input")
        if not self.outputs:
            raise PackError("an engine needs at least one output")
        seen: dict[str, str] = {}
        for role, specs in (("input", self.inputs), ("output", self.outputs)):
            for spec in specs:
                if spec.name in seen:
                    raise PackError(f"duplicate tensor name '{spec.name}' (an {seen[spec.name]} and an {role})")
                seen[spec.name] = role
        inputs = {spec.name: spec for spec in self.inputs}
        for spec in self.outputs:
            for i, dim in enumerate(spec.shape):
                if isinstance(dim, tuple):
                    raise PackError(
                        f"output '{spec.name}' dim {i}: outputs take an int or 'input_name:dim', "
                        f"not a range {dim!r}"
                    )
                if isinstance(dim, str) and upper_bound(dim) is None:
                    name, index = parse_reference(dim)
                    if name not in inputs:
                        raise PackError(
                            f"output '{spec.name}' dim {i} refers to '{dim}', but the engine has no input "
                            f"'{name}' (inputs: {', '.join(inputs)})"
                        )
                    if index >= inputs[name].rank:
                        raise PackError(
                            f"output '{spec.name}' dim {i} refers to '{dim}', but input '{name}' "
                            f"has rank {inputs[name].rank}"
                        )
        for spec in self.inputs:
            for i, dim in enumerate(spec.shape):
                if isinstance(dim, str):
                    raise PackError(f"input '{spec.name}' dim {i}: inputs take an int or (min, opt, max), not '{dim}'")
        object.__setattr__(self, "aliased_io", self._check_aliases(inputs))
        if isinstance(self.device_id, bool) or not is_int(self.device_id) or self.device_id < 0:
            raise PackError(f"device_id must be an int >= 0, got {self.device_id!r}")
        budget = self.weight_streaming_budget
        if budget is not None and (not is_int(budget) or not 0 <= budget < _WEIGHT_STREAMING_BUDGET_LIMIT):
            raise PackError(f"weight_streaming_budget must be None or an int in [0, 2**63) bytes, got {budget!r}")
        for name in ("serialized_metadata", "target_platform"):
            if not isinstance(getattr(self, name), str):
                raise PackError(f"{name} must be a str, got {getattr(self, name)!r}")
        for name in ("hardware_compatible", "write_binding_names"):
            if not isinstance(getattr(self, name), bool):
                raise PackError(f"{name} must be a bool, got {getattr(self, name)!r}")

    def _check_aliases(self, inputs: dict[str, TensorSpec]) -> tuple[tuple[str, str, str], ...]:
        outputs = {spec.name: spec for spec in self.outputs}
        checked = []
        aliased_outputs: set[str] = set()
        aliased_inputs: dict[str, str] = {}
        for entry in self.aliased_io:
            if isinstance(entry, (str, bytes)) or not isinstance(entry, Sequence) or len(entry) not in (2, 3):
                raise PackError(f"aliased_io entries are (output, input[, kind]), got {entry!r}")
            output, input_name = entry[0], entry[1]
            kind = entry[2] if len(entry) == 3 else "kv_cache_update"
            if kind not in ALIAS_KINDS:
                raise PackError(
                    f"aliased output '{output}': kind must be one of {', '.join(ALIAS_KINDS)}, got {kind!r}"
                )
            if output not in outputs:
                raise PackError(f"aliased_io names output '{output}', which is not an output of the engine")
            if input_name not in inputs:
                raise PackError(
                    f"aliased output '{output}' names input '{input_name}', which is not an input of the engine"
                )
            if output in aliased_outputs:
                raise PackError(f"output '{output}' is aliased more than once")
            if input_name in aliased_inputs:
                raise PackError(
                    f"input '{input_name}' is aliased by both '{aliased_inputs[input_name]}' and '{output}'"
                )
            if outputs[output].is_data_dependent:
                raise PackError(
                    f"aliased output '{output}' has a data-dependent dim; "
                    "an output written in place has its input's shape"
                )
            self._check_alias_shape(outputs[output], inputs[input_name], inputs)
            aliased_outputs.add(output)
            aliased_inputs[input_name] = output
            checked.append((output, input_name, kind))
        return tuple(checked)

    @staticmethod
    def _check_alias_shape(output: TensorSpec, source: TensorSpec, inputs: dict[str, TensorSpec]) -> None:
        # The output is bound to the input's memory: same dtype, same shape.
        if output.dtype != source.dtype:
            raise PackError(
                f"aliased output '{output.name}' is {output.dtype} but its input '{source.name}' is {source.dtype}"
            )
        if output.rank != source.rank:
            raise PackError(
                f"aliased output '{output.name}' has rank {output.rank} "
                f"but its input '{source.name}' has rank {source.rank}"
            )
        for i, (out_dim, in_dim) in enumerate(zip(output.shape, source.shape, strict=True)):
            if isinstance(out_dim, str):
                name, index = parse_reference(out_dim)
                same = (name, index) == (source.name, i) or (
                    is_int(in_dim) and inputs[name].shape[index] == in_dim
                )
            else:
                same = out_dim == in_dim
            if not same:
                hint = f"'{source.name}:{i}'" + (f" or {in_dim}" if is_int(in_dim) else "")
                raise PackError(
                    f"aliased output '{output.name}' dim {i} ({out_dim!r}) must equal dim {i} of its input "
                    f"'{source.name}' ({in_dim!r}); write it as {hint}"
                )

    def input_spec(self, name: str) -> TensorSpec:
        for spec in self.inputs:
            if spec.name == name:
                return spec
        raise KeyError(name)

    def compile_specs(self, placement: str) -> list[tuple[str, bytes]]:
        """(key, value) compile specs of this engine's delegate for a placement."""
        specs = []
        if self.weight_streaming_budget is not None:
            specs.append((WEIGHT_STREAMING_BUDGET_KEY, str(self.weight_streaming_budget).encode("ascii")))
        if placement != "host":
            specs.append((TARGET_DEVICE_KEY, f"cuda:{self.device_id}".encode("ascii")))
        return specs

    def blob(self, input_order: Sequence[str] | None = None, output_order: Sequence[str] | None = None) -> bytes:
        """The delegate blob; bindings in delegate-argument order (default: spec order)."""
        input_names = list(input_order) if input_order is not None else [s.name for s in self.inputs]
        output_names = list(output_order) if output_order is not None else [s.name for s in self.outputs]
        if sorted(input_names) != sorted(s.name for s in self.inputs):
            raise PackError(f"input order {input_names} is not a permutation of the engine inputs")
        if sorted(output_names) != sorted(s.name for s in self.outputs):
            raise PackError(f"output order {output_names} is not a permutation of the engine outputs")
        bindings = []
        if self.write_binding_names:
            bindings = [IoBinding(name, True) for name in input_names]
            bindings += [IoBinding(name, False) for name in output_names]
        metadata = BlobMetadata(
            io_bindings=bindings,
            aliased_io=[AliasedIo(output, source, kind) for output, source, kind in self.aliased_io],
            hardware_compatible=self.hardware_compatible,
            device_id=self.device_id,
            serialized_metadata=self.serialized_metadata,
            target_platform=self.target_platform,
        )
        return write_blob(self.engine, metadata)
