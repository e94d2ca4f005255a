"""A file read as a sequence of bytes through `os.pread`, never memory-mapped.

The .pte reader needs only `len()` and slices of the file. A mapping would
serve them too, but a file cut short while mapped kills the process with
SIGBUS at the next touch of a page past its new end; a read just comes back
short, and that is reported as an exception.
"""

from __future__ import annotations

import os
from collections.abc import Callable


class FileBytes:
    """`len()` and slices of an open file descriptor, each slice read when asked for.

    size: the file's size when it was opened (what `len()` says). short_read:
    makes the exception raised when the file ends before a slice does (it
    was cut short since it was opened); it gets the offset where it ended.
    """

    def __init__(self, fd: int, size: int, short_read: Callable[[int], Exception]):
        self._fd = fd
        self._size = size
        self._short_read = short_read

    def __len__(self) -> int:
        return self._size

    def __getitem__(self, key: slice) -> bytes:
        if not isinstance(key, slice):
            raise TypeError("FileBytes supports slices only")
        start, stop, step = key.indices(self._size)
        if step != 1:
            raise ValueError("FileBytes supports contiguous slices only")
        return self.read(start, max(0, stop - start))

    def read(self, offset: int, size: int) -> bytes:
        """`size` bytes at `offset`, read now."""
        parts = []
        done = 0
        while done < size:
            part = os.pread(self._fd, size - done, offset + done)
            if not part:
                raise self._short_read(offset + done)
            parts.append(part)
            done += len(part)
        return b"".join(parts)


__all__ = ["FileBytes"]
