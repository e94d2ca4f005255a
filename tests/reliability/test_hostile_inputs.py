"""Hostile and broken inputs through the Python API and the C API: each is
refused with a named error, and the process still runs a good program."""

from __future__ import annotations

import ctypes
import dataclasses
import json
import struct

import numpy as np
import pytest


def add_one_spec():
    from torch_tensorrt_executorch_runtime.pack import TensorSpec
    from torch_tensorrt_executorch_runtime.testing import test_engine_spec

    return test_engine_spec("add_one", [TensorSpec("x", "float32", [2, 4])],
                            [TensorSpec("y", "float32", ["x:0", "x:1"])])

HEADER = struct.Struct("<4sIIIQ8s")
RESERVED = b"\x01" + b"\x00" * 7


def blob(metadata: bytes, engine: bytes = b"E" * 16, **fields) -> bytes:
    """A TR01 blob laid out as the exporter writes it; `fields` override header values."""
    offset = (HEADER.size + len(metadata) + 15) // 16 * 16
    values = dict(magic=b"TR01", metadata_offset=HEADER.size, metadata_size=len(metadata),
                  engine_offset=offset, engine_size=len(engine))
    values.update(fields)
    header = HEADER.pack(values["magic"], values["metadata_offset"], values["metadata_size"],
                         values["engine_offset"], values["engine_size"], RESERVED)
    return header + metadata + b"\x00" * (offset - HEADER.size - len(metadata)) + engine


def bindings(names_in=("x",), names_out=("y",)) -> list[dict]:
    return [{"name": n, "dtype": "", "shape": [], "is_input": True} for n in names_in] + [
        {"name": n, "dtype": "", "shape": [], "is_input": False} for n in names_out
    ]


def metadata(io_bindings) -> bytes:
    return json.dumps({"io_bindings": io_bindings, "aliased_io": [], "hardware_compatible": False,
                       "device_id": 0, "serialized_metadata": "", "target_platform": ""},
                      separators=(",", ":")).encode()


def program_with_blob(raw: bytes) -> bytes:
    """A real add_one program whose delegate carries `raw` as its blob."""
    from torch_tensorrt_executorch_runtime.pack import EngineSpec, pack_program

    @dataclasses.dataclass(frozen=True)
    class RawBlobSpec(EngineSpec):
        def blob(self, input_order=None, output_order=None) -> bytes:
            return raw

    spec = add_one_spec()
    return pack_program(None, [RawBlobSpec(**{f.name: getattr(spec, f.name) for f in dataclasses.fields(spec)})])


def good_engine() -> bytes:
    return add_one_spec().engine


HOSTILE_BLOBS = {
    # Sizes near 2^32 and 2^64; offsets whose sums would wrap in 32 or 64 bits.
    "engine-size-near-2-64": (blob(metadata(bindings()), good_engine(), engine_size=2**64 - 16), "engine"),
    "engine-size-near-2-32": (blob(metadata(bindings()), good_engine(), engine_size=2**32 - 16), "engine"),
    "metadata-size-near-2-32": (blob(metadata(bindings()), good_engine(), metadata_size=2**32 - 1), "metadata"),
    "engine-offset-overflow": (blob(metadata(bindings()), good_engine(), engine_offset=2**32 - 16), "engine"),
    "metadata-offset-past-end": (blob(metadata(bindings()), good_engine(), metadata_offset=2**32 - 32), "metadata"),
    # Absurd binding counts: past the reader's limit, and not what the program passes.
    "binding-count-past-limit": (blob(metadata(bindings([f"i{k}" for k in range(70_000)], ["y"])), good_engine()),
                                 "io_bindings"),
    "binding-count-not-the-arguments": (blob(metadata(bindings(["x", "x2", "x3"], ["y"])), good_engine()), ""),
    # Deeply nested and huge JSON.
    "deeply-nested-json": (blob(b'{"io_bindings":' + b"[" * 100_000 + b"]" * 100_000 + b"}", good_engine()),
                           "nest"),
    "huge-json-value-count": (blob(b'{"io_bindings":[],"x":[' + b"0," * 2_200_000 + b"0]}", good_engine()), "values"),
    # Names the engine does not have.
    "binding-names-not-in-engine": (blob(metadata(bindings(["not_x"], ["not_y"])), good_engine()), "not_x"),
    "unknown-magic": (b"TR99" + bytes(60), "TR99"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE_BLOBS), ids=sorted(HOSTILE_BLOBS))
def test_hostile_blob_in_a_real_program(tte, host_provider, assert_usable, case):
    raw, needle = HOSTILE_BLOBS[case]
    data = program_with_blob(raw)
    x = np.zeros((2, 4), dtype=np.float32)
    with tte.load(data) as program:
        with pytest.raises(tte.errors.Error) as raised:
            program.load_method("forward")
        message = str(raised.value)
        assert "TensorRTBackend" in message or "delegate" in message, message
        assert needle in message, message
        with pytest.raises(tte.errors.Error):
            program.forward(x)
    assert_usable()


def test_blob_describe_refuses_hostile_sizes_through_the_c_api(tte):
    from torch_tensorrt_executorch_runtime._native import abi, library

    lib = library.load_plugin()
    for name in ("engine-size-near-2-64", "engine-offset-overflow", "metadata-size-near-2-32"):
        raw = HOSTILE_BLOBS[name][0]
        out = ctypes.c_void_p()
        error = abi.TteError()
        status = lib.tte_blob_describe_json(raw, len(raw), ctypes.byref(out), ctypes.byref(error))
        assert status != 0, name
        assert error.text(), name


def test_truncated_programs(tte, host_provider, packed, assert_usable):
    data = packed["add_one"].read_bytes()
    x = np.zeros((2, 4), dtype=np.float32)
    ran = 0
    for size in range(0, len(data), 7):
        try:
            with tte.load(data[:size]) as program:
                program.forward(x)
                ran += 1
        except tte.errors.Error as error:
            assert str(error)
    assert ran == 0
    assert_usable()


def test_bit_flipped_programs(tte, host_provider, packed, assert_usable):
    data = packed["add_one"].read_bytes()
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    refused = 0
    for index in range(0, len(data), 3):
        damaged = bytearray(data)
        damaged[index] ^= 1 << (index % 8)
        try:
            with tte.load(bytes(damaged)) as program:
                program.forward(x)
        except tte.errors.Error as error:
            assert str(error)
            refused += 1
    assert refused > 0
    assert_usable()


def test_ptd_for_another_program(tte, host_provider, packed, assert_usable):
    other_ptd = sorted(packed["external_b"].parent.glob("*.ptd"))
    assert other_ptd, "the packer wrote no .ptd"
    with pytest.raises(tte.errors.Error) as raised:
        with tte.load(packed["external_a"], data_path=other_ptd) as program:
            program.forward(np.zeros((2, 4), dtype=np.float32))
    assert str(raised.value)
    own = sorted(packed["external_a"].parent.glob("*.ptd"))
    with tte.load(packed["external_a"], data_path=own) as program:
        (y,) = program.forward(np.ones((2, 4), dtype=np.float32))
        np.testing.assert_array_equal(y, np.full((2, 4), 4.0, dtype=np.float32))
    assert_usable()


@pytest.mark.parametrize(
    "value, needle",
    [
        (np.zeros((2, 4), dtype=np.int64), "float32"),
        (np.zeros((2, 4, 1), dtype=np.float32), "rank"),
        (np.zeros((8,), dtype=np.float32), "rank"),
        (np.zeros((2, 5), dtype=np.float32), "2, 5"),
        (np.zeros((4, 4), dtype=np.float32)[:, ::2], ""),
        (np.zeros((4, 2), dtype=np.float32).T, ""),
    ],
    ids=["wrong-dtype", "rank-too-high", "rank-too-low", "wrong-static-shape", "strided", "transposed"],
)
def test_wrong_inputs(tte, host_provider, packed, assert_usable, value, needle):
    with tte.load(packed["add_one"]) as program:
        with pytest.raises(tte.errors.InvalidArgumentError) as raised:
            program.forward(value)
        assert needle in str(raised.value)
        x = np.arange(8, dtype=np.float32).reshape(2, 4)
        np.testing.assert_array_equal(program.forward(x)[0], x + 1)
    assert_usable()


def test_zero_size_tensors(tte, host_provider, packed, assert_usable):
    with tte.load(packed["dynamic"]) as program:
        (y,) = program.forward(np.zeros((0, 4), dtype=np.float32))
        assert y.shape == (0, 4)
        (y,) = program.forward(np.ones((3, 4), dtype=np.float32))
        np.testing.assert_array_equal(y, np.full((3, 4), 2.0, dtype=np.float32))
        with pytest.raises(tte.errors.InvalidArgumentError):
            program.forward(np.zeros((9, 4), dtype=np.float32))
    assert_usable()


def test_c_api_refuses_garbage_buffers(tte):
    from torch_tensorrt_executorch_runtime._native import abi, library

    lib = library.load_plugin()
    for data in (b"", b"\x00" * 8, b"\x20\x00\x00\x00ET12" + b"\xff" * 64, bytes(range(256)) * 4):
        handle = ctypes.c_void_p()
        error = abi.TteError()
        status = lib.tte_program_open_buffer(data, len(data), None, ctypes.byref(handle), ctypes.byref(error))
        assert status != 0 and handle.value is None and error.text()
