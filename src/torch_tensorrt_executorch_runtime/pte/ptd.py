"""Reads the named-data keys of an ExecuTorch data file (.ptd, FlatTensor).

Only the flatbuffer's NamedData keys are read (FlatTensor.named_data, field
2; NamedData.key, field 0), through the `flatbuffers` runtime's Table, with
the header checked first: FT01 identifier, FH01 header giving where the
flatbuffer ends. A truncated or corrupt file raises InvalidProgramError.
"""

from __future__ import annotations

import struct
from pathlib import Path

from ..errors import InvalidProgramError

PTD_IDENTIFIER = b"FT01"
PTD_HEADER_MAGIC = b"FH01"
_PTD_HEADER = struct.Struct("<4sIQQQQ")  # magic, length, flatbuffer offset/size, segment base/size


def ptd_keys(path: Path) -> set[str]:
    """Named-data keys stored in a .ptd (FlatTensor) file, reading only its flatbuffer."""
    from flatbuffers.table import Table

    with open(path, "rb") as handle:
        head = handle.read(8 + _PTD_HEADER.size)
        if len(head) < 8 + _PTD_HEADER.size or head[4:8] != PTD_IDENTIFIER or head[8:12] != PTD_HEADER_MAGIC:
            raise InvalidProgramError(f"{path} is not an ExecuTorch data file (.ptd): no FT01/FH01 header")
        _, _, offset, size, _, _ = _PTD_HEADER.unpack_from(head, 8)
        handle.seek(0, 2)
        if offset + size > handle.tell():
            raise InvalidProgramError(f"{path} is truncated: its flatbuffer ends past the end of the file")
        handle.seek(0)
        buffer = handle.read(offset + size)
    try:
        root = Table(buffer, struct.unpack_from("<I", buffer, 0)[0])
        # FlatTensor.named_data is field 2 (vtable slot 8); NamedData.key field 0 (slot 4).
        vector = root.Offset(8)
        if vector == 0:
            return set()
        start, count = root.Vector(vector), root.VectorLen(vector)
        keys = set()
        for i in range(count):
            entry = Table(buffer, root.Indirect(start + 4 * i))
            key = entry.Offset(4)
            if key:
                keys.add(entry.String(key + entry.Pos).decode("utf-8"))
        return keys
    except (IndexError, struct.error, UnicodeDecodeError) as exc:
        raise InvalidProgramError(f"{path} is a corrupt .ptd: {exc}") from exc
