"""Writes the TensorRTBackend delegate blob (TR01/TR02).

The bytes must equal what Torch-TensorRT 2.14's exporter writes for the same
metadata, so that programs packed here and programs exported upstream are
indistinguishable to any runtime. Layout (little-endian):

    header    struct "<4sIIIQ8s": magic, metadata_offset (32), metadata_size,
              engine_offset (16-aligned from the blob start), engine_size,
              reserved (01 00 00 00 00 00 00 00)
    metadata  json.dumps(obj, separators=(",", ":")) with ASCII escaping
    padding   zero bytes up to engine_offset
    engine    the serialized plan

The magic is TR02 exactly when aliased_io is non-empty: a reader that predates
aliasing would bind an aliased output to its own buffer and return wrong
results, and TR02 makes such a reader refuse the blob instead.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Sequence
from dataclasses import dataclass

HEADER_FORMAT = "<4sIIIQ8s"
HEADER_SIZE = struct.calcsize(HEADER_FORMAT)
ENGINE_ALIGNMENT = 16
MAGIC = b"TR01"
MAGIC_ALIASED_IO = b"TR02"
RESERVED = b"\x01" + b"\x00" * 7
ALIAS_KINDS = ("kv_cache_update", "user")

_U32_MAX = 2**32 - 1


@dataclass(frozen=True)
class IoBinding:
    """One engine I/O tensor as the blob names it.

    Torch-TensorRT leaves dtype "" and shape [] (the runtime asks the engine);
    they are kept only so any upstream metadata can be reproduced.
    """

    name: str
    is_input: bool
    dtype: str = ""
    shape: Sequence[int] = ()


@dataclass(frozen=True)
class AliasedIo:
    """An engine output that TensorRT writes into one of its inputs in place."""

    output: str
    input: str
    kind: str = "kv_cache_update"


@dataclass(frozen=True)
class BlobMetadata:
    """The JSON part of a blob; field order is the wire order."""

    io_bindings: Sequence[IoBinding] = ()
    aliased_io: Sequence[AliasedIo] = ()
    hardware_compatible: bool = False
    device_id: int = 0
    serialized_metadata: str = ""
    target_platform: str = ""


def _check_metadata(metadata: BlobMetadata) -> None:
    for binding in metadata.io_bindings:
        if not isinstance(binding.name, str):
            raise TypeError(f"binding name must be a str, got {type(binding.name).__name__}")
    seen_outputs = set()
    for alias in metadata.aliased_io:
        if alias.kind not in ALIAS_KINDS:
            raise ValueError(
                f"aliased_io kind for output '{alias.output}' must be one of "
                f"{', '.join(ALIAS_KINDS)}, got '{alias.kind}'"
            )
        if alias.output in seen_outputs:
            raise ValueError(f"output '{alias.output}' is aliased more than once")
        seen_outputs.add(alias.output)
    if isinstance(metadata.device_id, bool) or not isinstance(metadata.device_id, int):
        raise TypeError(f"device_id must be an int, got {type(metadata.device_id).__name__}")
    if metadata.device_id < 0:
        raise ValueError(f"device_id must be >= 0, got {metadata.device_id}")


def metadata_json(metadata: BlobMetadata) -> bytes:
    """The metadata document exactly as the upstream writer encodes it."""
    _check_metadata(metadata)
    document = {
        "io_bindings": [
            {
                "name": binding.name,
                "dtype": binding.dtype,
                "shape": list(binding.shape),
                "is_input": bool(binding.is_input),
            }
            for binding in metadata.io_bindings
        ],
        "aliased_io": [
            {"output": alias.output, "input": alias.input, "kind": alias.kind}
            for alias in metadata.aliased_io
        ],
        "hardware_compatible": bool(metadata.hardware_compatible),
        "device_id": metadata.device_id,
        "serialized_metadata": metadata.serialized_metadata,
        "target_platform": metadata.target_platform,
    }
    return json.dumps(document, separators=(",", ":")).encode("utf-8")


def _align(offset: int) -> int:
    return (offset + ENGINE_ALIGNMENT - 1) // ENGINE_ALIGNMENT * ENGINE_ALIGNMENT


def write_blob(engine: bytes | bytearray | memoryview, metadata: BlobMetadata) -> bytes:
    """The delegate blob for `engine` (a serialized plan) and its metadata."""
    engine = bytes(engine)
    document = metadata_json(metadata)
    engine_offset = _align(HEADER_SIZE + len(document))
    if engine_offset > _U32_MAX:
        raise ValueError(
            f"blob metadata is {len(document)} bytes; the header's u32 engine_offset "
            "cannot address an engine after it"
        )
    magic = MAGIC_ALIASED_IO if metadata.aliased_io else MAGIC
    header = struct.pack(
        HEADER_FORMAT, magic, HEADER_SIZE, len(document), engine_offset, len(engine), RESERVED
    )
    padding = b"\x00" * (engine_offset - HEADER_SIZE - len(document))
    return header + document + padding + engine
