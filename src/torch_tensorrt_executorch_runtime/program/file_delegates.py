"""`Program.delegates`: TensorRTBackend delegates described from the program file.

The .pte reader (`pte`) finds each delegate's payload and the plugin's blob
reader (tte_blob_describe_json) parses it; no method is loaded and no
delegate initialized, so this works without a GPU or a TensorRT runtime
(like `inspect`). Methods already loaded add what only loading tells: the
provider serving each delegate and the error of a delegate that failed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import _native, pte
from ..errors import Error
from .metadata import DelegateInfo, delegate_info
from .opened_file import OpenedFile


def describe_delegates(file: OpenedFile | bytes, description: Mapping[str, Any]) -> list[DelegateInfo]:
    """DelegateInfo of every TensorRTBackend delegate in `file`, in method and delegate order.

    description: the C API's description of the open program, whose loaded
    methods list their delegates' providers and errors. An opened file is
    read, one payload at a time (never mapped), and refused with
    InvalidStateError if it changed since the program was opened.
    """
    loaded = {m["name"]: list(m.get("delegates", ())) for m in description["methods"]}
    if isinstance(file, OpenedFile):
        return file.read_unchanged(lambda data: _describe(data, loaded))
    return _describe(file, loaded)


def _describe(data: bytes | pte.FileBytes, loaded: Mapping[str, list[Any]]) -> list[DelegateInfo]:
    info = pte.read_program(data, payloads=False)
    result = []
    for method in info.methods:
        records = iter(loaded.get(method.name, ()))
        for delegate in method.delegates:
            if delegate.id != _native.BACKEND_NAME:
                continue
            payload = bytes(data[delegate.payload_offset : delegate.payload_offset + delegate.payload_size])
            doc = _document(delegate, payload)
            # The plugin records TensorRTBackend delegates in the order it initializes them: the file's order.
            record = next(records, None)
            if record is not None:
                doc["provider"] = record.get("provider", "")
                if record.get("error"):
                    doc["error"] = record["error"]
            result.append(delegate_info(method.name, doc))
    return result


def _document(delegate: pte.PteDelegate, payload: bytes) -> dict[str, Any]:
    """The C API's delegate record, as far as the file tells it."""
    doc: dict[str, Any] = {
        "backend": delegate.id,
        "provider": "",
        "compile_specs": [_spec_record(spec.key, spec.value) for spec in delegate.compile_specs],
    }
    try:
        doc["blob"] = _native.describe_blob(payload)
    except Error as exc:
        doc["error"] = str(exc)
    return doc


def _spec_record(key: str, value: bytes) -> dict[str, str | None]:
    try:
        text = value.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    return {"key": key, "value": text if text is not None and text.isprintable() else None, "value_hex": value.hex()}


__all__ = ["describe_delegates"]
