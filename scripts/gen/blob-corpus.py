#!/usr/bin/env python3
"""Write the seed corpus of the blob reader's fuzzer (cpp/fuzz/corpus/blob/).

Valid blobs laid out as Torch-TensorRT's exporter writes them (compact JSON,
ASCII escapes, a 16-byte aligned engine), and edge cases the reader must
refuse. Standard library only, so it runs from a clean checkout:

    python3 scripts/gen/blob-corpus.py [OUT_DIR]
"""

import json
import pathlib
import struct
import sys

HEADER = struct.Struct("<4sIIIQ8s")
RESERVED = b"\x01" + b"\x00" * 7
ENGINE = b"ENGINE-PLAN-BYTES"


def metadata(bindings, aliases=(), *, ensure_ascii=True, **extra):
    doc = {
        "io_bindings": [
            {"name": name, "dtype": "", "shape": [], "is_input": is_input} for name, is_input in bindings
        ],
        "aliased_io": [{"output": o, "input": i, "kind": k} for o, i, k in aliases],
        "hardware_compatible": False,
        "device_id": 0,
        "serialized_metadata": "gAR9lC4=",
        "target_platform": "linux_x86_64",
    }
    doc.update(extra)
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=ensure_ascii).encode("utf-8")


def blob(meta, engine=ENGINE, magic=None, **fields):
    """Header + metadata + zero padding + engine; `fields` override header values."""
    if magic is None:
        magic = b"TR02" if b'"aliased_io":[{' in meta else b"TR01"
    engine_offset = (32 + len(meta) + 15) // 16 * 16
    values = {
        "magic": magic,
        "metadata_offset": 32,
        "metadata_size": len(meta),
        "engine_offset": engine_offset,
        "engine_size": len(engine),
    }
    values.update(fields)
    header = HEADER.pack(
        values["magic"],
        values["metadata_offset"],
        values["metadata_size"],
        values["engine_offset"],
        values["engine_size"],
        RESERVED,
    )
    return header + meta + b"\x00" * (engine_offset - 32 - len(meta)) + engine


def seeds():
    two = [("x", True), ("output0", False)]
    kv = [("x", True), ("cache_k", True), ("cache_v", True),
          ("y", False), ("cache_k_out", False), ("cache_v_out", False)]
    kv_aliases = [("cache_k_out", "cache_k", "kv_cache_update"), ("cache_v_out", "cache_v", "user")]
    unicode_names = [("caf\u00e9", True), ("\u5165\u529b", True), ("\U0001f600_0", False), ('a"b\\c', False)]
    many = [(f"input_{i}", True) for i in range(32)] + [(f"output_{i}", False) for i in range(32)]

    yield "tr01-two-bindings", blob(metadata(two))
    yield "tr02-kv-cache-aliases", blob(metadata(kv, kv_aliases))
    yield "tr01-bind-by-engine-names", blob(metadata([]))
    yield "unicode-escaped-names", blob(metadata(unicode_names))
    yield "unicode-raw-utf8-names", blob(metadata(unicode_names, ensure_ascii=False))
    yield "unknown-keys", blob(metadata(two, future={"device_id": 9, "nested": [[1, 2], {"a": None}]},
                                        hardware_compatible=True, device_id=3))
    yield "many-bindings", blob(metadata(many))
    yield "shapes-and-dtypes", blob(
        json.dumps({"io_bindings": [{"name": "x", "dtype": "float16", "shape": [-1, 3, 224],
                                     "is_input": True}]}).encode()
    )
    yield "tr02-empty-aliased-io", blob(metadata(two), magic=b"TR02")
    # Refused: each one pins a header check.
    valid = blob(metadata(two))
    yield "header-only", valid[:32]
    yield "truncated-engine", valid[:-1]
    yield "future-magic-tr03", blob(metadata(two), magic=b"TR03")
    yield "unaligned-engine-offset", blob(metadata(two), engine_offset=(32 + len(metadata(two))))
    yield "engine-size-near-2-64", blob(metadata(two), engine_size=2**64 - 1)
    yield "metadata-size-near-2-32", blob(metadata(two), metadata_size=2**32 - 1)
    yield "engine-offset-near-2-32", blob(metadata(two), engine_offset=2**32 - 16)
    yield "tr01-with-aliases", blob(metadata(kv, kv_aliases), magic=b"TR01")
    yield "deep-nesting", blob(b'{"io_bindings":[],"x":' + b"[" * 80 + b"]" * 80 + b"}")


def main():
    root = pathlib.Path(__file__).resolve().parents[2]
    out = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else root / "cpp" / "fuzz" / "corpus" / "blob"
    out.mkdir(parents=True, exist_ok=True)
    for name, data in seeds():
        (out / f"{name}.bin").write_bytes(data)
    print(f"wrote {len(list(seeds()))} seeds to {out}")


if __name__ == "__main__":
    main()
