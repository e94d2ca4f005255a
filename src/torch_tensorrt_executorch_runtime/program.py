"""`load()` and `Program`: ExecuTorch programs through the plugin's C API.

Tensors cross as DLPack, so any library works on either side: torch (CPU or
CUDA), numpy, cupy, or anything with `__dlpack__`. Results come back in the
library of the inputs, on the device the program produced them on.
"""

from __future__ import annotations

import ctypes
import dataclasses
import json
import os
import sys
import threading
import weakref
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from . import _c_api, _dlpack, _dtypes, _external_data
from ._c_api import BACKEND_NAME, TteBackendOption, TteBuffer, TteInput, TteOutput, TteProgramOptions
from .errors import (
    InvalidArgumentError,
    InvalidStateError,
    OutputConversionError,
    UnknownMethodError,
)

_DEVICE_NAMES = {_c_api.TTE_DEVICE_CPU: "cpu", _c_api.TTE_DEVICE_CUDA: "cuda"}
_CUDA_DLPACK_DEVICES = (_c_api.KDL_CUDA, _c_api.KDL_CUDA_MANAGED)


@dataclasses.dataclass(frozen=True)
class ValueInfo:
    """One input or output of a method, as the program records it."""

    kind: str  # "tensor", "int", "double", "bool", "none" or "other"
    name: str | None = None
    dtype: str | None = None
    # Upper bounds for dynamic dims.
    shape: tuple[int, ...] | None = None
    memory_planned: bool = False
    device: str | None = None  # "cpu", "cuda:0", or None where the program records none
    nbytes: int = 0


@dataclasses.dataclass(frozen=True)
class MethodInfo:
    name: str
    inputs: tuple[ValueInfo, ...]
    outputs: tuple[ValueInfo, ...]
    backends: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class DelegateInfo:
    """A TensorRTBackend delegate of a loaded method."""

    method: str
    provider: str
    bindings: tuple[dict, ...]
    aliased_io: tuple[dict, ...]
    engine_size: int
    device_id: int
    target_platform: str
    hardware_compatible: bool
    compile_specs: dict[str, str | bytes]
    serialized_metadata: str = ""
    magic: str = ""
    error: str | None = None
    backend: str = BACKEND_NAME


def _value_info(doc: Mapping[str, Any], recorded_device: str | None = None) -> ValueInfo:
    if doc.get("tag") != "tensor":
        return ValueInfo(kind=doc.get("tag", "other"))
    return ValueInfo(
        kind="tensor",
        name=doc.get("name") or None,
        dtype=doc.get("dtype"),
        shape=tuple(doc.get("shape", ())),
        memory_planned=bool(doc.get("memory_planned", False)),
        device=doc.get("device") or recorded_device,
        nbytes=int(doc.get("nbytes", 0)),
    )


def _delegate_info(method: str, doc: Mapping[str, Any]) -> DelegateInfo:
    blob = doc.get("blob") if isinstance(doc.get("blob"), Mapping) else {}
    specs: dict[str, str | bytes] = {}
    for spec in doc.get("compile_specs", ()):
        value = spec.get("value")
        specs[spec["key"]] = value if value is not None else bytes.fromhex(spec.get("value_hex", ""))
    return DelegateInfo(
        method=method,
        provider=doc.get("provider", ""),
        bindings=tuple(blob.get("io_bindings", ())),
        aliased_io=tuple(blob.get("aliased_io", ())),
        engine_size=int(blob.get("engine_size", 0)),
        device_id=int(blob.get("device_id", 0)),
        target_platform=blob.get("target_platform", ""),
        hardware_compatible=bool(blob.get("hardware_compatible", False)),
        compile_specs=specs,
        serialized_metadata=blob.get("serialized_metadata", ""),
        magic=blob.get("magic", ""),
        error=doc.get("error"),
        backend=doc.get("backend", BACKEND_NAME),
    )


# ---- load options --------------------------------------------------------------


class _Options:
    """TteProgramOptions and everything its pointers point into."""

    def __init__(self, data_paths: Sequence[Path], data_buffers: Sequence[bytes], options, enable_etdump: bool):
        self.paths = [os.fsencode(p) for p in data_paths]
        self.c_paths = (ctypes.c_char_p * max(1, len(self.paths)))(*self.paths)
        self.buffers = [bytes(b) for b in data_buffers]
        self.c_buffers = (TteBuffer * max(1, len(self.buffers)))()
        for i, data in enumerate(self.buffers):
            self.c_buffers[i].data = ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p)
            self.c_buffers[i].size = len(data)
        self.strings: list[bytes] = []
        entries = list(self._backend_options(options))
        self.c_options = (TteBackendOption * max(1, len(entries)))()
        for i, (backend, key, value) in enumerate(entries):
            option = self.c_options[i]
            option.backend = self._keep(backend)
            option.key = self._keep(key)
            if isinstance(value, bool):
                option.type, option.int_value = _c_api.TTE_OPTION_BOOL, int(value)
            elif isinstance(value, int):
                option.type, option.int_value = _c_api.TTE_OPTION_INT, value
            else:
                option.type, option.string_value = _c_api.TTE_OPTION_STRING, self._keep(value)
        self.struct = TteProgramOptions(
            struct_size=ctypes.sizeof(TteProgramOptions),
            data_paths=self.c_paths,
            num_data_paths=len(self.paths),
            data_buffers=self.c_buffers,
            num_data_buffers=len(self.buffers),
            backend_options=self.c_options,
            num_backend_options=len(entries),
            enable_etdump=1 if enable_etdump else 0,
        )

    def _keep(self, text: str) -> bytes:
        data = text.encode("utf-8")
        self.strings.append(data)
        return data

    @staticmethod
    def _backend_options(options):
        """(backend, key, value) from {"key": v} (TensorRTBackend) or {"Backend": {"key": v}}."""
        if options is None:
            return
        if not isinstance(options, Mapping):
            raise TypeError(f"options must be a mapping, got {type(options).__name__}")
        for key, value in options.items():
            if isinstance(value, Mapping):
                for inner_key, inner_value in value.items():
                    yield key, inner_key, _Options._checked(key, inner_key, inner_value)
            else:
                yield BACKEND_NAME, key, _Options._checked(BACKEND_NAME, key, value)

    @staticmethod
    def _checked(backend: str, key: str, value):
        if isinstance(value, bool | int | str):
            return value
        raise TypeError(f"option {backend}.{key} must be a bool, int or str, got {type(value).__name__}")


# ---- inputs and outputs ----------------------------------------------------------


def _root_module(value) -> str:
    return type(value).__module__.partition(".")[0]


def _is_torch_tensor(value) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.Tensor)


def _stream_handle(stream) -> int | None:
    """A cudaStream_t as int from an int, torch.cuda.Stream, cupy Stream or `__cuda_stream__` object."""
    if stream is None:
        return None
    if isinstance(stream, int) and not isinstance(stream, bool):
        return stream
    protocol = getattr(stream, "__cuda_stream__", None)
    if protocol is not None:
        return int(protocol()[1])
    for attribute in ("cuda_stream", "ptr", "handle"):
        value = getattr(stream, attribute, None)
        if isinstance(value, int):
            return value
    raise TypeError(
        f"stream must be a CUDA stream handle (int), a torch.cuda.Stream or an object with __cuda_stream__; "
        f"got {type(stream).__name__}"
    )


def _producer_stream(stream: int | None) -> int:
    """The `stream` argument of `__dlpack__` for a run on `stream`.

    The producer orders its pending work before that stream. DLPack reserves
    0 for CUDA: the legacy default stream (handle 0) is spelled 1, and -1
    (no known stream) asks the producer not to synchronize.
    """
    if stream is None:
        return -1
    return 1 if stream == 0 else stream


def _current_stream_of(values) -> int | None:
    """The current CUDA stream of the library that made the CUDA inputs, if it has one."""
    for value in values:
        if _is_torch_tensor(value) and value.is_cuda:
            import torch

            return torch.cuda.current_stream(value.device).cuda_stream
        if _root_module(value) == "cupy" and hasattr(value, "__dlpack__"):
            device_type, _ = _dlpack.device_of(value)
            if device_type in _CUDA_DLPACK_DEVICES:
                import cupy

                return cupy.cuda.get_current_stream().ptr
    return None


class _ThreadStream:
    """Sets the plugin's per-thread caller stream for one run and restores it after."""

    def __init__(self, lib, stream: int | None):
        self.lib = lib
        self.stream = stream
        self.previous = ctypes.c_void_p()
        self.had_previous = False

    def __enter__(self):
        if self.stream is not None:
            self.had_previous = bool(self.lib.tte_get_thread_stream(ctypes.byref(self.previous)))
            self.lib.tte_set_thread_stream(self.stream)
        return self

    def __exit__(self, *exc):
        if self.stream is not None:
            if self.had_previous:
                self.lib.tte_set_thread_stream(self.previous)
            else:
                self.lib.tte_clear_thread_stream()


class _OutputLibrary:
    """Turns DLPack results into tensors of the library the inputs came from."""

    def __init__(self, inputs):
        self.name = "numpy"
        for value in inputs:
            if _is_torch_tensor(value):
                self.name = "torch"
                break
        else:
            for value in inputs:
                if hasattr(value, "__dlpack__"):
                    # A library with no from_dlpack gets numpy (host) or cupy (device).
                    module = sys.modules.get(_root_module(value))
                    if callable(getattr(module, "from_dlpack", None)):
                        self.name = _root_module(value)
                    break
            else:
                if "torch" in sys.modules:
                    self.name = "torch"

    def convert(self, result: _dlpack.DLPackResult, where: str):
        device_type = result.device[0]
        on_device = device_type in _CUDA_DLPACK_DEVICES
        if self.name == "torch":
            import torch

            return torch.from_dlpack(result)
        if self.name == "numpy":
            if not on_device:
                import numpy

                return numpy.from_dlpack(result)
            try:
                import cupy
            except ImportError:
                result.release()
                raise OutputConversionError(
                    f"{where} is in CUDA memory (device {result.device[1]}) and numpy cannot hold it: "
                    "install cupy (pip install cupy-cuda13x) to get cupy arrays, or pass torch tensors"
                ) from None
            return cupy.from_dlpack(result)
        return sys.modules[self.name].from_dlpack(result)


# ---- the program -------------------------------------------------------------------

_live_programs: weakref.WeakSet[Program] = weakref.WeakSet()


def close_all() -> None:
    """Close every open program (at interpreter exit, before providers go)."""
    for program in list(_live_programs):
        program.close()


class Program:
    """An open ExecuTorch program. Use `load()` to make one."""

    def __init__(self, handle: int, lib, source: str, data_paths: tuple[Path, ...], file: Path | bytes | None):
        self._handle = handle
        self._lib = lib
        self._lock = threading.RLock()
        self._source = source
        self._file = file
        self.data_paths = data_paths
        self._method_names = tuple(self._read_method_names())
        self._methods: dict[str, MethodInfo] | None = None
        _live_programs.add(self)

    # -- lifetime

    def close(self) -> None:
        """Release the program; tensors returned with copy=False become invalid."""
        with self._lock:
            handle, self._handle = self._handle, None
            if handle is not None:
                _live_programs.discard(self)
                self._lib.tte_program_close(handle)

    def __enter__(self) -> Program:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    @property
    def closed(self) -> bool:
        return self._handle is None

    def _live_handle(self) -> int:
        if self._handle is None:
            raise InvalidStateError(f"program {self._source} is closed")
        return self._handle

    def __repr__(self) -> str:
        state = "closed" if self.closed else ", ".join(self._method_names)
        return f"<Program {self._source} ({state})>"

    # -- metadata

    def _read_method_names(self) -> list[str]:
        count = ctypes.c_size_t()
        _c_api.call(self._lib.tte_program_num_methods, self._handle, ctypes.byref(count))
        names = []
        for index in range(count.value):
            name = ctypes.c_char_p()
            _c_api.call(self._lib.tte_program_method_name, self._handle, index, ctypes.byref(name))
            names.append(name.value.decode("utf-8"))
        return names

    @property
    def method_names(self) -> tuple[str, ...]:
        return self._method_names

    def describe(self) -> dict:
        """The C API's JSON description (methods, I/O, delegates of loaded methods)."""
        with self._lock:
            out = ctypes.c_void_p()
            _c_api.call(self._lib.tte_program_describe_json, self._live_handle(), ctypes.byref(out))
            return json.loads(_c_api.take_string(self._lib, out))

    @property
    def methods(self) -> dict[str, MethodInfo]:
        """Input and output metadata of every method (no method is loaded for it)."""
        if self._methods is None:
            devices = self._recorded_devices()
            methods = {}
            for doc in self.describe()["methods"]:
                name = doc["name"]
                known = devices.get(name, {})
                methods[name] = MethodInfo(
                    name=name,
                    inputs=tuple(
                        _value_info(v, known.get(("input", i))) for i, v in enumerate(doc.get("inputs", ()))
                    ),
                    outputs=tuple(
                        _value_info(v, known.get(("output", i))) for i, v in enumerate(doc.get("outputs", ()))
                    ),
                    backends=tuple(doc.get("backends", ())),
                )
            self._methods = methods
        return self._methods

    def _recorded_devices(self) -> dict[str, dict[tuple[str, int], str]]:
        """Devices the program file tags its method I/O with (ExecuTorch reports them only once loaded)."""
        if self._file is None:
            return {}
        from . import _pte_reader

        try:
            info = _pte_reader.read_program(self._file, payloads=False)
        except (ImportError, _pte_reader.PteFormatError, OSError):
            return {}
        devices: dict[str, dict[tuple[str, int], str]] = {}
        for method in info.methods:
            entry = devices.setdefault(method.name, {})
            for role, values in (("input", method.inputs), ("output", method.outputs)):
                for i, value in enumerate(values):
                    if value.tensor is not None:
                        entry[(role, i)] = value.tensor.device
        return devices

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
        with self._lock:
            _c_api.call(self._lib.tte_program_load_method, self._live_handle(), name.encode("utf-8"))

    @property
    def delegates(self) -> list[DelegateInfo]:
        """TensorRTBackend delegates of every method (loads the methods to read them)."""
        for name in self._method_names:
            self.load_method(name)
        result = []
        for doc in self.describe()["methods"]:
            result.extend(_delegate_info(doc["name"], d) for d in doc.get("delegates", ()))
        return result

    def write_etdump(self, path: str | os.PathLike) -> None:
        """Write the ETDump recorded since load (needs load(..., enable_etdump=True))."""
        with self._lock:
            _c_api.call(self._lib.tte_program_write_etdump, self._live_handle(), os.fsencode(path))

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
        inputs = (inputs,) if hasattr(inputs, "__dlpack__") else tuple(inputs)
        info = self.methods[method]
        if len(inputs) != len(info.inputs):
            raise InvalidArgumentError(
                f"method '{method}' takes {len(info.inputs)} inputs, got {len(inputs)}"
            )
        stream_handle = _stream_handle(stream) if stream is not None else _current_stream_of(inputs)
        library = _OutputLibrary(inputs)
        borrowed = []
        c_inputs = (TteInput * max(1, len(inputs)))()
        for index, (value, expected) in enumerate(zip(inputs, info.inputs)):
            self._fill_input(c_inputs[index], value, expected, index, method, stream_handle, borrowed)
        c_outputs = (TteOutput * max(1, len(info.outputs)))()
        with self._lock:
            handle = self._live_handle()
            with _ThreadStream(self._lib, stream_handle):
                _c_api.call(
                    self._lib.tte_program_run,
                    handle,
                    method.encode("utf-8"),
                    c_inputs,
                    len(inputs),
                    1 if copy else 0,
                    c_outputs,
                    len(info.outputs),
                )
        del borrowed
        return self._collect_outputs(c_outputs, len(info.outputs), method, library)

    def _fill_input(self, slot: TteInput, value, expected: ValueInfo, index: int, method: str, stream, keep) -> None:
        where = f"input {index} of '{method}'"
        if value is None:
            slot.tag = _c_api.TTE_VALUE_NONE
            return
        if isinstance(value, bool):
            slot.tag, slot.bool_value = _c_api.TTE_VALUE_BOOL, int(value)
            return
        if isinstance(value, int):
            slot.tag, slot.int_value = _c_api.TTE_VALUE_INT, value
            return
        if isinstance(value, float):
            slot.tag, slot.double_value = _c_api.TTE_VALUE_DOUBLE, value
            return
        if _is_torch_tensor(value) and value.requires_grad:
            value = value.detach()
        if not hasattr(value, "__dlpack__"):
            raise InvalidArgumentError(
                f"{where} is a {type(value).__name__}; expected a tensor (torch, numpy, any DLPack object), "
                "a Python int, float or bool, or None"
            )
        if expected.kind != "tensor":
            raise InvalidArgumentError(f"{where} expects a {expected.kind}, got a tensor")
        device_type, _ = _dlpack.device_of(value)
        on_device = device_type in _CUDA_DLPACK_DEVICES
        producer_stream = _producer_stream(stream) if on_device else None
        tensor = _dlpack.borrow(value, producer_stream)
        keep.append(tensor)
        dl = tensor.dl_tensor
        found = _dtypes.from_dlpack_dtype(dl.dtype.code, dl.dtype.bits, dl.dtype.lanes)
        if expected.dtype is not None and (found is None or _dtypes.scalar_type_name(found) != expected.dtype):
            raise InvalidArgumentError(
                f"{where}: expected {expected.dtype}, got "
                f"{_dtypes.describe_dlpack_dtype(dl.dtype.code, dl.dtype.bits, dl.dtype.lanes)}"
            )
        if expected.shape is not None and dl.ndim != len(expected.shape):
            raise InvalidArgumentError(
                f"{where}: expected rank {len(expected.shape)} (shape {list(expected.shape)}), "
                f"got rank {dl.ndim} (shape {[dl.shape[i] for i in range(dl.ndim)]})"
            )
        slot.tag = _c_api.TTE_VALUE_TENSOR
        slot.tensor = tensor.pointer()

    def _collect_outputs(self, c_outputs, count: int, method: str, library: _OutputLibrary) -> list:
        # Take ownership of every tensor first, so a failed conversion frees the rest.
        pending = []
        for index in range(count):
            output = c_outputs[index]
            if output.tag == _c_api.TTE_VALUE_TENSOR and output.tensor:
                pending.append(_dlpack.DLPackResult(ctypes.addressof(output.tensor.contents)))
            else:
                pending.append(output)
        results = []
        for index, item in enumerate(pending):
            if isinstance(item, _dlpack.DLPackResult):
                results.append(library.convert(item, f"output {index} of '{method}'"))
            elif item.tag == _c_api.TTE_VALUE_INT:
                results.append(int(item.int_value))
            elif item.tag == _c_api.TTE_VALUE_DOUBLE:
                results.append(float(item.double_value))
            elif item.tag == _c_api.TTE_VALUE_BOOL:
                results.append(bool(item.bool_value))
            else:
                results.append(None)
        return results


# ---- load ------------------------------------------------------------------------------


def _as_paths(data_path) -> tuple[list[Path], list[bytes]]:
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
    from . import _activation

    lib = _activation.require()
    paths, buffers = _as_paths(data_path)
    if isinstance(path, bytes | bytearray | memoryview):
        data = bytes(path)
        source = f"<{len(data)} bytes>"
        c_options = _Options(paths, buffers, options, enable_etdump)
        handle = ctypes.c_void_p()
        _c_api.call(
            lib.tte_program_open_buffer,
            ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p),
            len(data),
            ctypes.byref(c_options.struct),
            ctypes.byref(handle),
        )
        return Program(handle.value, lib, source, tuple(paths), data)
    pte = Path(path)
    if not pte.is_file():
        raise FileNotFoundError(f"program not found: {pte}")
    if data_path is None:
        paths = _external_data.find_data_files(pte)
    c_options = _Options(paths, buffers, options, enable_etdump)
    handle = ctypes.c_void_p()
    _c_api.call(lib.tte_program_open_file, os.fsencode(pte), ctypes.byref(c_options.struct), ctypes.byref(handle))
    return Program(handle.value, lib, str(pte), tuple(paths), pte)


__all__ = ["DelegateInfo", "MethodInfo", "Program", "ValueInfo", "load"]
