"""`load()` and `Program`: ExecuTorch programs through the plugin's C API.

Tensors cross as DLPack, so any library works on either side: torch (CPU or
CUDA), numpy, cupy, or anything with `__dlpack__`. Results come back in the
library of the inputs, on the device the program produced them on. A run is
one call into the compiled binding (a method handle's `run`), which does the
rest in C.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .. import _activation, _native
from ..errors import UnknownMethodError, path_error
from . import data_files, tensors
from .file_delegates import describe_delegates
from .metadata import DelegateInfo, MethodInfo, methods_from
from .opened_file import OpenedFile

# One .ptd file of `load(data_path=...)`: its path or its bytes.
DataSource = str | os.PathLike[str] | bytes | bytearray | memoryview


class Program:
    """An open ExecuTorch program. Use `load()` to make one."""

    def __init__(self, handle: _native.ProgramHandle, data_paths: tuple[Path, ...], file: OpenedFile | bytes):
        self._handle = handle
        # The .pte (held open since load) or its bytes, for `methods` and `delegates`.
        self._file = file
        self.data_paths = data_paths
        self._method_names = tuple(handle.method_names())
        self._methods: dict[str, MethodInfo] | None = None
        # The handle's method handles by name, read on every run; closing the
        # handle empties it.
        self._runners = handle.methods

    # -- lifetime

    def close(self) -> None:
        """Release the program. Tensors returned with copy=False keep their memory until they go."""
        self._handle.close()
        if isinstance(self._file, OpenedFile):
            self._file.close()

    def __enter__(self) -> Program:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def closed(self) -> bool:
        return self._handle.closed

    def __repr__(self) -> str:
        state = "closed" if self.closed else ", ".join(self._method_names)
        return f"<Program {self._handle.label} ({state})>"

    # -- metadata

    @property
    def method_names(self) -> tuple[str, ...]:
        return self._method_names

    def describe(self) -> dict[str, Any]:
        """The C API's JSON description (methods, I/O, delegates of loaded methods)."""
        return self._handle.describe()

    @property
    def methods(self) -> dict[str, MethodInfo]:
        """Input and output metadata of every method (no method is loaded for it)."""
        if self._methods is None:
            self._methods = methods_from(self.describe(), self._file)
        return self._methods

    def method(self, name: str = "forward") -> MethodInfo:
        self._check_method(name)
        return self.methods[name]

    def _check_method(self, name: str) -> None:
        if name not in self._method_names:
            raise UnknownMethodError(
                f"the program has no method '{name}'; its methods are: {', '.join(self._method_names) or 'none'}"
            )

    def load_method(self, name: str = "forward") -> None:
        """Initialize a method's delegates now rather than on its first run."""
        self._check_method(name)
        self._handle.load_method(name)

    @property
    def delegates(self) -> list[DelegateInfo]:
        """TensorRTBackend delegates of every method, read from the program file: nothing is
        loaded or initialized (no GPU needed); `provider` is filled in for methods already loaded.
        InvalidStateError if the file changed since the program was opened."""
        return describe_delegates(self._file, self.describe())

    def write_etdump(self, path: str | os.PathLike[str]) -> None:
        """Write the ETDump recorded since load (needs load(..., enable_etdump=True))."""
        self._handle.write_etdump(path)

    # -- running

    def forward(self, *inputs: Any) -> list[Any]:
        """Run "forward" on `inputs` and return its outputs (owned) as a list."""
        runner = self._runners.get("forward") or self._runner("forward")
        return runner.run(inputs, None, True)

    __call__ = forward

    def run(
        self, inputs: Sequence[Any] = (), method: str = "forward", *, stream: object = None, copy: bool = True
    ) -> list[Any]:
        """Run `method` on `inputs` and return its outputs as a list.

        inputs: tensors (torch, numpy, cupy, any `__dlpack__` object), Python
        scalars or None, one per method input (or one tensor). Outputs come
        back in the inputs' library. stream: a CUDA stream for the run (int
        handle, torch.cuda.Stream, or an object with `__cuda_stream__`);
        default: the current stream of the library of the first CUDA input
        (torch's, cupy's), else the program's own. The work is finished when
        run returns. copy=False returns views of the program's memory: the
        next run of this method overwrites them, and they keep the memory
        alive after close().
        """
        runner = self._runners.get(method) or self._runner(method)
        return runner.run(inputs, None if stream is None else tensors.stream_handle(stream), copy)

    def _runner(self, method: str) -> _native.MethodHandle:
        self._check_method(method)
        return self._handle.method(method)


# ---- load ------------------------------------------------------------------------------


def _data_sources(data_path: DataSource | Iterable[DataSource] | None) -> tuple[list[Path], list[bytes]]:
    """(paths, buffers) of the data_path argument: one or several .ptd paths or bytes."""
    if data_path is None:
        return [], []
    items: list[DataSource]
    if isinstance(data_path, str | os.PathLike | bytes | bytearray | memoryview):
        items = [data_path]
    else:
        items = list(data_path)
    paths: list[Path] = []
    buffers: list[bytes] = []
    for item in items:
        if isinstance(item, bytes | bytearray | memoryview):
            buffers.append(bytes(item))
        else:
            path = Path(item)
            problem = path_error(path, "data file")
            if problem is not None:
                raise problem
            paths.append(path)
    return paths, buffers


def _checked_option(backend: str, key: str, value: object) -> bool | int | str:
    if isinstance(value, bool | int | str):
        return value
    raise TypeError(f"option {backend}.{key} must be a bool, int or str, got {type(value).__name__}")


def _backend_options(options: Mapping[str, Any] | None) -> list[tuple[str, str, bool | int | str]]:
    """(backend, key, value) from {"key": v} (TensorRTBackend) or {"Backend": {"key": v}}."""
    if options is None:
        return []
    if not isinstance(options, Mapping):
        raise TypeError(f"options must be a mapping, got {type(options).__name__}")
    entries: list[tuple[str, str, bool | int | str]] = []
    for key, value in options.items():
        if isinstance(value, Mapping):
            entries.extend((key, inner, _checked_option(key, inner, v)) for inner, v in value.items())
        else:
            entries.append((_native.BACKEND_NAME, key, _checked_option(_native.BACKEND_NAME, key, value)))
    return entries


def load(
    path: str | os.PathLike[str] | bytes,
    *,
    data_path: DataSource | Iterable[DataSource] | None = None,
    options: Mapping[str, Any] | None = None,
    enable_etdump: bool = False,
    max_planned_memory: int | None = None,
) -> Program:
    """Open an ExecuTorch program.

    path: a .pte file, or its bytes. data_path: one or several .ptd files (or
    their bytes); when not given, the .ptd files the program needs are looked
    for beside the .pte. options: load options, {"provider": "tensorrt-python",
    "cuda_graphs": True, "weight_streaming_budget": 2**30} for TensorRTBackend,
    or {"BackendName": {...}} per backend. enable_etdump: record an ETDump,
    written with Program.write_etdump(path). max_planned_memory: bytes of
    host memory one method may plan; by default what is available when it
    loads.
    """
    _activation.require()
    if max_planned_memory is not None and (
        isinstance(max_planned_memory, bool) or not isinstance(max_planned_memory, int) or max_planned_memory <= 0
    ):
        raise TypeError(f"max_planned_memory must be a positive int (bytes), got {max_planned_memory!r}")
    paths, buffers = _data_sources(data_path)
    backend_options = _backend_options(options)
    if isinstance(path, bytes | bytearray | memoryview):
        data = bytes(path)
        open_options = _native.OpenOptions(paths, buffers, backend_options, enable_etdump, max_planned_memory or 0)
        return Program(_native.open_buffer(data, open_options), tuple(paths), data)
    pte = Path(path)
    problem = path_error(pte, "program")
    if problem is not None:
        raise problem
    try:
        # Held open for what Python reads of the file later (Program.delegates, .methods).
        opened = OpenedFile(pte)
    except OSError:
        opened = None  # the plugin says why (permission denied, ...) when it opens it
    try:
        if data_path is None:
            paths = data_files.find_data_files(pte, opened)
        open_options = _native.OpenOptions(paths, buffers, backend_options, enable_etdump, max_planned_memory or 0)
        handle = _native.open_file(pte, open_options)
        if opened is None:
            opened = OpenedFile(pte)
    except BaseException:
        if opened is not None:
            opened.close()
        raise
    return Program(handle, tuple(paths), opened)
