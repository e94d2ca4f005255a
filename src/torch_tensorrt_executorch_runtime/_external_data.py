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
import struct
from pathlib import Path

from .errors import InvalidProgramError, MissingDataError

logger = logging.getLogger("torch_tensorrt_executorch_runtime")

PTD_IDENTIFIER = b"FT01"
PTD_HEADER_MAGIC = b"FH01"
_PTD_HEADER = struct.Struct("<4sIQQQQ")  # magic, length, flatbuffer offset/size, segment base/size
DELEGATE_DATA_FILES = {"CudaBackend": ("aoti_cuda_blob.ptd",)}


def ptd_keys(path: Path) -> set[str]:
    """Named-data keys stored in a .ptd (FlatTensor) file, reading only its flatbuffer."""
    from flatbuffers.table import Table

    with open(path, "rb") as handle:
        head = handle.read(8 + _PTD_HEADER.size)
        if len(head) < 8 + _PTD_HEADER.size or head[4:8] != PTD_IDENTIFIER or head[8:12] != PTD_HEADER_MAGIC:
            raise InvalidProgramError(f"{path} is not an ExecuTorch data file (.ptd): no FT01/FH01 header")
        _, _, offset, size, _, _ = _PTD_HEADER.unpack_from(head, 8)
        handle.seek(0, 2)
        if offset + size > handle.tell():
            raise InvalidProgramError(f"{path} is truncated: its flatbuffer ends past the end of the file")
        handle.seek(0)
        buffer = handle.read(offset + size)
    try:
        root = Table(buffer, struct.unpack_from("<I", buffer, 0)[0])
        # FlatTensor.named_data is field 2 (vtable slot 8); NamedData.key field 0 (slot 4).
        vector = root.Offset(8)
        if vector == 0:
            return set()
        start, count = root.Vector(vector), root.VectorLen(vector)
        keys = set()
        for i in range(count):
            entry = Table(buffer, root.Indirect(start + 4 * i))
            key = entry.Offset(4)
            if key:
                keys.add(entry.String(key + entry.Pos).decode("utf-8"))
        return keys
    except (IndexError, struct.error, UnicodeDecodeError) as exc:
        raise InvalidProgramError(f"{path} is a corrupt .ptd: {exc}") from exc


def _program_needs(pte: Path):
    """(external keys, delegate ids) of the program, or None if it cannot be read here."""
    from . import _pte_reader

    try:
        info = _pte_reader.read_program(pte, payloads=False)
    except (_pte_reader.SchemaNotGeneratedError, InvalidProgramError) as exc:
        # The C API reports a corrupt program with its own message.
        logger.debug("not looking for .ptd files of %s: %s", pte, exc)
        return None
    delegate_ids = {d.id for method in info.methods for d in method.delegates}
    return set(info.external_constants), delegate_ids


def find_data_files(pte: Path) -> list[Path]:
    folder = pte.parent
    stem_file = folder / f"{pte.stem}.ptd"
    chosen = [stem_file] if stem_file.is_file() else []
    needs = _program_needs(pte)
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
            keys = ptd_keys(candidate)
        except (OSError, InvalidProgramError) as exc:
            logger.warning("skipping %s while looking for the data of %s: %s", candidate, pte.name, exc)
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
            f"{pte.name} keeps {len(missing)} constant(s) in external data ({shown}) that no .ptd beside it "
            f"holds (read: {looked} in {folder}). Pass data_path= with the .ptd files written at export."
        )
    return chosen
