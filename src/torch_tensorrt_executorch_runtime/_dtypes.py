"""The package's one dtype table: ExecuTorch ScalarTypes and what they are called elsewhere.

Each row is an ExecuTorch ScalarType (scalar_type.h, ET_FORALL_SCALAR_TYPES)
with its DLPack (code, bits), its TensorRT DataType name, and the places that
accept it: numpy can make it (CLI inputs), the packer can declare it, the test
engines run it (docs/test-engine-format.md). Every other module asks here.
"""

from __future__ import annotations

from dataclasses import dataclass

# DLDataTypeCode
_INT, _UINT, _FLOAT, _BFLOAT, _COMPLEX, _BOOL = 0, 1, 2, 4, 5, 6
_F8_E4M3FN, _F8_E4M3FNUZ, _F8_E5M2, _F8_E5M2FNUZ = 10, 11, 12, 13

NUMPY, PACK, TEST_ENGINE = "N", "P", "T"


@dataclass(frozen=True)
class DType:
    name: str
    scalar_type: int
    dlpack: tuple[int, int] | None  # (DLDataTypeCode, bits), lanes 1
    tensorrt: str | None  # TensorRT DataType name
    accepted_by: str  # NUMPY, PACK and TEST_ENGINE flags


_ROWS = (
    DType("uint8", 0, (_UINT, 8), "UINT8", "NPT"),
    DType("int8", 1, (_INT, 8), "INT8", "NPT"),
    DType("int16", 2, (_INT, 16), None, "NT"),
    DType("int32", 3, (_INT, 32), "INT32", "NPT"),
    DType("int64", 4, (_INT, 64), "INT64", "NPT"),
    DType("float16", 5, (_FLOAT, 16), "HALF", "NPT"),
    DType("float32", 6, (_FLOAT, 32), "FLOAT", "NPT"),
    DType("float64", 7, (_FLOAT, 64), None, "NT"),
    DType("complex32", 8, (_COMPLEX, 32), None, ""),
    DType("complex64", 9, (_COMPLEX, 64), None, ""),
    DType("complex128", 10, (_COMPLEX, 128), None, ""),
    DType("bool", 11, (_BOOL, 8), "BOOL", "NPT"),
    DType("qint8", 12, None, None, ""),
    DType("quint8", 13, None, None, ""),
    DType("qint32", 14, None, None, ""),
    DType("bfloat16", 15, (_BFLOAT, 16), "BF16", "PT"),
    DType("quint4x2", 16, None, None, ""),
    DType("quint2x4", 17, None, None, ""),
    DType("bits1x8", 18, None, None, ""),
    DType("bits2x4", 19, None, None, ""),
    DType("bits4x2", 20, None, None, ""),
    DType("bits8", 21, None, None, ""),
    DType("bits16", 22, None, None, ""),
    DType("float8_e5m2", 23, (_F8_E5M2, 8), None, ""),
    DType("float8_e4m3fn", 24, (_F8_E4M3FN, 8), "FP8", ""),
    DType("float8_e5m2fnuz", 25, (_F8_E5M2FNUZ, 8), None, ""),
    DType("float8_e4m3fnuz", 26, (_F8_E4M3FNUZ, 8), None, ""),
    DType("uint16", 27, (_UINT, 16), None, "N"),
    DType("uint32", 28, (_UINT, 32), None, "N"),
    DType("uint64", 29, (_UINT, 64), None, "N"),
)

BY_NAME = {row.name: row for row in _ROWS}
BY_VALUE = {row.scalar_type: row for row in _ROWS}
_BY_DLPACK = {row.dlpack: row for row in _ROWS if row.dlpack is not None}
# DLPack also spells bool as a 1-bit unsigned integer.
_BY_DLPACK[(_UINT, 1)] = BY_NAME["bool"]
_BY_TENSORRT = {row.tensorrt: row for row in _ROWS if row.tensorrt is not None}
ALIASES = {"float": "float32", "half": "float16", "double": "float64", "long": "int64", "int": "int32"}


def names_accepted_by(place: str) -> tuple[str, ...]:
    """Names of the dtypes NUMPY, PACK or TEST_ENGINE accepts, in ScalarType order."""
    return tuple(row.name for row in _ROWS if place in row.accepted_by)


def canonical_name(dtype: object) -> str | None:
    """The table's name for a name, an alias or a torch dtype ("half", torch.half); None if unknown."""
    key = str(dtype).lower().removeprefix("torch.")
    key = ALIASES.get(key, key)
    return key if key in BY_NAME else None


def scalar_type_name(value: int) -> str:
    row = BY_VALUE.get(value)
    return row.name if row is not None else f"scalar_type({value})"


def scalar_type(dtype: str | int) -> int:
    """ScalarType value of a name ("float32", "half", ...) or a value."""
    if isinstance(dtype, int):
        if dtype not in BY_VALUE:
            raise ValueError(f"unknown ExecuTorch ScalarType {dtype}")
        return dtype
    name = canonical_name(dtype)
    if name is None:
        raise ValueError(f"unknown dtype '{dtype}'; expected one of {', '.join(BY_NAME)}")
    return BY_NAME[name].scalar_type


def from_dlpack_dtype(code: int, bits: int, lanes: int) -> int | None:
    """ScalarType of a DLPack dtype, or None when ExecuTorch has no equivalent."""
    if lanes != 1:
        return None
    row = _BY_DLPACK.get((code, bits))
    return row.scalar_type if row is not None else None


def describe_dlpack_dtype(code: int, bits: int, lanes: int) -> str:
    value = from_dlpack_dtype(code, bits, lanes)
    if value is not None:
        return scalar_type_name(value)
    return f"DLPack dtype (code {code}, {bits} bits, {lanes} lanes)"


def from_tensorrt(name: str) -> str | None:
    """The table's name of a TensorRT DataType name ("HALF" -> "float16"), or None."""
    row = _BY_TENSORRT.get(name)
    return row.name if row is not None else None


def tensorrt_names() -> tuple[str, ...]:
    return tuple(_BY_TENSORRT)


def torch_dtype(name: str):
    """The torch dtype of a table name (imports torch)."""
    import torch

    return getattr(torch, name)
