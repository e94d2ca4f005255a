"""The torch-free .pte reader: what it reports, agreement with exir's own
deserializer, and refusal of truncated or corrupt files."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

from torch_tensorrt_executorch_runtime.errors import InvalidProgramError
from torch_tensorrt_executorch_runtime.pack import EngineSpec, TensorSpec, build_program
from torch_tensorrt_executorch_runtime.pte import (
    DEVICE_PLANNED,
    HOST,
    PteFormatError,
    read_program,
)

HERE = Path(__file__).resolve().parent


def _engines():
    first = EngineSpec(
        b"first-plan",
        [TensorSpec("x", "float32", [(1, 2, 8), 4])],
        [TensorSpec("h", "float16", ["x:0", 4]), TensorSpec("count", "int64", [1])],
        weight_streaming_budget=4096,
    )
    second = EngineSpec(b"second-plan" * 7, [TensorSpec("h", "float16", [(1, 2, 8), 4])],
                        [TensorSpec("y", "bfloat16", ["h:0", 4])])
    return first, second


@pytest.fixture(scope="module")
def program():
    first, second = _engines()
    return build_program({"forward": [first, second], "extra": [second]}, placement={"forward": "device_planned"})


def test_methods_io_and_delegates(program):
    info = read_program(program.program)
    assert info.method_names == ("extra", "forward")  # exir orders methods by name
    forward = info.method("forward")
    assert [(v.kind, v.tensor.dtype, v.tensor.sizes, v.tensor.dynamism) for v in forward.inputs] == [
        ("tensor", "float32", (8, 4), "dynamic_bound"),
    ]
    assert [(v.tensor.dtype, v.tensor.sizes, v.tensor.dynamism) for v in forward.outputs] == [
        ("int64", (1,), "static"),
        ("bfloat16", (8, 4), "dynamic_bound"),
    ]
    assert all(v.tensor.memory_planned and v.tensor.device == "cpu" for v in forward.inputs + forward.outputs)
    assert forward.placement == DEVICE_PLANNED
    assert [d.id for d in forward.delegates] == ["TensorRTBackend", "TensorRTBackend"]
    first = forward.delegates[0]
    assert first.compile_spec("weight_streaming_budget") == b"4096"
    assert first.target_device == "cuda:0"
    assert first.location == "SEGMENT"
    assert first.payload[:4] == b"TR01" and first.payload.endswith(b"first-plan")
    assert first.payload_size == len(first.payload)
    assert program.program[first.payload_offset:first.payload_offset + first.payload_size] == first.payload
    assert "et_copy::_h2d_copy.out" in forward.operators and "et_copy::_d2h_copy.out" in forward.operators
    assert set(forward.buffer_devices.values()) == {"cuda:0"}
    extra = info.method("extra")
    assert extra.placement == HOST and extra.buffer_devices == {} and extra.delegates[0].compile_specs == ()
    with pytest.raises(KeyError, match="no method 'missing'"):
        info.method("missing")


def test_extended_header_and_segments(program):
    info = read_program(program.program)
    header = info.extended_header
    assert header is not None
    assert header.program_size <= header.segment_base_offset <= info.file_size
    assert header.segment_base_offset % 128 == 0
    assert header.segment_base_offset + header.segment_data_size <= info.file_size
    for delegate in (d for m in info.methods for d in m.delegates):
        segment = info.segments[delegate.data_index]
        assert delegate.payload_offset == header.segment_base_offset + segment.offset
        assert delegate.payload_size == segment.size


def test_agrees_with_exir_deserializer(program):
    from executorch.exir._serialize._program import deserialize_pte_binary

    theirs = deserialize_pte_binary(program.program).program
    ours = read_program(program.program)
    assert [p.name for p in theirs.execution_plan] == list(ours.method_names)
    for plan, method in zip(theirs.execution_plan, ours.methods, strict=True):
        assert [d.id for d in plan.delegates] == [d.id for d in method.delegates]
        for delegate, info in zip(plan.delegates, method.delegates, strict=True):
            assert ([(s.key, bytes(s.value)) for s in delegate.compile_specs]
                    == [(s.key, s.value) for s in info.compile_specs])
            # exir restores segments inline, so compare the bytes, not the location.
            assert bytes(theirs.backend_delegate_data[delegate.processed.index].data) == info.payload
        for index, value in zip(plan.inputs + plan.outputs, method.inputs + method.outputs, strict=False):
            tensor = plan.values[index].val
            assert value.index == index
            assert list(tensor.sizes) == list(value.tensor.sizes)
            assert (tensor.allocation_info is not None) == value.tensor.memory_planned
        assert list(plan.non_const_buffer_sizes) == list(method.non_const_buffer_sizes)


def test_inline_delegate_data(program):
    from executorch.exir._serialize._program import deserialize_pte_binary, serialize_pte_binary

    inline = bytes(serialize_pte_binary(deserialize_pte_binary(program.program), extract_delegate_segments=False))
    info = read_program(inline)
    segmented = read_program(program.program)
    for method, reference in zip(info.methods, segmented.methods, strict=False):
        for delegate, expected in zip(method.delegates, reference.delegates, strict=False):
            assert delegate.location == "INLINE"
            assert delegate.payload == expected.payload
            assert delegate.compile_specs == expected.compile_specs


def test_reads_a_path_and_skips_payloads(program, tmp_path):
    path = tmp_path / "model.pte"
    path.write_bytes(program.program)
    from_path = read_program(path)
    assert from_path == read_program(program.program)
    assert read_program(bytearray(program.program)) == from_path
    assert read_program(memoryview(program.program)) == from_path
    light = read_program(str(path), payloads=False)
    delegate = light.methods[0].delegates[0]
    assert delegate.payload is None and delegate.payload_size == from_path.methods[0].delegates[0].payload_size


def test_rejects_files_that_are_not_programs(tmp_path):
    for data, message in (
        (b"", "shorter than"),
        (b"\x00" * 7, "shorter than"),
        (b"\x10\x00\x00\x00FT01" + b"\x00" * 64, "expected file identifier ET12"),
        (os.urandom(4096), "expected file identifier ET12"),
    ):
        with pytest.raises(PteFormatError, match=message):
            read_program(data)
    empty = tmp_path / "empty.pte"
    empty.write_bytes(b"")
    with pytest.raises(PteFormatError, match="empty"):
        read_program(empty)
    assert issubclass(PteFormatError, InvalidProgramError)


def _read_or_format_error(data: bytes):
    started = time.monotonic()
    try:
        result = read_program(data)
    except PteFormatError:
        result = None
    assert time.monotonic() - started < 5, "reading a corrupt file must not spin"
    return result


def test_truncation_at_every_byte(program):
    data = program.program
    header = read_program(data).extended_header
    end_of_data = header.segment_base_offset + header.segment_data_size
    for length in range(len(data)):
        result = _read_or_format_error(data[:length])
        if length < end_of_data:
            assert result is None, f"a file cut at byte {length} of {len(data)} was accepted"


def test_random_corruption_never_crashes(program):
    rng = random.Random(1234)
    data = program.program
    flatbuffer_size = read_program(data).extended_header.program_size
    for _ in range(1500):
        corrupt = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            position = rng.randrange(flatbuffer_size)
            corrupt[position] = rng.randrange(256)
        _read_or_format_error(bytes(corrupt))


def test_huge_vector_lengths_are_refused(program):
    data = bytearray(program.program)
    info = read_program(bytes(data))
    # Overwrite every u32 in the flatbuffer with a huge count, one at a time:
    # wherever that lands on a vector length, the reader must refuse it.
    size = info.extended_header.program_size
    rng = random.Random(99)
    for position in rng.sample(range(8, size - 4, 4), min(300, (size - 12) // 4)):
        corrupt = bytearray(data)
        corrupt[position:position + 4] = (0x7FFFFFF0).to_bytes(4, "little")
        _read_or_format_error(bytes(corrupt))


def test_reader_needs_neither_torch_nor_executorch(program, tmp_path):
    path = tmp_path / "model.pte"
    path.write_bytes(program.program)
    script = f"""
import sys
sys.modules["torch"] = None  # any import of torch now fails
sys.path.insert(0, {str(HERE)!r})
import conftest  # the package without plugin activation, when there is no plugin
before = set(sys.modules)
from torch_tensorrt_executorch_runtime.pte import read_program
info = read_program({str(path)!r})
assert info.method_names == ("extra", "forward"), info.method_names
loaded = set(sys.modules) - before
assert not any(m == "torch" or m.startswith(("torch.", "executorch")) for m in loaded), sorted(loaded)
print("ok")
"""
    env = dict(os.environ)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0 and result.stdout.strip().endswith("ok"), result.stdout + result.stderr
