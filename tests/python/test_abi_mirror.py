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


def mirrored_structs() -> dict[str, type[ctypes.Structure]]:
    return {name: value for name, value in vars(abi).items()
            if isinstance(value, type) and issubclass(value, ctypes.Structure) and value is not ctypes.Structure}


def test_every_mirrored_struct_matches_its_header(tmp_path):
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler to read the headers with")
    if not INCLUDE.is_dir():
        pytest.skip(f"{INCLUDE} is not here (an installed package without its source tree)")
    structs = mirrored_structs()
    assert {"TteEngineProvider", "TteEngineLoadOptions", "TteRuntimeStats", "DLTensor"} <= set(structs)
    lines = [f"#include <{h}>" for h in HEADERS] + ["#include <stddef.h>", "#include <stdio.h>", "int main(void) {"]
    for name, struct in sorted(structs.items()):
        lines.append(f'  printf("{name} sizeof() %zu\\n", sizeof({name}));')
        for field, *_ in struct._fields_:
            lines.append(f'  printf("{name} {field} %zu\\n", offsetof({name}, {field}));')
    lines += ["  return 0;", "}"]
    source = tmp_path / "layout.c"
    source.write_text("\n".join(lines) + "\n")
    built = subprocess.run([compiler, "-std=c11", "-I", str(INCLUDE), "-o", str(tmp_path / "layout"), str(source)],
                           capture_output=True, text=True)
    assert built.returncode == 0, built.stderr  # a mirrored field the header does not have
    printed = subprocess.run([str(tmp_path / "layout")], capture_output=True, text=True, check=True).stdout
    mismatches = []
    for line in printed.splitlines():
        name, field, value = line.split()
        struct = structs[name]
        mirrored = ctypes.sizeof(struct) if field == "sizeof()" else getattr(struct, field).offset
        if mirrored != int(value):
            mismatches.append(f"{name}.{field}: C {value}, abi.py {mirrored}")
    assert not mismatches, "\n".join(mismatches)
