"""Wiring engines into methods: `plan_program` checks the specs and decides
each method's inputs, outputs, buffers and epilogue. Pure Python, so every
spec error is reported without torch.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import cast

from .specs import DimRange, DimSpec, EngineSpec, PackError, TensorSpec, is_int, parse_reference, upper_bound

PLACEMENTS = ("host", "device_planned", "device_resident")
ALIAS_MODES = ("buffer", "input")


@dataclass(frozen=True)
class EnginePlan:
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
    engines: tuple[EnginePlan, ...]
    buffers: tuple[TensorSpec, ...]  # mutable state ("buffer" alias mode)
    mutations: tuple[tuple[str, str], ...]  # (aliased output, buffer input name)
    epilogue: tuple[tuple[int, tuple[float, ...]], ...]  # (output index, constant values)


def _bounds(dim: DimSpec) -> tuple[int, int]:
    if is_int(dim):
        return dim, dim
    # Not an int, so a range: the dims given here are inputs', which EngineSpec allows
    # nothing else (outputs' references and "<=N" are resolved before).
    dim_range = cast(DimRange, dim)
    return dim_range[0], dim_range[2]


def _output_bounds(engine: EngineSpec, spec: TensorSpec) -> list[tuple[int, int]]:
    bounds: list[tuple[int, int]] = []
    for dim in spec.shape:
        bound = upper_bound(dim)
        if bound is not None:
            bounds.append((0, bound))
        elif isinstance(dim, str):
            name, index = parse_reference(dim)
            bounds.append(_bounds(engine.input_spec(name).shape[index]))
        else:
            bounds.append(_bounds(dim))  # an int: EngineSpec allows outputs no range
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
        engine_plans.append(EnginePlan(index, engine, tuple(buffer_inputs)))

    mutated_outputs = {output for output, _ in mutations}
    outputs = []
    for index, engine in enumerate(engines):
        for spec in engine.outputs:
            later = [c for c in consumers.get(spec.name, []) if c > index]
            if later or spec.name in mutated_outputs:
                continue
            outputs.append(spec)
    if not outputs:
        raise PackError(
            f"{where} has no outputs: every engine output is consumed by a later engine or is a buffer update"
        )

    if placement == "device_resident":
        if buffers:
            raise PackError(
                f"{where}: alias_mode 'buffer' cannot be combined with placement 'device_resident' "
                "(exir would write the buffer back with a host kernel on device memory); "
                "use alias_mode='input'"
            )
        for spec in outputs:
            if any(isinstance(d, str) and d.startswith("<=") for d in spec.shape):
                raise PackError(
                    f"{where}: output '{spec.name}' has a data-dependent dim ({list(spec.shape)}), which "
                    "placement 'device_resident' cannot return: exir still inserts a device-to-host copy "
                    "for it and plans no memory for the copy's source, so ExecuTorch would refuse the "
                    "program; use placement 'device_planned' (or 'host')"
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
            raise PackError(
                f"{prefix}: dim {i} is produced as {produced_text} but engine {consumer_index} accepts {accepted_text}"
            )


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
    normalized: dict[str, tuple[float, ...]] = {}
    for name, value in epilogue.items():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            normalized[name] = (float(value),)
        elif isinstance(value, Sequence) and value and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in value
        ):
            normalized[name] = tuple(float(v) for v in value)
        else:
            raise PackError(
                f"epilogue for output '{name}' must be a float or a non-empty sequence of floats, got {value!r}"
            )
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
