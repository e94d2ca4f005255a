"""The delegate blob writer: layout, fields, and byte-identity with Torch-TensorRT 2.14."""

from __future__ import annotations

import importlib.util
import json
import os
import random
import struct
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from torch_tensorrt_executorch_runtime.pack.blob import (
    HEADER_FORMAT,
    HEADER_SIZE,
    AliasedIo,
    BlobMetadata,
    IoBinding,
    metadata_json,
    write_blob,
)

UPSTREAM_WHEEL = "torch-tensorrt==2.14.0"
# A download cut short is fetched again.
PIP_REFETCH = str(Path(__file__).resolve().parents[2] / "scripts" / "pip-refetch.py")
UPSTREAM_MODULE = "torch_tensorrt/executorch/serialization.py"


def parse(blob: bytes):
    """An independent reading of the layout, for the tests."""
    magic, meta_offset, meta_size, engine_offset, engine_size, reserved = struct.unpack_from(HEADER_FORMAT, blob)
    document = json.loads(blob[meta_offset:meta_offset + meta_size].decode("utf-8"))
    return {
        "magic": magic,
        "metadata_offset": meta_offset,
        "metadata_size": meta_size,
        "engine_offset": engine_offset,
        "engine_size": engine_size,
        "reserved": reserved,
        "padding": blob[meta_offset + meta_size:engine_offset],
        "document": document,
        "engine": blob[engine_offset:engine_offset + engine_size],
        "size": len(blob),
    }


def test_header_fields_and_round_trip():
    engine = bytes(range(256)) * 3
    metadata = BlobMetadata(
        io_bindings=[IoBinding("x", True), IoBinding("y", False)],
        hardware_compatible=True,
        device_id=2,
        serialized_metadata="c2VyaWFsaXplZA==",
        target_platform="linux_aarch64",
    )
    fields = parse(write_blob(engine, metadata))
    assert fields["magic"] == b"TR01"
    assert fields["metadata_offset"] == HEADER_SIZE == 32
    assert fields["engine_offset"] % 16 == 0
    assert fields["engine_offset"] >= 32 + fields["metadata_size"]
    assert fields["padding"] == b"\x00" * len(fields["padding"]) and len(fields["padding"]) < 16
    assert fields["reserved"] == b"\x01" + b"\x00" * 7
    assert fields["engine"] == engine and fields["engine_size"] == len(engine)
    assert fields["size"] == fields["engine_offset"] + len(engine)
    assert list(fields["document"]) == [
        "io_bindings", "aliased_io", "hardware_compatible", "device_id", "serialized_metadata", "target_platform",
    ]
    assert fields["document"]["io_bindings"] == [
        {"name": "x", "dtype": "", "shape": [], "is_input": True},
        {"name": "y", "dtype": "", "shape": [], "is_input": False},
    ]
    assert fields["document"]["aliased_io"] == []
    assert fields["document"]["hardware_compatible"] is True
    assert fields["document"]["device_id"] == 2
    assert fields["document"]["serialized_metadata"] == "c2VyaWFsaXplZA=="
    assert fields["document"]["target_platform"] == "linux_aarch64"


def test_aliased_io_makes_tr02():
    metadata = BlobMetadata(
        io_bindings=[IoBinding("cache", True), IoBinding("cache_out", False)],
        aliased_io=[AliasedIo("cache_out", "cache"), ],
    )
    fields = parse(write_blob(b"plan", metadata))
    assert fields["magic"] == b"TR02"
    assert fields["document"]["aliased_io"] == [{"output": "cache_out", "input": "cache", "kind": "kv_cache_update"}]
    user = BlobMetadata(io_bindings=[], aliased_io=[AliasedIo("o", "i", "user")])
    assert parse(write_blob(b"plan", user))["document"]["aliased_io"][0]["kind"] == "user"


def test_json_is_compact_and_ascii_escaped():
    document = metadata_json(BlobMetadata(io_bindings=[IoBinding("日本 é", True)]))
    assert b" " not in document.replace(b"\\u65e5\\u672c \\u00e9", b"")
    assert b"\\u65e5\\u672c \\u00e9" in document
    assert all(byte < 0x80 for byte in document)
    assert json.loads(document)["io_bindings"][0]["name"] == "日本 é"


@pytest.mark.parametrize("length", range(0, 40))
def test_engine_always_16_aligned(length):
    # Names of every length move the metadata end through all residues mod 16.
    blob = write_blob(b"E" * 5, BlobMetadata(io_bindings=[IoBinding("n" * length, True)]))
    fields = parse(blob)
    assert fields["engine_offset"] % 16 == 0
    assert 0 <= fields["engine_offset"] - (32 + fields["metadata_size"]) < 16
    assert fields["engine"] == b"E" * 5


def test_rejects_unknown_alias_kind_and_duplicates():
    with pytest.raises(ValueError, match="kind"):
        write_blob(b"p", BlobMetadata(aliased_io=[AliasedIo("o", "i", "copy")]))
    with pytest.raises(ValueError, match="more than once"):
        write_blob(b"p", BlobMetadata(aliased_io=[AliasedIo("o", "i"), AliasedIo("o", "j")]))
    with pytest.raises(ValueError, match="device_id"):
        write_blob(b"p", BlobMetadata(device_id=-1))


# Torch-TensorRT 2.14.0's serialize_engine output for the metadata below (made
# once with the wheel's torch_tensorrt/executorch/serialization.py).
GOLDEN_SIMPLE = (
    bytes.fromhex("5452303120000000f2000000200100000b000000000000000100000000000000")
    + b'{"io_bindings":[{"name":"x","dtype":"","shape":[],"is_input":true},'
    b'{"name":"output0","dtype":"","shape":[],"is_input":false}],"aliased_io":[],'
    b'"hardware_compatible":false,"device_id":0,"serialized_metadata":"",'
    b'"target_platform":"linux_x86_64"}'
    + b"\x00" * 14
    + b"engine-byte"
)
GOLDEN_ALIASED = (
    bytes.fromhex("5452303220000000f3010000200200002500000000000000" "0100000000000000")
    + b'{"io_bindings":[{"name":"cach\\u00e9","dtype":"","shape":[],"is_input":true},'
    b'{"name":"x\\"\\\\\\n","dtype":"","shape":[],"is_input":true},'
    b'{"name":"out_k","dtype":"","shape":[],"is_input":false},'
    b'{"name":"\\u65e5\\u672c","dtype":"","shape":[],"is_input":false}],'
    b'"aliased_io":[{"output":"out_k","input":"cach\\u00e9","kind":"kv_cache_update"},'
    b'{"output":"\\u65e5\\u672c","input":"x\\"\\\\\\n","kind":"user"}],'
    b'"hardware_compatible":true,"device_id":3,"serialized_metadata":"gAN9cQAu",'
    b'"target_platform":"linux_aarch64"}'
    + b"\x00" * 13
    + bytes(range(37))
)
ALIASED_NAMES = ("caché", 'x"\\\n', "out_k", "日本")


def test_golden_bytes_simple():
    metadata = BlobMetadata([IoBinding("x", True), IoBinding("output0", False)], target_platform="linux_x86_64")
    assert write_blob(b"engine-byte", metadata) == GOLDEN_SIMPLE


def test_golden_bytes_aliased_unicode():
    cache, odd, out_k, kanji = ALIASED_NAMES
    metadata = BlobMetadata(
        [IoBinding(cache, True), IoBinding(odd, True), IoBinding(out_k, False), IoBinding(kanji, False)],
        [AliasedIo(out_k, cache), AliasedIo(kanji, odd, "user")],
        hardware_compatible=True,
        device_id=3,
        serialized_metadata="gAN9cQAu",
        target_platform="linux_aarch64",
    )
    assert write_blob(bytes(range(37)), metadata) == GOLDEN_ALIASED


def _upstream_wheel() -> Path | None:
    given = os.environ.get("TTE_UPSTREAM_WHEEL")
    if given:
        path = Path(given)
        candidates = sorted(path.glob("torch_tensorrt-2.14.0-*.whl")) if path.is_dir() else [path]
        return candidates[0] if candidates and candidates[0].is_file() else None
    return None


@pytest.fixture(scope="module")
def upstream(tmp_path_factory):
    """Torch-TensorRT 2.14.0's serialization module, loaded by path from its wheel."""
    wheel = _upstream_wheel()
    if wheel is None:
        folder = tmp_path_factory.mktemp("upstream-wheel")
        command = [PIP_REFETCH, sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                   "-d", str(folder), UPSTREAM_WHEEL]
        try:
            result = subprocess.run(command, capture_output=True, text=True, timeout=300)
        except (OSError, subprocess.TimeoutExpired) as error:
            pytest.skip(f"cannot fetch {UPSTREAM_WHEEL} to compare with ({error}); set TTE_UPSTREAM_WHEEL")
        wheels = sorted(folder.glob("torch_tensorrt-*.whl"))
        if result.returncode != 0 or not wheels:
            last = (result.stderr.strip().splitlines() or ["no output"])[-1]
            pytest.skip(f"cannot fetch {UPSTREAM_WHEEL} to compare with ({last}); set TTE_UPSTREAM_WHEEL")
        wheel = wheels[0]
    folder = tmp_path_factory.mktemp("upstream")
    with zipfile.ZipFile(wheel) as archive:
        target = folder / "serialization.py"
        target.write_bytes(archive.read(UPSTREAM_MODULE))
    spec = importlib.util.spec_from_file_location("upstream_tensorrt_serialization", target)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _upstream_blob(upstream, engine, metadata: BlobMetadata) -> bytes:
    theirs = upstream.TensorRTBlobMetadata(
        io_bindings=[
            upstream.TensorRTIOBinding(name=b.name, dtype=b.dtype, shape=list(b.shape), is_input=b.is_input)
            for b in metadata.io_bindings
        ],
        aliased_io={a.output: (a.input, a.kind) for a in metadata.aliased_io},
        hardware_compatible=metadata.hardware_compatible,
        device_id=metadata.device_id,
        serialized_metadata=metadata.serialized_metadata,
        target_platform=metadata.target_platform,
    )
    return upstream.serialize_engine(engine, theirs)


def _random_metadata(rng: random.Random) -> BlobMetadata:
    alphabet = "abcxyz_.0123456789 é日本\"\\\n\t/\u0000\U0001f600"
    def name():
        return "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12)))
    inputs = list(dict.fromkeys(name() for _ in range(rng.randint(0, 4))))
    outputs = [n for n in dict.fromkeys(name() for _ in range(rng.randint(0, 4))) if n not in inputs]
    bindings = [IoBinding(n, True) for n in inputs] + [IoBinding(n, False) for n in outputs]
    aliases = []
    for out, source in zip(outputs, inputs, strict=False):
        if rng.random() < 0.5:
            aliases.append(AliasedIo(out, source, rng.choice(["kv_cache_update", "user"])))
    return BlobMetadata(
        io_bindings=bindings,
        aliased_io=aliases,
        hardware_compatible=rng.random() < 0.5,
        device_id=rng.randint(0, 7),
        serialized_metadata=name(),
        target_platform=rng.choice(["linux_x86_64", "linux_aarch64", "windows_x86_64", "unknown", ""]),
    )


def test_byte_identical_to_upstream_goldens(upstream):
    metadata = BlobMetadata([IoBinding("x", True), IoBinding("output0", False)], target_platform="linux_x86_64")
    assert _upstream_blob(upstream, b"engine-byte", metadata) == GOLDEN_SIMPLE


def test_byte_identical_to_upstream_random(upstream):
    rng = random.Random(20260214)
    for _ in range(300):
        metadata = _random_metadata(rng)
        engine = rng.randbytes(rng.randint(1, 200))
        assert write_blob(engine, metadata) == _upstream_blob(upstream, engine, metadata), metadata


def test_byte_identical_to_upstream_large_engine(upstream):
    engine = random.Random(7).randbytes(3 * 1024 * 1024 + 5)
    metadata = BlobMetadata([IoBinding("input_0", True), IoBinding("output_0", False)], device_id=1)
    assert write_blob(engine, metadata) == _upstream_blob(upstream, engine, metadata)


def test_upstream_reads_our_blob(upstream):
    metadata = BlobMetadata(
        [IoBinding("k", True), IoBinding("k_out", False)], [AliasedIo("k_out", "k", "user")], True, 1, "m", "unknown"
    )
    engine, theirs = upstream.deserialize_engine(write_blob(b"\x00plan\xff", metadata))
    assert engine == b"\x00plan\xff"
    assert [(b.name, b.is_input) for b in theirs.io_bindings] == [("k", True), ("k_out", False)]
    assert theirs.aliased_io == {"k_out": ("k", "user")}
    assert (theirs.hardware_compatible, theirs.device_id, theirs.serialized_metadata, theirs.target_platform) == (
        True, 1, "m", "unknown",
    )
