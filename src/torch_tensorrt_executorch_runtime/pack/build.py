"""Packing: specs checked and wired (`plan`), lowered by exir (`exir`), written out."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .plan import plan_program
from .specs import PackError

EPILOGUE_BACKENDS = ("xnnpack", "portable")


@dataclass(frozen=True)
class PackedProgram:
    """A packed .pte and the .ptd files it needs ({file name: bytes})."""

    program: bytes
    data_files: Mapping[str, bytes] = field(default_factory=dict)

    def write(self, path: str | os.PathLike) -> list[Path]:
        """Write the .pte to `path` and the .ptd files beside it; returns the paths written."""
        target = Path(path)
        target.write_bytes(self.program)
        written = [target]
        for name, data in self.data_files.items():
            data_path = target.parent / name
            data_path.write_bytes(data)
            written.append(data_path)
        return written


def build_program(
    methods,
    *,
    placement: str | Mapping[str, str] = "host",
    alias_mode: str = "buffer",
    epilogue: Mapping[str, float | Sequence[float]] | None = None,
    epilogue_backend: str = "xnnpack",
    external_constants: bool | str = False,
) -> PackedProgram:
    """Pack in memory: the .pte bytes and the .ptd files it needs.

    external_constants=True names the .ptd "model.ptd" here; pack_program
    names it after the .pte instead.
    """
    plans = plan_program(methods, placement=placement, alias_mode=alias_mode, epilogue=epilogue)
    if epilogue_backend not in EPILOGUE_BACKENDS:
        raise PackError(f"epilogue_backend must be one of {', '.join(EPILOGUE_BACKENDS)}, got {epilogue_backend!r}")
    data_name = _data_name(external_constants, None)
    if data_name is not None and not any(plan.epilogue for plan in plans):
        raise PackError(
            "external_constants needs an epilogue: engines keep their weights inside the plan, "
            "so without one the program has no constants to store in a .ptd"
        )
    from . import exir

    program, data_files = exir.lower(plans, epilogue_backend=epilogue_backend, data_name=data_name)
    return PackedProgram(program=program, data_files=data_files)


def _data_name(external_constants: bool | str, path: str | os.PathLike | None) -> str | None:
    if external_constants is False or external_constants is None:
        return None
    if external_constants is True:
        return Path(path).stem if path is not None else "model"
    if isinstance(external_constants, str) and external_constants and "/" not in external_constants:
        return external_constants.removesuffix(".ptd")
    raise PackError(f"external_constants must be a bool or a file name without folders, got {external_constants!r}")


def pack_program(
    path: str | os.PathLike | None,
    methods,
    *,
    placement: str | Mapping[str, str] = "host",
    alias_mode: str = "buffer",
    epilogue: Mapping[str, float | Sequence[float]] | None = None,
    epilogue_backend: str = "xnnpack",
    external_constants: bool | str = False,
) -> bytes:
    """Pack engines into a .pte; returns its bytes and writes `path` (+ .ptd files) when given.

    methods: a sequence of EngineSpec (the method "forward") or a mapping of
    method name to one. placement may also map method names to placements.
    See the module documentation for alias_mode, epilogue and
    external_constants.
    """
    name = _data_name(external_constants, path)
    packed = build_program(
        methods,
        placement=placement,
        alias_mode=alias_mode,
        epilogue=epilogue,
        epilogue_backend=epilogue_backend,
        external_constants=name if name is not None else False,
    )
    if path is not None:
        packed.write(path)
    return packed.program
