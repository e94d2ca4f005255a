"""The .pte a `Program` was loaded from, held open for what Python reads of it later.

`Program.delegates` and `Program.methods` read the file again (delegate
payloads, recorded devices). They read through this descriptor, opened at
load, so a file renamed over the path later does not change what they
describe; and they compare the file's size and modification time with what
they were at load, as the plugin does before it loads a method
(cpp/src/program/watched_file.cpp), so a file cut short or rewritten in
place (`cp`, `pack_program` to the same path) is refused with the plugin's
words instead of being described as another program, or as a damaged one.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from ..errors import InvalidStateError
from ..pte import FileBytes

T = TypeVar("T")


class OpenedFile:
    """A file opened read-only, with its size and modification time at opening."""

    def __init__(self, path: Path):
        self.path = path
        self._fd = -1
        # O_NONBLOCK: the path may have become a FIFO since it was checked.
        self._fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
        try:
            opened = os.fstat(self._fd)
        except OSError:
            os.close(self._fd)
            raise
        self._size = opened.st_size
        self._mtime_ns = opened.st_mtime_ns

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __del__(self) -> None:
        self.close()

    def change(self) -> str | None:
        """How the file changed since it was opened ("was rewritten", ...), or None."""
        now = os.fstat(self._fd)
        if now.st_size != self._size:
            return f"changed size from {self._size} to {now.st_size} bytes"
        if now.st_mtime_ns != self._mtime_ns:
            return "was rewritten"
        return None

    def _changed_error(self, how: str) -> InvalidStateError:
        return InvalidStateError(
            f"program '{self.path}' {how} since the program was opened: open the program again "
            "(write new versions to a new path, or replace the file by renaming)"
        )

    def read_unchanged(self, reader: Callable[[FileBytes], T]) -> T:
        """`reader(bytes of the file)`, refused with InvalidStateError when the file has changed
        since it was opened: before, during (whatever `reader` raised then) or after the read."""
        if self._fd < 0:
            raise InvalidStateError(f"program '{self.path}' is closed")
        how = self.change()
        if how is not None:
            raise self._changed_error(how)
        data = FileBytes(self._fd, self._size, lambda offset: self._changed_error(self.change() or "was cut short"))
        try:
            result = reader(data)
        except Exception as exc:
            how = self.change()
            if how is not None:
                raise self._changed_error(how) from exc
            raise
        how = self.change()
        if how is not None:
            raise self._changed_error(how)
        return result


__all__ = ["OpenedFile"]
