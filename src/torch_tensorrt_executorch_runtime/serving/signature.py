"""A method's inputs and outputs as a server declares them.

ExecuTorch records one upper bound per dim and, per tensor, whether its shape
may change at run time (static, dynamic_bound, dynamic_unbound), not which of
its dims do: a tensor whose shape may change is declared with every dim -1,
and the program checks the bounds when it runs (its error goes back to the
client). ExecuTorch records no names either: they are the engine's binding
names when the method is one TensorRT delegate whose inputs and outputs are
the method's (what Torch-TensorRT exports), else INPUT__i / OUTPUT__i
(Triton's convention).
"""

from __future__ import annotations

import dataclasses
import os

from .. import pte
from ..program import Program

# The program's dtype names to the v2 protocol's datatypes (Triton: "TYPE_" + it).
V2_DATATYPES = {
    "bool": "BOOL",
    "uint8": "UINT8",
    "int8": "INT8",
    "int16": "INT16",
    "int32": "INT32",
    "int64": "INT64",
    "float16": "FP16",
    "float32": "FP32",
    "float64": "FP64",
    "bfloat16": "BF16",
}


class SignatureError(ValueError):
    """The method cannot be served as asked (a non-tensor input, a dtype servers lack, a batch it cannot take)."""


@dataclasses.dataclass(frozen=True)
class ServedTensor:
    name: str
    dtype: str  # the program's name: "float32", ...
    datatype: str  # the v2 protocol's: "FP32", ...
    dims: tuple[int, ...]  # -1 where the shape may change
    upper_bound: tuple[int, ...]  # the program's planned sizes


@dataclasses.dataclass(frozen=True)
class MethodSignature:
    method: str
    inputs: tuple[ServedTensor, ...]
    outputs: tuple[ServedTensor, ...]

    def batch_problem(self, max_batch: int) -> str | None:
        """Why requests cannot be batched up to `max_batch` along dim 0 (None when they can)."""
        for role, tensors in (("input", self.inputs), ("output", self.outputs)):
            for t in tensors:
                if not t.dims:
                    return f"{role} '{t.name}' is a scalar (rank 0): it has no dim 0 to batch along"
                if t.dims[0] != -1:
                    return (
                        f"{role} '{t.name}' has the static shape {list(t.upper_bound)}: batching needs dim 0 "
                        "to vary (export the program with a dynamic dim 0)"
                    )
                if t.upper_bound[0] < max_batch:
                    return (
                        f"{role} '{t.name}' takes at most {t.upper_bound[0]} rows in dim 0, "
                        f"fewer than --max-batch {max_batch}: give --max-batch {t.upper_bound[0]} or less"
                    )
        return None


def _engine_names(program: Program, method: str, inputs: int, outputs: int) -> tuple[list, list]:
    """The binding names of the method's one TensorRT engine, when its inputs and outputs are the
    method's (a fully delegated program); else no names."""
    delegates = [d for d in program.delegates if d.method == method and d.error is None]
    if len(delegates) != 1:
        return [], []
    bindings = delegates[0].bindings
    names_in = [b["name"] for b in bindings if b["is_input"]]
    names_out = [b["name"] for b in bindings if not b["is_input"]]
    if len(names_in) != inputs or len(names_out) != outputs:
        return [], []
    return names_in, names_out


def _served(role: str, index: int, value, recorded, engine_name: str | None) -> ServedTensor:
    if value.kind != "tensor":
        raise SignatureError(f"{role} {index} is a {value.kind}, not a tensor: servers exchange tensors only")
    datatype = V2_DATATYPES.get(value.dtype or "")
    if datatype is None:
        raise SignatureError(
            f"{role} {index} has dtype {value.dtype}, which the v2 protocol lacks "
            f"(served dtypes: {', '.join(V2_DATATYPES)})"
        )
    upper = tuple(value.shape or ())
    varies = recorded is not None and recorded.dynamism != "static"
    name = value.name or engine_name or f"{role.upper()}__{index}"
    return ServedTensor(name, value.dtype, datatype, tuple(-1 for _ in upper) if varies else upper, upper)


def method_signature(program: Program, path: str | os.PathLike, method: str = "forward") -> MethodSignature:
    """The signature of `method` of `program`, opened from `path` (read for the tensors' dynamism)."""
    info = program.method(method)
    recorded = {m.name: m for m in pte.read_program(path, payloads=False).methods}.get(method)

    def tensor_of(values, i):
        return values[i].tensor if recorded is not None and i < len(values) else None

    names_in, names_out = _engine_names(program, method, len(info.inputs), len(info.outputs))
    inputs = tuple(
        _served("input", i, v, tensor_of(recorded.inputs if recorded else (), i), names_in[i] if names_in else None)
        for i, v in enumerate(info.inputs)
    )
    outputs = tuple(
        _served("output", i, v, tensor_of(recorded.outputs if recorded else (), i), names_out[i] if names_out else None)
        for i, v in enumerate(info.outputs)
    )
    names = [t.name for t in inputs + outputs]
    if len(set(names)) != len(names):
        raise SignatureError(f"method '{method}' names two tensors alike ({names}): servers address tensors by name")
    return MethodSignature(method, inputs, outputs)
