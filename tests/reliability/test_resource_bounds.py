"""Bounded resources: planned memory, failed loads, files that are not programs.

- A method planning more host memory than is available (or than
  load(..., max_planned_memory=N) allows) is refused before anything is
  allocated; the planned arenas used to be allocated and zero-filled first
  (4 GiB for a 2 KB file, 16 s, on every failing forward).
- A method that failed to load fails again at once, with the same message:
  no second allocation or delegate init.
- A file that is not a program (a 2 GB sparse file of zeros) is refused after
  reading its first bytes, not after reading (or locking) all of it.
Memory is measured in fresh interpreters from /proc/self/status (VmHWM, the
peak resident set, reset through /proc/self/clear_refs).
"""

from __future__ import annotations

import struct

import pytest

GIB = 1 << 30


def _plans_more(program: bytes, total: int) -> bytes:
    """`program` with its forward's last planned buffer set to `total` bytes (more, or fewer)."""
    from torch_tensorrt_executorch_runtime import pte

    sizes = pte.read_program(program).method("forward").non_const_buffer_sizes
    table = struct.pack("<I", len(sizes)) + struct.pack(f"<{len(sizes)}q", *sizes)
    assert program.count(table) == 1, "the sizes vector is not unique in the file"
    grown = struct.pack("<I", len(sizes)) + struct.pack(f"<{len(sizes)}q", *sizes[:-1], total)
    return program.replace(table, grown)


# Prints the peak resident set growth (bytes) of running `body`, and what
# each of its `attempt` calls raised.
MEASURE = """
import re
import numpy as np
import torch_tensorrt_executorch_runtime as tte
tte.register_provider_library({provider!r})

def peak():
    return int(re.search(r"VmHWM:\\s+(\\d+) kB", open("/proc/self/status").read()).group(1)) * 1024

def rss():
    return int(re.search(r"VmRSS:\\s+(\\d+) kB", open("/proc/self/status").read()).group(1)) * 1024

def attempt(call):
    try:
        call()
        print("ok")
    except tte.errors.Error as exc:
        print(f"{{type(exc).__name__}}: {{exc}}")

x = np.ones((2, 4), np.float32)
open("/proc/self/clear_refs", "w").write("5")
before = rss()
{body}
print("growth", peak() - before)
"""


def _measure(run_python, provider, body: str, **kwargs):
    result = run_python(MEASURE.format(provider=str(provider), body=body), **kwargs)
    assert result.returncode == 0, f"exit {result.returncode}\n{result.stderr}"
    lines = result.stdout.strip().splitlines()
    return lines[:-1], int(lines[-1].split()[1])


def test_planned_memory_past_what_is_available_is_refused_unallocated(
    run_python, host_provider_file, packed, tmp_path
):
    path = tmp_path / "plans-a-pebibyte.pte"
    path.write_bytes(_plans_more(packed["add_one"].read_bytes(), 1 << 50))
    outcomes, growth = _measure(
        run_python, host_provider_file,
        f"program = tte.load({str(path)!r})\nattempt(lambda: program.forward(x))\n"
        "attempt(lambda: program.forward(x))",
    )
    assert outcomes[0].startswith("HostOutOfMemoryError: method 'forward' plans 1125899906842624 bytes")
    assert "more than is available to this process now" in outcomes[0]
    assert "max_planned_memory" in outcomes[0]
    assert outcomes[1] == outcomes[0]
    assert growth < 64 << 20, f"peak resident set grew by {growth} bytes"


def test_a_planned_tensor_outside_its_arena_is_an_invalid_program(tte, host_provider, packed):
    """A damaged plan, not a shortage: ExecuTorch reports a planned tensor past the end of its
    arena as MemoryAllocationFailed, which used to reach the user as "not enough memory ... free
    memory"."""
    from torch_tensorrt_executorch_runtime import pte

    data = packed["add_one"].read_bytes()
    sizes = pte.read_program(data).method("forward").non_const_buffer_sizes
    assert len(sizes) >= 2 and sizes[-1] > 8
    damaged = _plans_more(data, 8)
    with pytest.raises(tte.errors.InvalidProgramError) as info:
        with tte.load(damaged) as program:
            program.forward(__import__("numpy").ones((2, 4), "float32"))
    message = str(info.value)
    assert not isinstance(info.value, MemoryError)
    assert "free memory" not in message
    assert f"memory id {len(sizes) - 1}" in message and "8 bytes" in message, message
    assert "outside" in message, message


def test_max_planned_memory_bounds_and_raises_the_limit(tte, host_provider, packed):
    import numpy as np

    x = np.ones((2, 4), np.float32)
    data = packed["add_one"].read_bytes()
    with tte.load(data, max_planned_memory=32) as program:
        for _ in range(2):
            with pytest.raises(tte.errors.HostOutOfMemoryError,
                               match=r"more than max_planned_memory allows \(32 bytes\)") as info:
                program.forward(x)
            # Host memory: nothing that frees device memory would help.
            assert not isinstance(info.value, tte.errors.DeviceOutOfMemoryError)
            assert isinstance(info.value, MemoryError)
    with tte.load(data, max_planned_memory=1 << 20) as program:
        (y,) = program.forward(x)
        np.testing.assert_array_equal(y, x + 1)
    with pytest.raises(TypeError, match="max_planned_memory"):
        tte.load(data, max_planned_memory=-1)


def test_failed_load_is_not_repeated(run_python, host_provider_file, tmp_path):
    code = f"""
        import numpy as np
        import torch_tensorrt_executorch_runtime as tte
        from torch_tensorrt_executorch_runtime.pack import TensorSpec, pack_program
        from torch_tensorrt_executorch_runtime.testing import test_engine_spec
        tte.register_provider_library({str(host_provider_file)!r})
        spec = test_engine_spec("add_one", [TensorSpec("x", "float32", [2])], [TensorSpec("y", "float32", ["x:0"])],
                                fail={{"deserialize": "refused to load today"}})
        program = tte.load(pack_program(None, [spec]))
        messages = set()
        for _ in range(3):
            try:
                program.forward(np.ones(2, np.float32))
            except tte.errors.Error as exc:
                messages.add(str(exc))
        program.method("forward")
        print(len(messages), messages.pop())
        """
    result = run_python(code, env={"TORCH_TENSORRT_EXECUTORCH_LOG_LEVEL": "info"}, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("1 cannot load method 'forward': TensorRTBackend delegate: ")
    assert "refused to load today" in result.stdout
    # ExecuTorch logs each delegate init that fails: one init, however many calls.
    assert result.stderr.count("Init failed for backend TensorRTBackend") == 1, result.stderr


@pytest.mark.parametrize("role", ["program", "data file"])
def test_large_file_that_is_no_program_is_not_read_whole(run_python, host_provider_file, packed, tmp_path, role):
    sparse = tmp_path / "zeros.bin"
    with open(sparse, "wb") as file:
        file.truncate(2 * GIB)
    load = (f"tte.load({str(sparse)!r}, data_path=[])" if role == "program"
            else f"tte.load({str(packed['external_a'])!r}, data_path=[{str(sparse)!r}])")
    outcomes, growth = _measure(run_python, host_provider_file, f"attempt(lambda: {load})")
    assert outcomes[0].startswith("InvalidProgramError: cannot load ")
    assert ("'ET12'" if role == "program" else "'FH01'") in outcomes[0]
    assert growth < 64 << 20, f"peak resident set grew by {growth} bytes for a {2 * GIB}-byte file"


def _unplanned_output_spec(elements: int):
    """One float32 input, and an output of `elements` float32 the program does not plan
    (alloc_graph_output=False): the Program API reserves its buffer at run."""
    from torch_tensorrt_executorch_runtime.pack import TensorSpec
    from torch_tensorrt_executorch_runtime.testing import test_engine_spec

    return test_engine_spec("null", [TensorSpec("x", "float32", [1])], [TensorSpec("y", "float32", [elements])])


def test_unplanned_output_past_the_bound_is_refused_on_every_run(tte, host_provider, pack_unplanned_outputs):
    import numpy as np

    data = pack_unplanned_outputs([_unplanned_output_spec(64)])  # 256 bytes of output, 16 planned for the input
    x = np.ones(1, np.float32)
    with tte.load(data, max_planned_memory=64) as program:
        messages = []
        for _ in range(3):
            with pytest.raises(tte.errors.HostOutOfMemoryError) as info:
                program.forward(x)
            messages.append(str(info.value))
        assert messages[0] == (
            "output 0 of 'forward' needs a buffer of 256 bytes of host memory, more than max_planned_memory "
            "allows (64 bytes): if that size is right, open the program with max_planned_memory set to at "
            "least 256 (bytes)"
        )
        # The refusal is kept: the same error, not a new attempt.
        assert messages[1] == messages[0] and messages[2] == messages[0]
    with tte.load(data, max_planned_memory=256) as program:
        (y,) = program.forward(x)
        assert y.shape == (64,)
