"""ExecuTorch ScalarType values, their names, and their DLPack dtypes."""

from __future__ import annotations

# executorch/runtime/core/portable_type/scalar_type.h, ET_FORALL_SCALAR_TYPES.
SCALAR_TYPE_NAMES = {
    0: "uint8",
    1: "int8",
    2: "int16",
    3: "int32",
    4: "int64",
    5: "float16",
    6: "float32",
    7: "float64",
    8: "complex32",
    9: "complex64",
    10: "complex128",
    11: "bool",
    12: "qint8",
    13: "quint8",
    14: "qint32",
    15: "bfloat16",
    16: "quint4x2",
    17: "quint2x4",
    18: "bits1x8",
    19: "bits2x4",
    20: "bits4x2",
    21: "bits8",
    22: "bits16",
    23: "float8_e5m2",
    24: "float8_e4m3fn",
    25: "float8_e5m2fnuz",
    26: "float8_e4m3fnuz",
    27: "uint16",
    28: "uint32",
    29: "uint64",
}
SCALAR_TYPES = {name: value for value, name in SCALAR_TYPE_NAMES.items()}
ALIASES = {"float": "float32", "half": "float16", "double": "float64", "long": "int64", "int": "int32"}

# DLDataTypeCode
_DL_INT, _DL_UINT, _DL_FLOAT, _DL_BFLOAT, _DL_COMPLEX, _DL_BOOL = 0, 1, 2, 4, 5, 6
_DL_F8_E4M3FN, _DL_F8_E4M3FNUZ, _DL_F8_E5M2, _DL_F8_E5M2FNUZ = 10, 11, 12, 13

# (code, bits) -> ScalarType
_FROM_DLPACK = {
    (_DL_UINT, 8): 0,
    (_DL_INT, 8): 1,
    (_DL_INT, 16): 2,
    (_DL_INT, 32): 3,
    (_DL_INT, 64): 4,
    (_DL_FLOAT, 16): 5,
    (_DL_FLOAT, 32): 6,
    (_DL_FLOAT, 64): 7,
    (_DL_COMPLEX, 32): 8,
    (_DL_COMPLEX, 64): 9,
    (_DL_COMPLEX, 128): 10,
    (_DL_BOOL, 8): 11,
    (_DL_BFLOAT, 16): 15,
    (_DL_F8_E5M2, 8): 23,
    (_DL_F8_E4M3FN, 8): 24,
    (_DL_F8_E5M2FNUZ, 8): 25,
    (_DL_F8_E4M3FNUZ, 8): 26,
    (_DL_UINT, 16): 27,
    (_DL_UINT, 32): 28,
    (_DL_UINT, 64): 29,
}


def scalar_type_name(value: int) -> str:
    return SCALAR_TYPE_NAMES.get(value, f"scalar_type({value})")


def scalar_type(name: str | int) -> int:
    """ScalarType value of a name ("float32", "half", ...) or a value."""
    if isinstance(name, int):
        if name not in SCALAR_TYPE_NAMES:
            raise ValueError(f"unknown ExecuTorch ScalarType {name}")
        return name
    key = str(name).lower().removeprefix("torch.")
    key = ALIASES.get(key, key)
    if key not in SCALAR_TYPES:
        raise ValueError(f"unknown dtype '{name}'; expected one of {', '.join(sorted(SCALAR_TYPES))}")
    return SCALAR_TYPES[key]


def from_dlpack_dtype(code: int, bits: int, lanes: int) -> int | None:
    """ScalarType of a DLPack dtype, or None when ExecuTorch has no equivalent."""
    if lanes != 1:
        return None
    if code == _DL_UINT and bits == 1:
        return 11
    return _FROM_DLPACK.get((code, bits))


def describe_dlpack_dtype(code: int, bits: int, lanes: int) -> str:
    value = from_dlpack_dtype(code, bits, lanes)
    if value is not None:
        return scalar_type_name(value)
    return f"DLPack dtype (code {code}, {bits} bits, {lanes} lanes)"
