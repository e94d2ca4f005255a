"""Pack serialized TensorRT engines into ExecuTorch .pte programs.

Each engine becomes one `TensorRTBackend` delegate whose blob is byte-identical
to what Torch-TensorRT 2.14's exporter writes for the same metadata, so the
programs made here exercise a runtime exactly like upstream's files do.

    from torch_tensorrt_executorch_runtime.pack import EngineSpec, TensorSpec, pack_program

    engine = EngineSpec(plan_bytes,
                        inputs=[TensorSpec("x", "float32", [(1, 4, 8), 16])],
                        outputs=[TensorSpec("y", "float32", ["x:0", 16])])
    pack_program("model.pte", [engine], placement="device_planned")

Specs are checked here without torch; building needs torch and executorch's
exir, imported only then. Engines in one method are wired by tensor name: a
method input is an engine input that no earlier engine produces (in order of
first use), and the method outputs are the engine outputs that no later
engine consumes (in engine order, then output order).

Shapes: an input dim is an int or a (min, opt, max) range; ranges become
torch.export dims, so ExecuTorch plans their upper bound and the delegate
resizes outputs at run time. An output dim is an int or "input_name:dim",
the current size of a dim of one of the same engine's inputs.

Placements (ExecuTorch's device support, as Torch-TensorRT writes it):
- "host": no target_device compile spec; method I/O and delegate arguments
  are host memory, the delegate stages copies itself.
- "device_planned": compile spec target_device=cuda:<device_id>; exir's
  PropagateDevicePass inserts et_copy H2D/D2H ops and plans the delegate
  arguments in CUDA arenas, method I/O stays host.
- "device_resident": as device_planned, with
  PropagateDeviceConfig(skip_h2d_for_method_inputs=True,
  skip_d2h_for_method_outputs=True) and MemoryPlanningPass(alloc_graph_input=
  False, alloc_graph_output=False): method inputs and outputs are device
  memory the caller provides. Every method input must feed exactly one engine
  (an exir restriction).

Aliased I/O (TR02): an engine output that TensorRT writes into one of its
inputs in place, e.g. a KV-cache update. `alias_mode` picks how the program
declares it:
- "buffer" (default, what Torch-TensorRT does for KV caches): the aliased
  input becomes a mutable buffer of the method, initialised to zeros, that
  persists across executions; the aliased output is declared a mutation of
  that buffer (ExecuTorch copies the delegate's aliased output back into it).
  Neither is a method input or output. Not available with "device_resident"
  (exir would run the write-back on device memory) and the input must be
  static and consumed by that one engine.
- "input": the aliased input stays a method input and the aliased output a
  method output. The delegate updates the input tensor in place: the
  caller's own buffer when the input is not memory-planned
  ("device_resident"), the method's planned copy of it otherwise; the
  updated value is also the aliased output.

Extra program content (the mixed-backend and external-data test programs):
- epilogue={"y": 2.0}: the method output "y" is returned multiplied by a
  constant tensor (a float gives shape [1]; a sequence of floats gives that
  vector, broadcast over the last dim). With epilogue_backend="xnnpack" the
  multiply is lowered to an XnnpackBackend delegate (float32/float16 only),
  with "portable" it stays an ExecuTorch CPU kernel.
- external_constants=True (or a name): the epilogue constants are stored in
  "<name>.ptd" beside the .pte (True: the .pte's stem) instead of in the
  .pte, looked up by their fully qualified name, "epilogue_<i>".

Backend lookup: exir finds a backend by class name, the first subclass of
BackendDetails called "TensorRTBackend" (and the last one on its multi-method
path). If Torch-TensorRT's own class is imported too, exir could pick it, so
while lowering, the packer hides every other class of that name from
BackendDetails.__subclasses__(). Packing holds a process-wide lock.
"""

from __future__ import annotations

import os
import platform
import re
import sysconfig
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence, Union

from ._blob_writer import ALIAS_KINDS, AliasedIo, BlobMetadata, IoBinding, write_blob

DTYPES = ("float32", "float16", "bfloat16", "int32", "int64", "int8", "uint8", "bool")
_DTYPE_ALIASES = {"float": "float32", "half": "float16", "int": "int32", "long": "int64"}
PLACEMENTS = ("host", "device_planned", "device_resident")
ALIAS_MODES = ("buffer", "input")
EPILOGUE_BACKENDS = ("xnnpack", "portable")
WEIGHT_STREAMING_BUDGET_KEY = "weight_streaming_budget"
TARGET_DEVICE_KEY = "target_device"
_WEIGHT_STREAMING_BUDGET_LIMIT = 2**63

DimSpec = Union[int, tuple, str]  # an int, (min, opt, max) or "input_name:dim"


class PackError(ValueError):
    """A spec cannot be packed; the message names the tensor, engine or method and why."""


def this_platform() -> str:
    """Torch-TensorRT's target_platform token for this machine."""
    system = platform.system().lower()
    machine = platform.machine().lower()
    if system.startswith("linux"):
        if machine.startswith("aarch64") or machine.startswith("arm64"):
            return "linux_aarch64"
        if machine.startswith("x86_64") or machine.startswith("amd64"):
            return "linux_x86_64"
    elif system.startswith("windows"):
        tag = sysconfig.get_platform().lower()
        if tag in ("win-arm64", "win_arm64") or machine.startswith(("arm64", "aarch64")):
            return "windows_arm64"
        if tag in ("win-amd64", "win_amd64") or machine.startswith(("amd64", "x86_64")):
            return "windows_x86_64"
    return "unknown"


def _canonical_dtype(dtype: object, where: str) -> str:
    text = str(dtype).lower().removeprefix("torch.")
    text = _DTYPE_ALIASES.get(text, text)
    if text not in DTYPES:
        raise PackError(f"{where}: unsupported dtype '{dtype}'; expected one of {', '.join(DTYPES)}")
    return text


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


_REFERENCE = re.compile(r"^(?P<name>.+):(?P<dim>\d+)$", re.DOTALL)


@dataclass(frozen=True)
class TensorSpec:
    """One engine I/O tensor.

    shape: input dims are ints or (min, opt, max) ranges; output dims are ints
    or "input_name:dim". A range with min == max is a static dim.
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
        if _is_int(dim):
            if dim < 0:
                raise PackError(f"{where}: size must be >= 0, got {dim}")
            return dim
        if isinstance(dim, str):
            match = _REFERENCE.match(dim)
            if match is None:
                raise PackError(f"{where}: expected 'input_name:dim', got '{dim}'")
            return dim
        if isinstance(dim, (tuple, list)):
            if len(dim) != 3 or not all(_is_int(v) for v in dim):
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
        raise PackError(f"{where}: a dim is an int, (min, opt, max) or 'input_name:dim', got {dim!r}")

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def is_dynamic(self) -> bool:
        return any(not _is_int(dim) for dim in self.shape)


def _reference(dim: str) -> tuple[str, int]:
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
                if isinstance(dim, str):
                    name, index = _reference(dim)
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
        if isinstance(self.device_id, bool) or not _is_int(self.device_id) or self.device_id < 0:
            raise PackError(f"device_id must be an int >= 0, got {self.device_id!r}")
        budget = self.weight_streaming_budget
        if budget is not None and (not _is_int(budget) or not 0 <= budget < _WEIGHT_STREAMING_BUDGET_LIMIT):
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
                raise PackError(f"aliased output '{output}': kind must be one of {', '.join(ALIAS_KINDS)}, got {kind!r}")
            if output not in outputs:
                raise PackError(f"aliased_io names output '{output}', which is not an output of the engine")
            if input_name not in inputs:
                raise PackError(f"aliased output '{output}' names input '{input_name}', which is not an input of the engine")
            if output in aliased_outputs:
                raise PackError(f"output '{output}' is aliased more than once")
            if input_name in aliased_inputs:
                raise PackError(f"input '{input_name}' is aliased by both '{aliased_inputs[input_name]}' and '{output}'")
            self._check_alias_shape(outputs[output], inputs[input_name], inputs)
            aliased_outputs.add(output)
            aliased_inputs[input_name] = output
            checked.append((output, input_name, kind))
        return tuple(checked)

    @staticmethod
    def _check_alias_shape(output: TensorSpec, source: TensorSpec, inputs: dict[str, TensorSpec]) -> None:
        # The output is bound to the input's memory: same dtype, same shape.
        if output.dtype != source.dtype:
            raise PackError(f"aliased output '{output.name}' is {output.dtype} but its input '{source.name}' is {source.dtype}")
        if output.rank != source.rank:
            raise PackError(f"aliased output '{output.name}' has rank {output.rank} but its input '{source.name}' has rank {source.rank}")
        for i, (out_dim, in_dim) in enumerate(zip(output.shape, source.shape)):
            if isinstance(out_dim, str):
                name, index = _reference(out_dim)
                same = (name, index) == (source.name, i) or (
                    _is_int(in_dim) and inputs[name].shape[index] == in_dim
                )
            else:
                same = out_dim == in_dim
            if not same:
                hint = f"'{source.name}:{i}'" + (f" or {in_dim}" if _is_int(in_dim) else "")
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


@dataclass(frozen=True)
class PackedProgram:
    """A packed .pte and the .ptd files it needs ({file name: bytes})."""

    program: bytes
    data_files: Mapping[str, bytes] = field(default_factory=dict)

    def write(self, path: str | os.PathLike) -> list[Path]:
        """Write the .pte to `path` and the .ptd files beside it; returns the paths written."""
        target = Path(path)
        target.write_bytes(self.program)
        written = [target]
        for name, data in self.data_files.items():
            data_path = target.parent / name
            data_path.write_bytes(data)
            written.append(data_path)
        return written


# Wiring is pure Python, so every spec error is reported without torch.

@dataclass(frozen=True)
class _EnginePlan:
    index: int
    spec: EngineSpec
    buffer_inputs: tuple[str, ...]  # aliased inputs held as mutable buffers ("buffer" mode)


@dataclass(frozen=True)
class MethodPlan:
    """How one method is built: its inputs, outputs and engines, in order."""

    name: str
    placement: str
    inputs: tuple[TensorSpec, ...]
    outputs: tuple[TensorSpec, ...]
    engines: tuple[_EnginePlan, ...]
    buffers: tuple[TensorSpec, ...]  # mutable state ("buffer" alias mode)
    mutations: tuple[tuple[str, str], ...]  # (aliased output, buffer input name)
    epilogue: tuple[tuple[int, tuple[float, ...]], ...]  # (output index, constant values)


def _bounds(dim: DimSpec) -> tuple[int, int]:
    if _is_int(dim):
        return dim, dim
    return dim[0], dim[2]


def _output_bounds(engine: EngineSpec, spec: TensorSpec) -> list[tuple[int, int]]:
    bounds = []
    for dim in spec.shape:
        if isinstance(dim, str):
            name, index = _reference(dim)
            bounds.append(_bounds(engine.input_spec(name).shape[index]))
        else:
            bounds.append((dim, dim))
    return bounds


def _plan_method(
    name: str,
    engines: Sequence[EngineSpec],
    placement: str,
    alias_mode: str,
    epilogue: Mapping[str, Sequence[float]],
) -> MethodPlan:
    where = f"method '{name}'"
    if not engines:
        raise PackError(f"{where} has no engines")
    producers: dict[str, tuple[int, TensorSpec]] = {}
    for index, engine in enumerate(engines):
        for spec in engine.outputs:
            if spec.name in producers:
                raise PackError(
                    f"{where}: tensor '{spec.name}' is produced by engine {producers[spec.name][0]} "
                    f"and engine {index}; names must be unique"
                )
            producers[spec.name] = (index, spec)

    method_inputs: dict[str, tuple[int, TensorSpec]] = {}
    consumers: dict[str, list[int]] = {}
    buffers: dict[str, TensorSpec] = {}
    mutations = []
    engine_plans = []
    for index, engine in enumerate(engines):
        aliased = {source: output for output, source, _ in engine.aliased_io}
        buffer_inputs = []
        for spec in engine.inputs:
            consumers.setdefault(spec.name, []).append(index)
            producer = producers.get(spec.name)
            if producer is not None:
                source_index, produced = producer
                if source_index >= index:
                    raise PackError(
                        f"{where}: engine {index} consumes '{spec.name}', which engine {source_index} "
                        "produces later; list engines in execution order"
                    )
                _check_wire(where, spec, index, produced, engines[source_index], source_index)
                if alias_mode == "buffer" and spec.name in aliased:
                    raise PackError(
                        f"{where}: engine {index} updates '{spec.name}' in place (aliased by "
                        f"'{aliased[spec.name]}'), but alias_mode 'buffer' needs it to be a method "
                        "input, not a tensor engine "
                        f"{source_index} produces; use alias_mode='input'"
                    )
                continue
            if alias_mode == "buffer" and spec.name in aliased:
                if spec.is_dynamic:
                    raise PackError(
                        f"{where}: aliased input '{spec.name}' becomes a mutable buffer in alias_mode "
                        "'buffer' and needs a static shape; use alias_mode='input' for dynamic caches"
                    )
                if spec.name in buffers or spec.name in method_inputs:
                    raise PackError(
                        f"{where}: aliased input '{spec.name}' is consumed by more than one engine; "
                        "alias_mode 'buffer' needs it to belong to one engine"
                    )
                buffers[spec.name] = spec
                buffer_inputs.append(spec.name)
                mutations.append((aliased[spec.name], spec.name))
                continue
            if spec.name in buffers:
                raise PackError(
                    f"{where}: '{spec.name}' is a mutable buffer of engine {consumers[spec.name][0]} "
                    f"(alias_mode 'buffer') and cannot also feed engine {index}"
                )
            known = method_inputs.get(spec.name)
            if known is None:
                method_inputs[spec.name] = (index, spec)
            elif (known[1].dtype, known[1].shape) != (spec.dtype, spec.shape):
                raise PackError(
                    f"{where}: method input '{spec.name}' is declared {known[1].dtype}{list(known[1].shape)} "
                    f"by engine {known[0]} but {spec.dtype}{list(spec.shape)} by engine {index}"
                )
        engine_plans.append(_EnginePlan(index, engine, tuple(buffer_inputs)))

    mutated_outputs = {output for output, _ in mutations}
    outputs = []
    for index, engine in enumerate(engines):
        for spec in engine.outputs:
            later = [c for c in consumers.get(spec.name, []) if c > index]
            if later or spec.name in mutated_outputs:
                continue
            outputs.append(spec)
    if not outputs:
        raise PackError(f"{where} has no outputs: every engine output is consumed by a later engine or is a buffer update")

    if placement == "device_resident":
        if buffers:
            raise PackError(
                f"{where}: alias_mode 'buffer' cannot be combined with placement 'device_resident' "
                "(exir would write the buffer back with a host kernel on device memory); "
                "use alias_mode='input'"
            )
        for input_name in method_inputs:
            if len(consumers[input_name]) > 1:
                raise PackError(
                    f"{where}: placement 'device_resident' needs every method input to feed exactly one "
                    f"engine, but '{input_name}' feeds engines {consumers[input_name]} "
                    "(exir's PropagateDevicePass restriction)"
                )

    epilogue_plan = []
    output_names = [spec.name for spec in outputs]
    for output_name, values in epilogue.items():
        if output_name not in output_names:
            continue
        spec = outputs[output_names.index(output_name)]
        if spec.dtype == "bool":
            raise PackError(f"{where}: epilogue for output '{output_name}': cannot scale a bool tensor")
        if len(values) > 1:
            bounds = _output_bounds(engines[producers[output_name][0]], spec)
            if not bounds or bounds[-1] != (len(values), len(values)):
                raise PackError(
                    f"{where}: epilogue for output '{output_name}' has {len(values)} values, but the "
                    f"output's last dim is {spec.shape[-1] if spec.shape else 'absent'!r}; give one value "
                    "or as many as a static last dim"
                )
        epilogue_plan.append((output_names.index(output_name), tuple(values)))

    return MethodPlan(
        name=name,
        placement=placement,
        inputs=tuple(spec for _, spec in method_inputs.values()),
        outputs=tuple(outputs),
        engines=tuple(engine_plans),
        buffers=tuple(buffers.values()),
        mutations=tuple(mutations),
        epilogue=tuple(epilogue_plan),
    )


def _check_wire(where, consumer: TensorSpec, consumer_index, produced: TensorSpec, producer, producer_index) -> None:
    prefix = f"{where}: '{consumer.name}' from engine {producer_index} to engine {consumer_index}"
    if consumer.dtype != produced.dtype:
        raise PackError(f"{prefix}: produced as {produced.dtype}, consumed as {consumer.dtype}")
    if consumer.rank != produced.rank:
        raise PackError(f"{prefix}: produced with rank {produced.rank}, consumed with rank {consumer.rank}")
    for i, (low, high) in enumerate(_output_bounds(producer, produced)):
        accept_low, accept_high = _bounds(consumer.shape[i])
        if low < accept_low or high > accept_high:
            produced_text = str(low) if low == high else f"[{low}, {high}]"
            accepted_text = str(accept_low) if accept_low == accept_high else f"[{accept_low}, {accept_high}]"
            raise PackError(f"{prefix}: dim {i} is produced as {produced_text} but engine {consumer_index} accepts {accepted_text}")


def _normalize_methods(methods) -> dict[str, tuple[EngineSpec, ...]]:
    if isinstance(methods, EngineSpec):
        methods = [methods]
    if isinstance(methods, Mapping):
        items = list(methods.items())
    elif isinstance(methods, Sequence) and not isinstance(methods, (str, bytes)):
        items = [("forward", methods)]
    else:
        raise PackError(f"methods must be a sequence of EngineSpec or a mapping of method name to one, got {methods!r}")
    if not items:
        raise PackError("no methods to pack")
    normalized = {}
    for name, engines in items:
        if not isinstance(name, str) or not name:
            raise PackError(f"method names must be non-empty str, got {name!r}")
        if isinstance(engines, EngineSpec):
            engines = [engines]
        if not isinstance(engines, Sequence) or not all(isinstance(e, EngineSpec) for e in engines):
            raise PackError(f"method '{name}': expected a sequence of EngineSpec, got {engines!r}")
        normalized[name] = tuple(engines)
    return normalized


def _normalize_epilogue(epilogue) -> dict[str, tuple[float, ...]]:
    if epilogue is None:
        return {}
    if not isinstance(epilogue, Mapping):
        raise PackError(f"epilogue must map output names to a float or a sequence of floats, got {epilogue!r}")
    normalized = {}
    for name, value in epilogue.items():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            normalized[name] = (float(value),)
        elif isinstance(value, Sequence) and value and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in value
        ):
            normalized[name] = tuple(float(v) for v in value)
        else:
            raise PackError(f"epilogue for output '{name}' must be a float or a non-empty sequence of floats, got {value!r}")
    return normalized


def plan_program(
    methods,
    *,
    placement: str | Mapping[str, str] = "host",
    alias_mode: str = "buffer",
    epilogue: Mapping[str, float | Sequence[float]] | None = None,
) -> tuple[MethodPlan, ...]:
    """Check the specs and wire every method; raises PackError. Needs no torch."""
    normalized = _normalize_methods(methods)
    if isinstance(placement, str):
        placements = {name: placement for name in normalized}
    elif isinstance(placement, Mapping):
        unknown = sorted(set(placement) - set(normalized))
        if unknown:
            raise PackError(f"placement names unknown methods {unknown} (methods: {list(normalized)})")
        placements = {name: placement.get(name, "host") for name in normalized}
    else:
        raise PackError(f"placement must be a str or a mapping of method name to str, got {placement!r}")
    for name, value in placements.items():
        if value not in PLACEMENTS:
            raise PackError(f"method '{name}': placement must be one of {', '.join(PLACEMENTS)}, got {value!r}")
    if alias_mode not in ALIAS_MODES:
        raise PackError(f"alias_mode must be one of {', '.join(ALIAS_MODES)}, got {alias_mode!r}")
    scales = _normalize_epilogue(epilogue)
    plans = tuple(
        _plan_method(name, engines, placements[name], alias_mode, scales) for name, engines in normalized.items()
    )
    used = {plan.outputs[i].name for plan in plans for i, _ in plan.epilogue}
    missing = sorted(set(scales) - used)
    if missing:
        raise PackError(f"epilogue names {missing}, which are not method outputs")
    return plans


def build_program(
    methods,
    *,
    placement: str | Mapping[str, str] = "host",
    alias_mode: str = "buffer",
    epilogue: Mapping[str, float | Sequence[float]] | None = None,
    epilogue_backend: str = "xnnpack",
    external_constants: bool | str = False,
) -> PackedProgram:
    """Pack in memory: the .pte bytes and the .ptd files it needs.

    external_constants=True names the .ptd "model.ptd" here; pack_program
    names it after the .pte instead.
    """
    plans = plan_program(methods, placement=placement, alias_mode=alias_mode, epilogue=epilogue)
    if epilogue_backend not in EPILOGUE_BACKENDS:
        raise PackError(f"epilogue_backend must be one of {', '.join(EPILOGUE_BACKENDS)}, got {epilogue_backend!r}")
    data_name = _data_name(external_constants, None)
    if data_name is not None and not any(plan.epilogue for plan in plans):
        raise PackError(
            "external_constants needs an epilogue: engines keep their weights inside the plan, "
            "so without one the program has no constants to store in a .ptd"
        )
    from . import _pack_exir

    return _pack_exir.lower(plans, epilogue_backend=epilogue_backend, data_name=data_name)


def _data_name(external_constants: bool | str, path: str | os.PathLike | None) -> str | None:
    if external_constants is False or external_constants is None:
        return None
    if external_constants is True:
        return Path(path).stem if path is not None else "model"
    if isinstance(external_constants, str) and external_constants and "/" not in external_constants:
        return external_constants.removesuffix(".ptd")
    raise PackError(f"external_constants must be a bool or a file name without folders, got {external_constants!r}")


def pack_program(
    path: str | os.PathLike | None,
    methods,
    *,
    placement: str | Mapping[str, str] = "host",
    alias_mode: str = "buffer",
    epilogue: Mapping[str, float | Sequence[float]] | None = None,
    epilogue_backend: str = "xnnpack",
    external_constants: bool | str = False,
) -> bytes:
    """Pack engines into a .pte; returns its bytes and writes `path` (+ .ptd files) when given.

    methods: a sequence of EngineSpec (the method "forward") or a mapping of
    method name to one. placement may also map method names to placements.
    See the module documentation for alias_mode, epilogue and
    external_constants.
    """
    name = _data_name(external_constants, path)
    packed = build_program(
        methods,
        placement=placement,
        alias_mode=alias_mode,
        epilogue=epilogue,
        epilogue_backend=epilogue_backend,
        external_constants=name if name is not None else False,
    )
    if path is not None:
        packed.write(path)
    return packed.program


__all__ = [
    "DTYPES",
    "EngineSpec",
    "MethodPlan",
    "PLACEMENTS",
    "PackError",
    "PackedProgram",
    "TensorSpec",
    "build_program",
    "pack_program",
    "plan_program",
    "this_platform",
]
