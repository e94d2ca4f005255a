"""Test-engine plans: the "engines" of the test providers.

No TensorRT engine can run on a machine without an NVIDIA GPU and TensorRT, so
the backend is tested through test providers (``test-host``, ``test-cuda``,
``test-cuda-nocapture``) whose plan is a small format instead of a TensorRT
plan: the magic ``TTE-TEST-ENGINE\\n`` followed by a UTF-8 JSON document
(``docs/test-engine-format.md``). A test plan is packed into a ``.pte`` like
a real engine::

    from torch_tensorrt_executorch_runtime.testing import PlanInput, PlanOutput, make_test_engine

    plan = make_test_engine(
        "add_one",
        [PlanInput("x", "float32", shape=[(1, 2, 8), 4]),   # dim 0 in 1..8, opt 2
         PlanOutput("y", "float32", shape_of="x")])

Tensors may also be given as dicts that mirror the JSON exactly
(``{"name": "x", "is_input": True, "dtype": "float32", "profiles": [...]}``).
This module checks the structure and types; the provider checks the rest
(what each op takes, aliases against shapes) when it deserializes the plan,
with a message naming the field at fault. Standard library only.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Union

from . import _dtypes
from ._plan_magic import TEST_ENGINE_MAGIC

__all__ = [
    "DTYPES",
    "MAGIC",
    "OPS",
    "PlanInput",
    "PlanOutput",
    "Profile",
    "make_test_engine",
    "parse_test_engine",
    "test_engine_spec",
]

MAGIC = TEST_ENGINE_MAGIC
OPS = ("add_one", "add", "identity", "kv_update", "null", "keep_positive")
# A fixed output dim known only after the run (keep_positive's output).
DATA_DEPENDENT_DIM = -1
DTYPES = _dtypes.names_accepted_by(_dtypes.TEST_ENGINE)
FAIL_HOOKS = ("deserialize", "enqueue")
MAX_SPIN_US = 10_000_000
MAX_MEMORY_BYTES = 1 << 40

Dim = Union[int, "tuple[int, int, int]"]


@dataclass(frozen=True)
class Profile:
    """One optimization profile of an input: min, opt and max dims of equal rank."""

    min: Sequence[int]
    opt: Sequence[int]
    max: Sequence[int]


@dataclass(frozen=True)
class PlanInput:
    """An engine input.

    Give either ``shape`` (one profile; each dim an int, static, or a
    ``(min, opt, max)`` tuple, as in the packer's ``TensorSpec``) or
    ``profiles`` (one ``Profile`` or ``{"min", "opt", "max"}`` mapping per
    optimization profile).
    """

    name: str
    dtype: str
    shape: Sequence[Dim] | None = None
    profiles: Sequence[Profile | Mapping[str, Sequence[int]]] | None = None


@dataclass(frozen=True)
class PlanOutput:
    """An engine output: ``shape_of`` (an input's name: the output takes its
    current shape) or ``shape`` (fixed dims; ``[-1]`` for keep_positive's
    output, whose size the engine knows only after it ran)."""

    name: str
    dtype: str
    shape_of: str | None = None
    shape: Sequence[int] | None = None


def _dims(value: Any, where: str, data_dependent_allowed: bool = False) -> list[int]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise TypeError(f"{where}: expected a list of dims, got {value!r}")
    dims = []
    for i, d in enumerate(value):
        if isinstance(d, bool) or not isinstance(d, int):
            raise TypeError(f"{where}[{i}]: expected an integer dim, got {d!r}")
        if d < 0 and not (data_dependent_allowed and d == DATA_DEPENDENT_DIM):
            raise ValueError(f"{where}[{i}]: dims are >= 0, got {d} (give dynamic dims as (min, opt, max))")
        dims.append(d)
    return dims


def _profile(value: Any, where: str) -> dict[str, list[int]]:
    if isinstance(value, Profile):
        value = {"min": value.min, "opt": value.opt, "max": value.max}
    if not isinstance(value, Mapping):
        raise TypeError(f"{where}: expected a Profile or a {{min, opt, max}} mapping, got {value!r}")
    if set(value) != {"min", "opt", "max"}:
        raise ValueError(f"{where}: a profile has exactly the keys min, opt and max, got {sorted(value)}")
    out = {key: _dims(value[key], f"{where}.{key}") for key in ("min", "opt", "max")}
    if not len(out["min"]) == len(out["opt"]) == len(out["max"]):
        raise ValueError(f"{where}: min, opt and max must have one rank, got {out}")
    for d, (lo, opt, hi) in enumerate(zip(out["min"], out["opt"], out["max"], strict=True)):
        if not lo <= opt <= hi:
            raise ValueError(f"{where}: dim {d} needs min <= opt <= max, got {lo}, {opt}, {hi}")
    return out


def _profile_from_shape(shape: Any, where: str) -> dict[str, list[int]]:
    if isinstance(shape, (str, bytes)) or not isinstance(shape, Sequence):
        raise TypeError(f"{where}: expected a list of dims, got {shape!r}")
    lo, opt, hi = [], [], []
    for i, d in enumerate(shape):
        if isinstance(d, tuple):
            if len(d) != 3:
                raise ValueError(f"{where}[{i}]: a dynamic dim is (min, opt, max), got {d!r}")
            lo.append(d[0])
            opt.append(d[1])
            hi.append(d[2])
        else:
            lo.append(d)
            opt.append(d)
            hi.append(d)
    return _profile({"min": lo, "opt": opt, "max": hi}, where)


def _check_dtype(dtype: Any, where: str) -> str:
    if dtype not in DTYPES:
        raise ValueError(f"{where}.dtype: unknown dtype {dtype!r} (expected one of {', '.join(DTYPES)})")
    return dtype


def _check_name(name: Any, where: str) -> str:
    if not isinstance(name, str) or not name:
        raise ValueError(f"{where}.name: expected a non-empty string, got {name!r}")
    return name


def _tensor(value: Any, where: str) -> dict[str, Any]:
    if isinstance(value, PlanInput):
        name = _check_name(value.name, where)
        if (value.shape is None) == (value.profiles is None):
            raise ValueError(f"{where} ({name!r}): give an input exactly one of shape or profiles")
        if value.shape is not None:
            profiles = [_profile_from_shape(value.shape, f"{where}.shape")]
        else:
            assert value.profiles is not None  # exactly one of shape and profiles (checked above)
            profiles = [_profile(p, f"{where}.profiles[{i}]") for i, p in enumerate(value.profiles)]
        return {"name": name, "is_input": True, "dtype": _check_dtype(value.dtype, where), "profiles": profiles}
    if isinstance(value, PlanOutput):
        return _tensor(
            {"name": value.name, "is_input": False, "dtype": value.dtype}
            | ({"shape_of": value.shape_of} if value.shape_of is not None else {})
            | ({"shape": value.shape} if value.shape is not None else {}),
            where,
        )
    if not isinstance(value, Mapping):
        raise TypeError(f"{where}: expected a PlanInput, a PlanOutput or a mapping, got {value!r}")

    name = _check_name(value.get("name"), where)
    where = f"{where} ({name!r})"
    is_input = value.get("is_input")
    if not isinstance(is_input, bool):
        raise TypeError(f"{where}.is_input: expected True or False, got {is_input!r}")
    dtype = _check_dtype(value.get("dtype"), where)
    if is_input:
        known = {"name", "is_input", "dtype", "profiles"}
        if set(value) - known:
            raise ValueError(
                f"{where}: unknown keys {sorted(set(value) - known)} for an input (expected {sorted(known)})"
            )
        given_profiles = value.get("profiles")
        if isinstance(given_profiles, (str, bytes)) or not isinstance(given_profiles, Sequence) or not given_profiles:
            raise ValueError(f"{where}.profiles: expected a non-empty list of profiles, got {given_profiles!r}")
        return {
            "name": name,
            "is_input": True,
            "dtype": dtype,
            "profiles": [_profile(p, f"{where}.profiles[{i}]") for i, p in enumerate(given_profiles)],
        }
    known = {"name", "is_input", "dtype", "shape_of", "shape"}
    if set(value) - known:
        raise ValueError(f"{where}: unknown keys {sorted(set(value) - known)} for an output (expected {sorted(known)})")
    if ("shape_of" in value) == ("shape" in value):
        raise ValueError(f"{where}: give an output exactly one of shape_of (an input's name) or shape (fixed dims)")
    out = {"name": name, "is_input": False, "dtype": dtype}
    if "shape_of" in value:
        if not isinstance(value["shape_of"], str) or not value["shape_of"]:
            raise ValueError(f"{where}.shape_of: expected an input's name, got {value['shape_of']!r}")
        out["shape_of"] = value["shape_of"]
    else:
        out["shape"] = _dims(value["shape"], f"{where}.shape", data_dependent_allowed=True)
    return out


def make_test_engine(
    op: str,
    tensors: Sequence[PlanInput | PlanOutput | Mapping[str, Any]],
    aliases: Mapping[str, str] | None = None,
    fail: Mapping[str, str] | None = None,
    *,
    spin_us: int = 0,
    scratch_bytes: int | Sequence[int] = 0,
    weight_bytes: int = 0,
) -> bytes:
    """The bytes of a test-engine plan.

    ``op``: one of ``OPS``. ``tensors``: the engine's I/O tensors in engine
    order (inputs and outputs may interleave; roles of the op go by order of
    appearance among inputs and among outputs). ``aliases``: output name ->
    input name the engine writes in place (TensorRT's KV-cache update).
    ``fail``: ``{"deserialize" | "enqueue": message}``, makes that provider
    call fail with the message. ``spin_us``: enqueue waits this long (on the
    stream, for the CUDA provider) before the op writes its outputs, so work
    that is not waited for shows. ``scratch_bytes``: the scratch memory a run
    uses (one int, or one per profile), the engine's own or given by the
    backend; ``weight_bytes``: memory the deserialized engine holds, shared
    by its execution contexts.
    """
    if op not in OPS:
        raise ValueError(f"unknown op {op!r} (expected one of {', '.join(OPS)})")
    if isinstance(tensors, (str, bytes, Mapping)) or not isinstance(tensors, Sequence) or not tensors:
        raise ValueError(f"tensors: expected a non-empty list, got {tensors!r}")
    entries = [_tensor(t, f"tensors[{i}]") for i, t in enumerate(tensors)]
    seen: dict[str, int] = {}  # tensor name -> index
    for i, entry in enumerate(entries):
        if entry["name"] in seen:
            raise ValueError(f"tensors[{i}]: name {entry['name']!r} is also used by tensors[{seen[entry['name']]}]")
        seen[entry["name"]] = i

    doc: dict[str, Any] = {"op": op, "tensors": entries}
    if aliases is not None:
        if not isinstance(aliases, Mapping):
            raise TypeError(f"aliases: expected a mapping of output name to input name, got {aliases!r}")
        for out_name, in_name in aliases.items():
            if not isinstance(out_name, str) or not isinstance(in_name, str):
                raise TypeError(f"aliases: expected names (str -> str), got {out_name!r}: {in_name!r}")
        doc["aliases"] = dict(aliases)
    if fail is not None:
        if not isinstance(fail, Mapping):
            raise TypeError(f"fail: expected a mapping, got {fail!r}")
        for hook, message in fail.items():
            if hook not in FAIL_HOOKS:
                raise ValueError(f"fail: unknown hook {hook!r} (expected {', '.join(FAIL_HOOKS)})")
            if not isinstance(message, str):
                raise TypeError(f"fail.{hook}: expected a message string, got {message!r}")
        doc["fail"] = dict(fail)
    if isinstance(spin_us, bool) or not isinstance(spin_us, int) or not 0 <= spin_us <= MAX_SPIN_US:
        raise ValueError(f"spin_us: expected microseconds from 0 to {MAX_SPIN_US}, got {spin_us!r}")
    if spin_us:
        doc["spin_us"] = spin_us

    def _bytes(value, where):
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_MEMORY_BYTES:
            raise ValueError(f"{where}: expected bytes from 0 to {MAX_MEMORY_BYTES}, got {value!r}")
        return value

    if isinstance(scratch_bytes, Sequence) and not isinstance(scratch_bytes, (str, bytes)):
        doc["scratch_bytes"] = [_bytes(v, f"scratch_bytes[{i}]") for i, v in enumerate(scratch_bytes)]
    elif _bytes(scratch_bytes, "scratch_bytes"):
        doc["scratch_bytes"] = scratch_bytes
    if _bytes(weight_bytes, "weight_bytes"):
        doc["weight_bytes"] = weight_bytes
    return MAGIC + json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def parse_test_engine(plan: bytes) -> dict[str, Any]:
    """The JSON document of a test-engine plan (structure only: the provider
    validates the rest). Raises ValueError for bytes that are not one."""
    plan = bytes(plan)
    if not plan.startswith(MAGIC):
        raise ValueError(f"not a test-engine plan: it does not start with {MAGIC!r}")
    try:
        doc = json.loads(plan[len(MAGIC):].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"invalid test-engine plan: {e}") from None
    if not isinstance(doc, dict):
        raise ValueError("invalid test-engine plan: the JSON document is not an object")
    return doc


def test_engine_spec(
    op: str,
    inputs,
    outputs,
    *,
    aliased_io=(),
    fail=None,
    spin_us: int = 0,
    scratch_bytes: int | Sequence[int] = 0,
    weight_bytes: int = 0,
    **engine_options,
):
    """A packer ``EngineSpec`` whose plan is a test engine with these I/O.

    ``inputs``/``outputs`` are the packer's ``TensorSpec``s; an output takes
    the whole shape of one input (``["x:0", "x:1"]``), fixed dims, or, for
    ``keep_positive``, one data-dependent dim with its upper bound
    (``["<=64"]``), which the plan writes as ``[-1]``.
    ``aliased_io`` is both the blob's aliasing and the plan's ``aliases``;
    ``engine_options`` are the other ``EngineSpec`` fields.
    """
    from .pack import EngineSpec, PackError

    by_name = {spec.name: spec for spec in inputs}
    tensors: list[PlanInput | PlanOutput] = [
        PlanInput(spec.name, spec.dtype, shape=list(spec.shape)) for spec in inputs
    ]
    for spec in outputs:
        if spec.is_data_dependent:
            if any(not isinstance(d, str) or not d.startswith("<=") for d in spec.shape) or spec.rank != 1:
                raise PackError(
                    f"output '{spec.name}': a test engine's data-dependent output is 1-D (keep_positive), "
                    f"got {list(spec.shape)}"
                )
            tensors.append(PlanOutput(spec.name, spec.dtype, shape=[DATA_DEPENDENT_DIM]))
            continue
        if all(isinstance(d, int) for d in spec.shape):
            tensors.append(PlanOutput(spec.name, spec.dtype, shape=list(spec.shape)))
            continue
        sources = {d.rsplit(":", 1)[0] for d in spec.shape if isinstance(d, str)}
        source = by_name.get(sources.pop()) if len(sources) == 1 else None
        if source is None or source.rank != len(spec.shape) or not all(
            d == f"{source.name}:{i}" or d == source.shape[i] for i, d in enumerate(spec.shape)
        ):
            raise PackError(
                f"output '{spec.name}': a test engine output takes the whole shape of one input "
                f"('x:0', 'x:1', ...) or fixed dims, got {list(spec.shape)}"
            )
        tensors.append(PlanOutput(spec.name, spec.dtype, shape_of=source.name))
    aliases = {entry[0]: entry[1] for entry in aliased_io}
    plan = make_test_engine(
        op, tensors, aliases=aliases or None, fail=fail, spin_us=spin_us,
        scratch_bytes=scratch_bytes, weight_bytes=weight_bytes,
    )
    return EngineSpec(plan, list(inputs), list(outputs), aliased_io=aliased_io, **engine_options)


# A helper, not a test, whatever a test collector makes of its name.
# (mypy: a function takes new attributes at run time only.)
test_engine_spec.__test__ = False  # type: ignore[attr-defined]
