"""`torch-tensorrt-executorch inspect`: what a .pte holds and whether it can run here.

The program is read with the flatbuffer reader (`pte`: no torch, no GPU, no
delegate initialized), TensorRTBackend blobs with the plugin's reader
(tte_blob_describe_json). Whether it runs here is answered with static checks
(target platform, CUDA devices, a TensorRT runtime for real engines, a test
provider for test plans) and then, unless told not to, by loading every
method: every provider checks for a usable device before touching TensorRT,
so the attempt is safe anywhere.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TypedDict

from .. import _activation, _logging, _native, pte
from .._native import BACKEND_NAME
from .._plan_magic import TEST_ENGINE_MAGIC
from .._platform import this_platform
from ..errors import DelegateCompatibilityError, Error
from ..program import load
from ..program.data_files import find_data_files
from ..providers import tensorrt_python


def _spec_value(value: bytes) -> str:
    try:
        text = value.decode("utf-8")
    except UnicodeDecodeError:
        return "0x" + value.hex()
    return text if text.isprintable() else "0x" + value.hex()


def _engine_kind(payload: bytes, blob: dict) -> str:
    offset = blob.get("engine_offset")
    if isinstance(offset, int) and payload[offset : offset + len(TEST_ENGINE_MAGIC)] == TEST_ENGINE_MAGIC:
        return "test"
    return "tensorrt"


def _tensor(value: pte.PteValue) -> dict:
    entry = {"index": value.index, "kind": value.kind}
    if value.tensor is not None:
        t = value.tensor
        entry.update(
            dtype=t.dtype,
            shape=list(t.sizes),
            dynamism=t.dynamism,
            device=t.device,
            memory_planned=t.memory_planned,
        )
    return entry


def collect(path: Path, *, try_load: bool = True) -> dict:
    info = pte.read_program(path)
    plugin_error = None
    try:
        _activation.require()
    except DelegateCompatibilityError as exc:
        plugin_error = str(exc)

    report: dict = {
        "ok": True,
        "path": str(path),
        "file_size": info.file_size,
        "schema_version": info.version,
        "segments": len(info.segments),
        "named_data": [entry.key for entry in info.named_data],
        "external_constants": list(info.external_constants),
        "methods": [],
    }
    tensorrt_delegates = []
    for method in info.methods:
        delegates = []
        for delegate in method.delegates:
            entry = {
                "index": delegate.index,
                "backend": delegate.id,
                "payload_size": delegate.payload_size,
                "location": delegate.location,
                "compile_specs": {spec.key: _spec_value(spec.value) for spec in delegate.compile_specs},
            }
            if delegate.id == BACKEND_NAME:
                if plugin_error is None:
                    try:
                        blob = _native.describe_blob(delegate.payload or b"")
                        entry["blob"] = blob
                        entry["engine_size"] = blob.get("engine_size")
                        entry["engine_kind"] = _engine_kind(delegate.payload or b"", blob)
                    except Error as exc:
                        entry["blob_error"] = str(exc)
                else:
                    entry["blob_error"] = f"the plugin is not loaded: {plugin_error}"
                tensorrt_delegates.append((method.name, entry))
            delegates.append(entry)
        report["methods"].append(
            {
                "name": method.name,
                "placement": method.placement,
                "inputs": [_tensor(v) for v in method.inputs],
                "outputs": [_tensor(v) for v in method.outputs],
                "operators": list(method.operators),
                "delegates": delegates,
            }
        )
    report["runnable"] = _runnable(path, plugin_error, tensorrt_delegates, info, try_load)
    return report


class _Check(TypedDict):
    """One line of the `runnable` verdict."""

    check: str
    ok: bool
    detail: str


def _runnable(path: Path, plugin_error: str | None, delegates, info, try_load: bool) -> dict:
    checks: list[_Check] = []

    def check(name: str, ok: bool, detail: str) -> None:
        checks.append({"check": name, "ok": ok, "detail": detail})

    platform = this_platform()
    devices = _native.cuda_device_count() if plugin_error is None else 0
    if plugin_error is not None:
        check("plugin", False, plugin_error)
    for method, entry in delegates:
        blob = entry.get("blob")
        where = f"{method} delegate {entry['index']}"
        if blob is None:
            check(f"{where} blob", False, entry.get("blob_error", "unreadable"))
            continue
        target = blob.get("target_platform", "")
        check(
            f"{where} target platform",
            target in ("", "unknown", platform),
            f"built for {target or 'unspecified'}, this machine is {platform}",
        )
        if entry.get("engine_kind") == "test":
            check(f"{where} provider", True, "a test-engine plan: runs on the test providers (test-host, test-cuda)")
            continue
        device_id = int(blob.get("device_id", 0))
        check(
            f"{where} CUDA device",
            device_id < devices,
            f"needs cuda:{device_id}; this process sees {devices} CUDA device(s)"
            + ("" if devices else " (no GPU or no driver)"),
        )
        installed = tensorrt_python.installed_modules()
        providers = _native.provider_names() if plugin_error is None else []
        native = _activation.native_providers(providers)
        has_runtime = bool(native) or bool(installed)
        check(
            f"{where} TensorRT runtime",
            has_runtime,
            (f"native providers: {', '.join(native)}" if native else f"Python modules: {', '.join(installed)}")
            if has_runtime
            else tensorrt_python.INSTALL_HINT,
        )
    verdict: dict[str, Any] = {"checks": checks, "platform": platform, "cuda_devices": devices}
    if try_load and plugin_error is None:
        verdict["load"] = _try_load(path, info)
    failed = [c for c in checks if not c["ok"]]
    load = verdict.get("load")
    if load is not None:
        verdict["can_run"] = load["ok"]
        verdict["reason"] = load.get("error") or ("; ".join(c["detail"] for c in failed) if failed else "")
    else:
        verdict["can_run"] = not failed
        verdict["reason"] = "; ".join(c["detail"] for c in failed)
    return verdict


def _try_load(path: Path, info) -> dict:
    # The outcome goes into the report; the plugin's own log lines about it
    # would only repeat it (unless debugging).
    level = _native.log_level()
    if _logging.get_log_level() != "debug":
        _native.set_log_level("off")
    try:
        return _load_methods(path, info)
    finally:
        _native.set_log_level(level)


def _load_methods(path: Path, info) -> dict:
    try:
        data_files = find_data_files(path)
        program = load(path, data_path=data_files or None)
    except (Error, OSError) as exc:
        return {"ok": False, "error": str(exc)}
    try:
        for name in info.method_names:
            try:
                program.load_method(name)
            except Error as exc:
                # The plugin's message names the method ("cannot load method 'forward': ...").
                reason = str(exc)
                return {"ok": False, "error": reason if f"'{name}'" in reason else f"method '{name}': {reason}"}
        return {"ok": True, "data_files": [str(p) for p in data_files]}
    finally:
        program.close()


def _dims(entry: dict) -> str:
    if "dtype" not in entry:
        return entry["kind"]
    where = entry["device"] + ("" if entry["memory_planned"] else ", not planned")
    dynamic = "" if entry["dynamism"] == "static" else f", {entry['dynamism']}"
    return f"{entry['dtype']}{entry['shape']} ({where}{dynamic})"


def format_text(report: dict) -> str:
    lines = [f"{report['path']}: {report['file_size']} bytes, {len(report['methods'])} method(s)"]
    if report["external_constants"]:
        lines.append(f"external constants (.ptd): {len(report['external_constants'])}")
    for method in report["methods"]:
        lines.append(f"method '{method['name']}' (I/O placement: {method['placement']})")
        for role in ("inputs", "outputs"):
            for i, entry in enumerate(method[role]):
                lines.append(f"  {role[:-1]} {i}: {_dims(entry)}")
        for delegate in method["delegates"]:
            head = f"  delegate {delegate['index']}: {delegate['backend']}, {delegate['payload_size']} bytes"
            blob = delegate.get("blob")
            if blob is not None:
                head += (
                    f", {blob.get('magic')}, {delegate.get('engine_kind')} engine of {blob.get('engine_size')} bytes"
                    f", device {blob.get('device_id')}, platform {blob.get('target_platform') or 'unspecified'}"
                    # The blob's hardware_compatible: whether TensorRT built the engine with a
                    # hardware-compatibility level (runs on later GPU architectures too), not a
                    # verdict on this machine (the checks below are).
                    f", TensorRT hardware-compatibility flag: {'on' if blob.get('hardware_compatible') else 'off'}"
                )
            lines.append(head)
            for spec, value in delegate["compile_specs"].items():
                lines.append(f"    compile spec {spec} = {value}")
            if blob is not None:
                for binding in blob.get("io_bindings", ()):
                    role = "in " if binding.get("is_input") else "out"
                    lines.append(f"    {role} '{binding.get('name')}'")
                for alias in blob.get("aliased_io", ()):
                    lines.append(f"    alias {alias.get('output')} -> {alias.get('input')} ({alias.get('kind')})")
            if "blob_error" in delegate:
                lines.append(f"    blob: {delegate['blob_error']}")
    runnable = report["runnable"]
    for item in runnable["checks"]:
        lines.append(f"  [{'ok' if item['ok'] else 'NO'}] {item['check']}: {item['detail']}")
    if runnable["can_run"]:
        lines.append("can run here: yes")
    else:
        lines.append(f"can run here: no: {runnable['reason'] or 'see the checks above'}")
    return "\n".join(lines)


def command_inspect(args) -> int:
    report = collect(Path(args.model), try_load=not args.no_load)
    print(json.dumps(report, indent=2, default=str) if args.json else format_text(report))
    return 0


def add_parser(sub) -> None:
    inspect = sub.add_parser("inspect", help="describe a .pte and say whether it can run here")
    inspect.add_argument("model", type=Path)
    inspect.add_argument("--json", action="store_true")
    inspect.add_argument("--no-load", action="store_true", help="only static checks; do not try to load the methods")
    inspect.set_defaults(handler=command_inspect)
