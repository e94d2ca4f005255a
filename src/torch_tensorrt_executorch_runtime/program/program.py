"""`load()` and `Program`: ExecuTorch programs through the plugin's C API.

Tensors cross as DLPack, so any library works on either side: torch (CPU or
CUDA), numpy, cupy, or anything with `__dlpack__`. Results come back in the
library of the inputs, on the device the program produced them on.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .. import _activation, _native
from ..errors import UnknownMethodError
from . import data_files, tensors
from .metadata import DelegateInfo, MethodInfo, delegates_from, methods_from


class Program:
    """An open ExecuTorch program. Use `load()` to make one."""

    def __init__(self, handle: _native.ProgramHandle, data_paths: tuple[Path, ...], file: Path | bytes | None):
        self._handle = handle
        self._file = file
        self.data_paths = data_paths
        self._method_names = tuple(handle.method_names())
        self._methods: dict[str, MethodInfo] | None = None
        self._output_counts: dict[str, int] = {}

    # -- lifetime

    def close(self) -> None:
        """Release the program; tensors returned with copy=False become invalid."""
        self._handle.close()

    def __enter__(self) -> Program:
        return self

    def __exit__(self, *exc) -> None:
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

    def describe(self) -> dict:
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
        """TensorRTBackend delegates of every method (loads the methods to read them)."""
        for name in self._method_names:
            self.load_method(name)
        return delegates_from(self.describe())

    def write_etdump(self, path: str | os.PathLike) -> None:
        """Write the ETDump recorded since load (needs load(..., enable_etdump=True))."""
        self._handle.write_etdump(path)

    # -- running

    def forward(self, *inputs) -> list:
        return self.run(inputs, "forward")

    __call__ = forward

    def run(self, inputs: Sequence = (), method: str = "forward", *, stream=None, copy: bool = True) -> list:
        """Run `method` on `inputs` and return its outputs as a list.

        inputs: tensors (torch, numpy, cupy, any `__dlpack__` object), Python
        scalars or None, one per method input. Outputs come back in the inputs'
        library. stream: a CUDA stream for the run (int handle,
        torch.cuda.Stream, or an object with `__cuda_stream__`); default:
        torch's current stream for torch CUDA inputs, else the program's own.
        The work is finished when run returns. copy=False returns views of the
        program's memory, valid until the next run of this method.
        """
        self._check_method(method)
        values = tensors.prepare_inputs((inputs,) if hasattr(inputs, "__dlpack__") else inputs)
        stream_handle = tensors.stream_handle(stream) if stream is not None else tensors.current_stream_of(values)
        library = tensors.OutputLibrary(values)
        results = self._handle.run(
            method, values, copy=copy, num_outputs=self._output_count(method), stream=stream_handle
        )
        return library.convert_all(results, method)

    def _output_count(self, method: str) -> int:
        count = self._output_counts.get(method)
        if count is None:
            count = self._output_counts[method] = self._handle.io_count(method)[1]
        return count


# ---- load ------------------------------------------------------------------------------


def _data_sources(data_path) -> tuple[list[Path], list[bytes]]:
    """(paths, buffers) of the data_path argument: one or several .ptd paths or bytes."""
    if data_path is None:
        return [], []
    items = [data_path] if isinstance(data_path, str | os.PathLike | bytes | bytearray | memoryview) else list(data_path)
    paths, buffers = [], []
    for item in items:
        if isinstance(item, bytes | bytearray | memoryview):
            buffers.append(bytes(item))
        else:
            path = Path(item)
            if not path.is_file():
                raise FileNotFoundError(f"data file not found: {path}")
            paths.append(path)
    return paths, buffers


def _checked_option(backend: str, key: str, value):
    if isinstance(value, bool | int | str):
        return value
    raise TypeError(f"option {backend}.{key} must be a bool, int or str, got {type(value).__name__}")


def _backend_options(options) -> list[tuple[str, str, bool | int | str]]:
    """(backend, key, value) from {"key": v} (TensorRTBackend) or {"Backend": {"key": v}}."""
    if options is None:
        return []
    if not isinstance(options, Mapping):
        raise TypeError(f"options must be a mapping, got {type(options).__name__}")
    entries = []
    for key, value in options.items():
        if isinstance(value, Mapping):
            entries.extend((key, inner, _checked_option(key, inner, v)) for inner, v in value.items())
        else:
            entries.append((_native.BACKEND_NAME, key, _checked_option(_native.BACKEND_NAME, key, value)))
    return entries


def load(
    path: str | os.PathLike | bytes,
    *,
    data_path=None,
    options: Mapping[str, Any] | None = None,
    enable_etdump: bool = False,
) -> Program:
    """Open an ExecuTorch program.

    path: a .pte file, or its bytes. data_path: one or several .ptd files (or
    their bytes); when not given, the .ptd files the program needs are looked
    for beside the .pte. options: load options, {"provider": "tensorrt-python",
    "cuda_graphs": True, "weight_streaming_budget": 2**30} for TensorRTBackend,
    or {"BackendName": {...}} per backend. enable_etdump: record an ETDump,
    written with Program.write_etdump(path).
    """
    _activation.require()
    paths, buffers = _data_sources(data_path)
    backend_options = _backend_options(options)
    if isinstance(path, bytes | bytearray | memoryview):
        data = bytes(path)
        open_options = _native.OpenOptions(paths, buffers, backend_options, enable_etdump)
        return Program(_native.open_buffer(data, open_options), tuple(paths), data)
    pte = Path(path)
    if not pte.is_file():
        raise FileNotFoundError(f"program not found: {pte}")
    if data_path is None:
        paths = data_files.find_data_files(pte)
    open_options = _native.OpenOptions(paths, buffers, backend_options, enable_etdump)
    return Program(_native.open_file(pte, open_options), tuple(paths), pte)
