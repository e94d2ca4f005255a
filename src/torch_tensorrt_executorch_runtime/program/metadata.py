"""What a program says about its methods: `ValueInfo`, `MethodInfo`, `DelegateInfo`.

Read from the C API's description of the loaded program (ExecuTorch's
MethodMeta; delegates: `file_delegates`). ExecuTorch knows the
device of a method's I/O only once the method is loaded, so the device the
.pte file records is taken from the file until then.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from .. import pte
from .._native import BACKEND_NAME
from .opened_file import OpenedFile


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
    """A TensorRTBackend delegate, as its blob in the program file describes it.

    `provider` names the engine provider serving it once its method is loaded
    ("" before); `error` says why its blob is unreadable or its init failed.
    `bindings`: {"name", "is_input", "dtype", "shape"} per engine tensor, as
    the blob records them; "dtype" and "shape" are None where the blob records
    neither (Torch-TensorRT's blobs record names and directions only; loading
    the method does not change that): the method's inputs and outputs
    (`Program.method(...).inputs`) give the tensors' dtypes and shapes.
    """

    method: str
    provider: str
    bindings: tuple[dict[str, Any], ...]
    aliased_io: tuple[dict[str, Any], ...]
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


def methods_from(description: Mapping[str, Any], file: OpenedFile | bytes | None) -> dict[str, MethodInfo]:
    """MethodInfo by name from the C API's description; `file` (the .pte) supplies recorded devices."""
    devices = _recorded_devices(file)
    methods = {}
    for doc in description["methods"]:
        name = doc["name"]
        known = devices.get(name, {})
        methods[name] = MethodInfo(
            name=name,
            inputs=tuple(_value_info(v, known.get(("input", i))) for i, v in enumerate(doc.get("inputs", ()))),
            outputs=tuple(_value_info(v, known.get(("output", i))) for i, v in enumerate(doc.get("outputs", ()))),
            backends=tuple(doc.get("backends", ())),
        )
    return methods


def _recorded_devices(file: OpenedFile | bytes | None) -> dict[str, dict[tuple[str, int], str]]:
    """Devices the program file tags its method I/O with, by method and (role, index).

    An opened file that changed since the program was opened is refused
    (InvalidStateError), not read as another program."""
    if file is None:
        return {}
    try:
        if isinstance(file, OpenedFile):
            info = file.read_unchanged(lambda data: pte.read_program(data, payloads=False))
        else:
            info = pte.read_program(file, payloads=False)
    except (ImportError, pte.PteFormatError, OSError):
        return {}
    devices: dict[str, dict[tuple[str, int], str]] = {}
    for method in info.methods:
        entry = devices.setdefault(method.name, {})
        for role, values in (("input", method.inputs), ("output", method.outputs)):
            for i, value in enumerate(values):
                if value.tensor is not None:
                    entry[(role, i)] = value.tensor.device
    return devices


def _binding(doc: Mapping[str, Any]) -> dict[str, Any]:
    """A blob's io_binding; the reader writes "" and [] for a dtype and shape the blob does not record."""
    binding = dict(doc)
    if not binding.get("dtype"):
        binding["dtype"] = None
        if not binding.get("shape"):
            binding["shape"] = None
    return binding


def delegate_info(method: str, doc: Mapping[str, Any]) -> DelegateInfo:
    """DelegateInfo from a delegate record as the C API describes it (blob, compile specs, provider, error)."""
    blob = doc.get("blob")
    if not isinstance(blob, Mapping):
        blob = {}
    specs: dict[str, str | bytes] = {}
    for spec in doc.get("compile_specs", ()):
        value = spec.get("value")
        specs[spec["key"]] = value if value is not None else bytes.fromhex(spec.get("value_hex", ""))
    return DelegateInfo(
        method=method,
        provider=doc.get("provider", ""),
        bindings=tuple(_binding(b) for b in blob.get("io_bindings", ())),
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
