"""`_native/abi.py` mirrors the C headers' structs field by field (ctypes cannot read a header):
every mirrored struct has the C struct's size and each field its offset, checked against the
headers compiled by the C compiler. A field appended to a header but not to the mirror (or put
in another place) fails here instead of shifting every later field at run time."""

from __future__ import annotations

import ctypes
import shutil
import subprocess
from pathlib import Path

import pytest

from torch_tensorrt_executorch_runtime._native import abi

INCLUDE = Path(__file__).resolve().parents[2] / "cpp" / "include"
HEADERS = ("torch_tensorrt_executorch/dlpack.h", "torch_tensorrt_executorch/engine_provider.h",
           "torch_tensorrt_executorch/c_api.h")


def print_from_headers(tmp_path: Path, name: str, statements: list[str], includes: list[str]) -> str:
    """Compiles `statements` (printf calls) in a main() after the headers and runs it: its output.
    A name the headers do not define fails the compile (asserted, with the compiler's message)."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler to read the headers with")
    if not INCLUDE.is_dir():
        pytest.skip(f"{INCLUDE} is not here (an installed package without its source tree)")
    lines = [f"#include <{h}>" for h in (*HEADERS, *includes)] + ["int main(void) {", *statements,
                                                                  "  return 0;", "}"]
    source = tmp_path / f"{name}.c"
    source.write_text("\n".join(lines) + "\n")
    built = subprocess.run([compiler, "-std=c11", "-I", str(INCLUDE), "-o", str(tmp_path / name), str(source)],
                           capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    return subprocess.run([str(tmp_path / name)], capture_output=True, text=True, check=True).stdout


def mirrored_structs() -> dict[str, type[ctypes.Structure]]:
    return {name: value for name, value in vars(abi).items()
            if isinstance(value, type) and issubclass(value, ctypes.Structure) and value is not ctypes.Structure}


def test_every_mirrored_struct_matches_its_header(tmp_path):
    structs = mirrored_structs()
    assert {"TteEngineProvider", "TteEngineLoadOptions", "TteRuntimeStats", "DLTensor"} <= set(structs)
    statements = []
    for name, struct in sorted(structs.items()):
        statements.append(f'  printf("{name} sizeof() %zu\\n", sizeof({name}));')
        for field, *_ in struct._fields_:
            statements.append(f'  printf("{name} {field} %zu\\n", offsetof({name}, {field}));')
    # A mirrored field the header does not have fails the compile.
    printed = print_from_headers(tmp_path, "layout", statements, ["stddef.h", "stdio.h"])
    mismatches = []
    for line in printed.splitlines():
        name, field, value = line.split()
        struct = structs[name]
        mirrored = ctypes.sizeof(struct) if field == "sizeof()" else getattr(struct, field).offset
        if mirrored != int(value):
            mismatches.append(f"{name}.{field}: C {value}, abi.py {mirrored}")
    assert not mismatches, "\n".join(mismatches)


# Python names whose C name differs (DLPack's device types are kDL... enumerators).
C_NAMES = {"KDL_CPU": "kDLCPU", "KDL_CUDA": "kDLCUDA", "KDL_CUDA_HOST": "kDLCUDAHost",
           "KDL_CUDA_MANAGED": "kDLCUDAManaged"}


def mirrored_constants() -> dict[str, int]:
    """Every integer constant abi.py and errors.py copy from the headers (C's names)."""
    from torch_tensorrt_executorch_runtime import errors

    found = {}
    for module in (abi, errors):
        for name, value in vars(module).items():
            if name.startswith(("TTE_", "KDL_", "DLPACK_")) and isinstance(value, int) and not isinstance(value, bool):
                found[name] = value
    return found


def test_every_mirrored_constant_matches_its_header(tmp_path):
    """Enum values and macros: a constant hand-copied into Python that drifts from its header
    (the cause of an earlier wrong-error bug) fails here; one the headers lack fails to compile."""
    constants = mirrored_constants()
    assert {"TTE_OK", "TTE_ERROR_INVALID_PROGRAM", "TTE_C_API_VERSION", "KDL_CUDA"} <= set(constants)
    statements = [f'  printf("{name} %lld\\n", (long long)({C_NAMES.get(name, name)}));' for name in sorted(constants)]
    # A Python constant the headers do not define fails the compile.
    printed = print_from_headers(tmp_path, "constants", statements, ["stdio.h"])
    mismatches = [f"{name}: C {value}, Python {constants[name]}"
                  for name, value in (line.split() for line in printed.splitlines())
                  if constants[name] != int(value)]
    assert not mismatches, "\n".join(mismatches)
