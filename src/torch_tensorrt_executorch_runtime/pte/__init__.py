"""ExecuTorch's files as they are written, read without torch, executorch or the plugin.

`read_program` describes a .pte (methods, I/O as recorded, delegates and
where their payloads are, external constants); `ptd_keys` lists the named
data a .ptd holds. What ExecuTorch makes of a program once loaded comes from
the plugin's C API instead (`Program`); this package answers what must be
known before or without loading: which .ptd files to pass at open, and what
`inspect` shows of a program whose delegates cannot load here.
"""

from __future__ import annotations

from .file_bytes import FileBytes
from .ptd import ptd_keys
from .reader import (
    DEVICE_PLANNED,
    DEVICE_RESIDENT,
    HOST,
    PteDelegate,
    PteFormatError,
    PteMethod,
    PteProgram,
    PteTensor,
    PteValue,
    SchemaNotGeneratedError,
    read_program,
)

__all__ = [
    "DEVICE_PLANNED",
    "DEVICE_RESIDENT",
    "HOST",
    "FileBytes",
    "PteDelegate",
    "PteFormatError",
    "PteMethod",
    "PteProgram",
    "PteTensor",
    "PteValue",
    "SchemaNotGeneratedError",
    "ptd_keys",
    "read_program",
]
