"""Byte mutations shared by the mutation drivers in this folder.

`mutate` changes raw bytes anywhere (bit flips, byte sets, 32-bit sets of
interesting integers, truncation, splices from another seed, insertions).
`mutate_inside` aims the same mutations at one region of a file (a delegate
blob's metadata, a test-engine plan), where a random byte in the whole file
rarely lands.
"""

from __future__ import annotations

import random
import struct

INTERESTING = (0, 1, 0x7F, 0x80, 0xFF, 0x7FFF, 0xFFFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF)
# Bytes that are never valid UTF-8, and JSON punctuation.
HOSTILE_BYTES = (b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00", b'"', b"\\", b"{", b"[", b"\\ud800")


def mutate(rng: random.Random, data: bytes, seeds: list[bytes]) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        choice = rng.randrange(6)
        if not out:
            out += rng.randbytes(rng.randint(1, 16))
        elif choice == 0:
            i = rng.randrange(len(out))
            out[i] ^= 1 << rng.randrange(8)
        elif choice == 1:
            out[rng.randrange(len(out))] = rng.randrange(256)
        elif choice == 2 and len(out) >= 4:
            i = rng.randrange(len(out) - 3)
            struct.pack_into("<I", out, i, rng.choice(INTERESTING))
        elif choice == 3:
            del out[rng.randrange(len(out)) :]
        elif choice == 4:
            other = rng.choice(seeds)
            i = rng.randrange(len(out))
            j = rng.randrange(len(other)) if other else 0
            out[i:] = other[j:]
        else:
            i = rng.randrange(len(out))
            out[i:i] = rng.randbytes(rng.randint(1, 8))
    return bytes(out)


def mutate_inside(rng: random.Random, data: bytes, start: int, end: int) -> bytes:
    """Mutate only data[start:end] (same length: offsets elsewhere stay valid)."""
    out = bytearray(data)
    if end <= start:
        return bytes(out)
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(start, end)
        choice = rng.randrange(4)
        if choice == 0:
            out[i] ^= 1 << rng.randrange(8)
        elif choice == 1:
            out[i] = rng.randrange(256)
        elif choice == 2:
            token = rng.choice(HOSTILE_BYTES)
            out[i : i + len(token)] = token[: max(0, end - i)]
        elif end - i >= 4:
            struct.pack_into("<I", out, i, rng.choice(INTERESTING))
    return bytes(out[: len(data)])
