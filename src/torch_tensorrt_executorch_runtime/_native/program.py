"""Programs through the C API: open, read metadata, hand out method handles, close.

A `ProgramHandle` owns one `TteProgram*`. Its lock orders every call on the
handle against `close`, so no call can use a freed program; the C API itself
runs one method at a time per program. Runs go through method handles
(`methods.MethodHandle`, the compiled extension), kept in `methods`, a dict
the Program reads directly; `close` empties it, so nothing of this binding
keeps the program's memory alive after close (output views may). Open
handles are tracked so that the interpreter's exit can close them while
Python providers still answer.
"""

from __future__ import annotations

import ctypes
import json
import os
import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from ..errors import InvalidStateError
from . import abi, methods
from .abi import TteBackendOption, TteBuffer, TteProgramOptions
from .plugin import call, lib, take_string

OptionValue = bool | int | str


@dataclass(frozen=True)
class OpenOptions:
    """What tte_program_open_* takes besides the program."""

    data_paths: Sequence[Path] = ()
    data_buffers: Sequence[bytes] = ()
    backend_options: Sequence[tuple[str, str, OptionValue]] = ()  # (backend, key, value)
    enable_etdump: bool = False
    max_planned_memory: int = 0  # bytes; 0: what is available


class _COptions:
    """TteProgramOptions and everything its pointers point into."""

    def __init__(self, options: OpenOptions):
        self.paths = [os.fsencode(p) for p in options.data_paths]
        self.c_paths = (ctypes.c_char_p * max(1, len(self.paths)))(*self.paths)
        self.buffers = [bytes(b) for b in options.data_buffers]
        self.c_buffers = (TteBuffer * max(1, len(self.buffers)))()
        for i, data in enumerate(self.buffers):
            self.c_buffers[i].data = ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p)
            self.c_buffers[i].size = len(data)
        self.strings: list[bytes] = []
        entries = list(options.backend_options)
        self.c_options = (TteBackendOption * max(1, len(entries)))()
        for i, (backend, key, value) in enumerate(entries):
            option = self.c_options[i]
            option.backend = self._keep(backend)
            option.key = self._keep(key)
            if isinstance(value, bool):
                option.type, option.int_value = abi.TTE_OPTION_BOOL, int(value)
            elif isinstance(value, int):
                option.type, option.int_value = abi.TTE_OPTION_INT, value
            else:
                option.type, option.string_value = abi.TTE_OPTION_STRING, self._keep(value)
        self.struct = TteProgramOptions(
            struct_size=ctypes.sizeof(TteProgramOptions),
            data_paths=self.c_paths,
            num_data_paths=len(self.paths),
            data_buffers=self.c_buffers,
            num_data_buffers=len(self.buffers),
            backend_options=self.c_options,
            num_backend_options=len(entries),
            enable_etdump=1 if options.enable_etdump else 0,
            max_planned_memory=options.max_planned_memory,
        )

    def _keep(self, text: str) -> bytes:
        data = text.encode("utf-8")
        self.strings.append(data)
        return data


_open_handles: weakref.WeakSet[ProgramHandle] = weakref.WeakSet()


def open_file(path: Path, options: OpenOptions) -> ProgramHandle:
    c_options = _COptions(options)
    pointer = ctypes.c_void_p()
    call(lib().tte_program_open_file, os.fsencode(path), ctypes.byref(c_options.struct), ctypes.byref(pointer))
    # Set (not NULL) once the call succeeded: `call` raised otherwise.
    return ProgramHandle(cast(int, pointer.value), str(path))


def open_buffer(data: bytes, options: OpenOptions) -> ProgramHandle:
    """Open a program from its bytes (the C API copies them)."""
    c_options = _COptions(options)
    pointer = ctypes.c_void_p()
    call(
        lib().tte_program_open_buffer,
        ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p),
        len(data),
        ctypes.byref(c_options.struct),
        ctypes.byref(pointer),
    )
    # Set (not NULL) once the call succeeded: `call` raised otherwise.
    return ProgramHandle(cast(int, pointer.value), f"<{len(data)} bytes>")


def close_all() -> None:
    """Close every open program (at interpreter exit, before providers go)."""
    for handle in list(_open_handles):
        handle.close()


class ProgramHandle:
    """One open `TteProgram*`; `label` names it in messages."""

    def __init__(self, pointer: int, label: str):
        self._pointer: int | None = pointer
        self.label = label
        self._lock = threading.RLock()
        # Method handles by name; emptied (never replaced) by close.
        self.methods: dict[str, methods.MethodHandle] = {}
        _open_handles.add(self)

    @property
    def closed(self) -> bool:
        return self._pointer is None

    def close(self) -> None:
        with self._lock:
            pointer, self._pointer = self._pointer, None
            # A run in progress on another thread holds its method handle:
            # the program lives until that run returns.
            self.methods.clear()
            if pointer is not None:
                _open_handles.discard(self)
                lib().tte_program_close(pointer)

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def _live(self) -> int:
        if self._pointer is None:
            raise InvalidStateError(f"program {self.label} is closed")
        return self._pointer

    def method_names(self) -> list[str]:
        with self._lock:
            pointer = self._live()
            count = ctypes.c_size_t()
            call(lib().tte_program_num_methods, pointer, ctypes.byref(count))
            names = []
            for index in range(count.value):
                name = ctypes.c_char_p()
                call(lib().tte_program_method_name, pointer, index, ctypes.byref(name))
                # Set (not NULL) once the call succeeded: `call` raised otherwise.
                names.append(cast(bytes, name.value).decode("utf-8"))
            return names

    def describe(self) -> dict:
        """The C API's JSON description (methods, I/O, delegates of loaded methods)."""
        with self._lock:
            out = ctypes.c_void_p()
            call(lib().tte_program_describe_json, self._live(), ctypes.byref(out))
            return json.loads(take_string(out))

    def io_count(self, method: str) -> tuple[int, int]:
        """(inputs, outputs) of a method, without loading it."""
        with self._lock:
            inputs, outputs = ctypes.c_size_t(), ctypes.c_size_t()
            call(
                lib().tte_program_method_io_count,
                self._live(),
                method.encode("utf-8"),
                ctypes.byref(inputs),
                ctypes.byref(outputs),
            )
            return inputs.value, outputs.value

    def load_method(self, method: str) -> None:
        with self._lock:
            call(lib().tte_program_load_method, self._live(), method.encode("utf-8"))

    def write_etdump(self, path: str | os.PathLike) -> None:
        with self._lock:
            call(lib().tte_program_write_etdump, self._live(), os.fsencode(path))

    def method(self, name: str) -> methods.MethodHandle:
        """The handle that runs `name` (loads the method the first time)."""
        with self._lock:
            handle = self.methods.get(name)
            if handle is None:
                handle = self.methods[name] = methods.open_method(self._live(), name)
            return handle
