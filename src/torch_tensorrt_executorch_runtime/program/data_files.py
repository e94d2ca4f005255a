"""Finding the .ptd files a program needs when the caller names none.

A .pte records the keys of the constants it keeps outside itself, not the
files that hold them. Looked for in the .pte's folder, in this order:

1. `<stem>.ptd` (what a one-file export writes), always when present;
2. any other `*.ptd` there holding a key the program needs but 1. lacks;
3. the fixed names some delegates use (`aoti_cuda_blob.ptd` for CudaBackend).

If a needed key is in none of them, `MissingDataError` names the keys and the
files that were read. Keys a delegate looks up from inside its own payload are
invisible to this search: pass `data_path=` for those.
"""

from __future__ import annotations

import logging
from pathlib import Path

from .. import pte
from ..errors import InvalidProgramError, MissingDataError
from .opened_file import OpenedFile

logger = logging.getLogger("torch_tensorrt_executorch_runtime")

DELEGATE_DATA_FILES = {"CudaBackend": ("aoti_cuda_blob.ptd",)}


def _program_needs(program: Path, opened: OpenedFile | None) -> tuple[set[str], set[str]] | None:
    """(external keys, delegate ids) of the program, or None if it cannot be read here."""
    try:
        if opened is not None:
            info = opened.read_unchanged(lambda data: pte.read_program(data, payloads=False))
        else:
            info = pte.read_program(program, payloads=False)
    except (pte.SchemaNotGeneratedError, InvalidProgramError) as exc:
        # The C API reports a corrupt program with its own message.
        logger.debug("not looking for .ptd files of %s: %s", program, exc)
        return None
    delegate_ids = {d.id for method in info.methods for d in method.delegates}
    return set(info.external_constants), delegate_ids


def find_data_files(program: Path, opened: OpenedFile | None = None) -> list[Path]:
    """The .ptd files beside `program` that it needs (see the module documentation).

    opened: the program file as `load` holds it open, read instead of the path."""
    folder = program.parent
    stem_file = folder / f"{program.stem}.ptd"
    chosen = [stem_file] if stem_file.is_file() else []
    needs = _program_needs(program, opened)
    if needs is None:
        return chosen
    needed, delegate_ids = needs
    for delegate_id in sorted(delegate_ids):
        for name in DELEGATE_DATA_FILES.get(delegate_id, ()):
            candidate = folder / name
            if candidate.is_file() and candidate not in chosen:
                chosen.append(candidate)
    if not needed:
        return chosen
    covered: set[str] = set()
    read: list[str] = []
    for candidate in chosen + sorted(p for p in folder.glob("*.ptd") if p not in chosen):
        try:
            keys = pte.ptd_keys(candidate)
        except (OSError, InvalidProgramError) as exc:
            logger.warning("skipping %s while looking for the data of %s: %s", candidate, program.name, exc)
            continue
        read.append(candidate.name)
        new = (keys & needed) - covered
        if new and candidate not in chosen:
            chosen.append(candidate)
        covered |= keys & needed
    missing = sorted(needed - covered)
    if missing:
        shown = ", ".join(f"'{k}'" for k in missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        looked = ", ".join(read) if read else "no .ptd files"
        raise MissingDataError(
            f"{program.name} keeps {len(missing)} constant(s) in external data ({shown}) that no .ptd beside it "
            f"holds (read: {looked} in {folder}). Pass data_path= with the .ptd files written at export."
        )
    return chosen
