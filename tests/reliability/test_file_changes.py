"""A .pte (or .ptd) changed on disk while a program is open: cut short,
rewritten in place (`cp`, pack_program to the same path), replaced by a
rename. Files used to be memory-mapped, and each of these died of SIGBUS at
the next run or describe(); now what a program keeps is a private copy, a
method loaded before the change runs on, and one loaded after it is refused.
Each case runs in a fresh interpreter, so a crash fails only its test.
"""

from __future__ import annotations

import shutil

import pytest

CHANGES = {
    # os.truncate: the file is cut short under the program.
    "truncate": "os.truncate(path, 100)",
    # cp other path: the same inode, rewritten with other bytes.
    "copy-over": "shutil.copyfile(other, path)",
    # the same bytes written again: same size, a new modification time.
    "rewrite-same-bytes": "path.write_bytes(path.read_bytes())",
}

PROGRAM = """
import os, pathlib, shutil, time
import numpy as np
import torch_tensorrt_executorch_runtime as tte
tte.register_provider_library({provider!r})
path, other = pathlib.Path({path!r}), pathlib.Path({other!r})
x = np.arange(8, dtype=np.float32).reshape(2, 4)
loaded = tte.load(path)
loaded.load_method("forward")
lazy = tte.load(path)
time.sleep(0.01)  # a new modification time, on file systems that keep only milliseconds
{change}
(y,) = loaded.forward(x)
assert (y == x + 1).all(), y
print("loaded ran; describe:", len(loaded.describe()["methods"]), len(lazy.describe()["methods"]))
try:
    lazy.forward(x)
    print("lazy ran")
except tte.errors.Error as exc:
    print(f"lazy refused: {{type(exc).__name__}}: {{exc}}")
"""


@pytest.fixture
def program_copy(tmp_path, packed):
    path = tmp_path / "model.pte"
    shutil.copyfile(packed["add_one"], path)
    return path


@pytest.mark.parametrize("change", CHANGES.values(), ids=CHANGES.keys())
def test_changed_file_is_refused_not_a_crash(run_python, host_provider_file, packed, program_copy, change):
    result = run_python(
        PROGRAM.format(provider=str(host_provider_file), path=str(program_copy), other=str(packed["dynamic"]),
                       change=change)
    )
    assert result.returncode == 0, f"exit {result.returncode}\n{result.stderr}"
    assert "loaded ran; describe: 1 1" in result.stdout
    assert "lazy refused: InvalidStateError" in result.stdout, result.stdout
    assert "since the program was opened: open the program again" in result.stdout


def test_pack_program_to_the_same_path(run_python, host_provider_file, packed, program_copy):
    """The issue's case: repacking over the file a program was loaded from."""
    repack = (
        "from torch_tensorrt_executorch_runtime.pack import TensorSpec, pack_program\n"
        "from torch_tensorrt_executorch_runtime.testing import test_engine_spec\n"
        "pack_program(path, [test_engine_spec('add_one', [TensorSpec('x', 'float32', [4])], "
        "[TensorSpec('y', 'float32', ['x:0'])])])"
    )
    result = run_python(
        PROGRAM.format(provider=str(host_provider_file), path=str(program_copy), other=str(packed["dynamic"]),
                       change=repack),
        timeout=300,
    )
    assert result.returncode == 0, f"exit {result.returncode}\n{result.stderr}"
    assert "lazy refused: InvalidStateError" in result.stdout, result.stdout


def test_replacing_by_rename_keeps_the_opened_file(run_python, host_provider_file, packed, program_copy):
    """A new file renamed over the path leaves the opened one intact: nothing to refuse."""
    rename = "staged = path.with_suffix('.new'); shutil.copyfile(other, staged); os.replace(staged, path)"
    result = run_python(
        PROGRAM.format(provider=str(host_provider_file), path=str(program_copy), other=str(packed["dynamic"]),
                       change=rename)
    )
    assert result.returncode == 0, f"exit {result.returncode}\n{result.stderr}"
    assert "lazy ran" in result.stdout, result.stdout


def test_changed_data_file_is_refused(run_python, host_provider_file, packed, tmp_path):
    for name in ("external_a.pte", "external_a.ptd"):
        shutil.copyfile(packed["external_a"].parent / name, tmp_path / name)
    code = f"""
        import os, pathlib
        import numpy as np
        import torch_tensorrt_executorch_runtime as tte
        tte.register_provider_library({str(host_provider_file)!r})
        program = tte.load({str(tmp_path / "external_a.pte")!r})
        os.truncate({str(tmp_path / "external_a.ptd")!r}, 10)
        print(len(program.describe()["methods"]))
        try:
            program.forward(np.ones((2, 4), np.float32))
        except tte.errors.InvalidStateError as exc:
            print("refused:", exc)
        """
    result = run_python(code)
    assert result.returncode == 0, f"exit {result.returncode}\n{result.stderr}"
    assert "refused: cannot load method 'forward': data file" in result.stdout, result.stdout
