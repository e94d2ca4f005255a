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


# What Python reads of the file after load (Program.delegates, Program.methods)
# goes through the file held open since load, compared with what it was then.
READS_AFTER_CHANGE = """
import os, pathlib, shutil, time
import torch_tensorrt_executorch_runtime as tte
tte.register_provider_library({provider!r})
path, other = pathlib.Path({path!r}), pathlib.Path({other!r})
program = tte.load(path)
print("before:", [d.method for d in program.delegates])
time.sleep(0.01)  # a new modification time, on file systems that keep only milliseconds
{change}
for name in ("delegates", "methods"):
    try:
        value = getattr(program, name)
        print(f"{{name}} read: {{value!r}}")
    except tte.errors.InvalidStateError as exc:
        print(f"{{name}} refused: {{exc}}")
"""

REPACK = (
    "from torch_tensorrt_executorch_runtime.pack import TensorSpec, pack_program\n"
    "from torch_tensorrt_executorch_runtime.testing import test_engine_spec\n"
    "pack_program(path, [test_engine_spec('add_one', [TensorSpec('x', 'float32', [4])], "
    "[TensorSpec('y', 'float32', ['x:0'])])])"
)


def _read_after_change(run_python, provider, packed, program, change):
    """READS_AFTER_CHANGE in a fresh interpreter, which must exit cleanly."""
    result = run_python(
        READS_AFTER_CHANGE.format(provider=str(provider), path=str(program),
                                  other=str(packed["dynamic"]), change=change),
        timeout=300,
    )
    assert result.returncode == 0, f"exit {result.returncode}\n{result.stderr}"
    return result


@pytest.mark.parametrize(
    "change", [*CHANGES.values(), REPACK], ids=[*CHANGES.keys(), "pack_program"]
)
def test_delegates_and_methods_of_a_changed_file_are_refused(
    run_python, host_provider_file, packed, program_copy, change
):
    """Not a description of another program, nor "truncated": the file changed since it was opened."""
    result = _read_after_change(run_python, host_provider_file, packed, program_copy, change)
    assert "before: ['forward']" in result.stdout, result.stdout
    for name in ("delegates", "methods"):
        assert f"{name} refused: program '{program_copy}' " in result.stdout, result.stdout
    assert result.stdout.count("since the program was opened: open the program again") == 2, result.stdout


def test_delegates_of_a_file_renamed_over_describe_the_opened_one(run_python, host_provider_file, packed, program_copy):
    """A new file renamed over the path leaves the opened one: delegates still describe it."""
    rename = (
        "from torch_tensorrt_executorch_runtime.pack import TensorSpec, pack_program\n"
        "from torch_tensorrt_executorch_runtime.testing import test_engine_spec\n"
        "staged = path.with_suffix('.new')\n"
        "pack_program(staged, {'renamed': test_engine_spec('add_one', [TensorSpec('x', 'float32', [4])], "
        "[TensorSpec('y', 'float32', ['x:0'])])})\n"
        "os.replace(staged, path)"
    )
    result = _read_after_change(run_python, host_provider_file, packed, program_copy, rename)
    assert "delegates read: [DelegateInfo(method='forward'" in result.stdout, result.stdout
    assert "methods read: {'forward':" in result.stdout, result.stdout


def test_delegates_while_the_file_is_cut_and_rewritten_do_not_crash(run_python, host_provider_file, tmp_path):
    """A thread truncates and rewrites a large program while the main thread reads its delegates.
    With the file memory-mapped this died of SIGBUS; now each read succeeds or is refused."""
    code = f"""
        import dataclasses, os, pathlib, threading, time
        import torch_tensorrt_executorch_runtime as tte
        from torch_tensorrt_executorch_runtime.pack import TensorSpec, pack_program
        from torch_tensorrt_executorch_runtime.testing import test_engine_spec
        tte.register_provider_library({str(host_provider_file)!r})
        path = pathlib.Path({str(tmp_path / "big.pte")!r})
        spec = test_engine_spec('add_one', [TensorSpec('x', 'float32', [4])], [TensorSpec('y', 'float32', ['x:0'])])
        # A large engine (padded with spaces its JSON parser skips): reads that span many pages.
        pack_program(path, [dataclasses.replace(spec, engine=spec.engine + b" " * (32 << 20))])
        whole = path.read_bytes()
        program = tte.load(path)
        stop = time.monotonic() + 4
        def churn():
            while time.monotonic() < stop:
                os.truncate(path, 100)
                path.write_bytes(whole)
        thread = threading.Thread(target=churn)
        thread.start()
        outcomes = {{}}
        while time.monotonic() < stop:
            try:
                program.delegates
                outcomes["read"] = outcomes.get("read", 0) + 1
            except tte.errors.InvalidStateError:
                outcomes["refused"] = outcomes.get("refused", 0) + 1
        thread.join()
        print("outcomes:", sorted(outcomes.items()))
        """
    result = run_python(code, timeout=120)
    assert result.returncode == 0, f"exit {result.returncode}\n{result.stderr}"
    assert "refused" in result.stdout, result.stdout
