"""Inputs the fuzzers found (tests/fuzz/regressions/), replayed as tests.

program/: .pte files that crashed the process when loaded through the
Program C API (ExecuTorch dereferenced optional flatbuffer fields, or
aborted on an unknown or quantized dtype). program-with-data/: a .pte and
the .ptd given with it (same stem), whose .ptd crashed ExecuTorch's unverified
data-file reader (missing lists, offsets out of the file, an empty
flatbuffer, an unknown dtype, a segment shorter than its tensor). Each must
now be refused with InvalidProgramError, from a buffer and from a file, in a
fresh interpreter (a crash fails the case, not the session), which then
still runs a good program.
pte-reader/: .pte files that made inspect's reader raise something other
than PteFormatError, or a message on more than one line.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

REGRESSIONS = Path(__file__).resolve().parent.parent / "fuzz" / "regressions"
PROGRAM_CASES = sorted((REGRESSIONS / "program").glob("*.pte"))
DATA_CASES = sorted((REGRESSIONS / "program-with-data").glob("*.pte"))
READER_CASES = sorted((REGRESSIONS / "pte-reader").glob("*.pte"))


REPLAY = """
import pathlib
import numpy as np
import torch_tensorrt_executorch_runtime as tte
tte.register_provider_library({provider!r})
pte, ptd = pathlib.Path({pte!r}), {ptd!r}
for source in ("buffer", "file"):
    data = [pathlib.Path(ptd).read_bytes() if source == "buffer" else ptd] if ptd else []
    try:
        with tte.load(pte.read_bytes() if source == "buffer" else pte, data_path=data) as program:
            for name in program.method_names:
                program.load_method(name)
                inputs = [np.zeros(v.shape, dtype=np.float32) for v in program.method(name).inputs]
                program.run(inputs, name)
        print(source, "ran")
    except tte.errors.InvalidProgramError as exc:
        print(source, "refused:", exc)
with tte.load({good!r}) as program:
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    (y,) = program.forward(x)
    assert (y == x + 1).all()
print("good program ran")
"""


@pytest.mark.parametrize("case", PROGRAM_CASES + DATA_CASES, ids=[p.stem for p in PROGRAM_CASES + DATA_CASES])
def test_program_regression_is_refused(run_python, host_provider_file, packed, case: Path):
    ptd = case.with_suffix(".ptd")
    result = run_python(
        REPLAY.format(provider=str(host_provider_file), pte=str(case), ptd=str(ptd) if ptd.exists() else None,
                      good=str(packed["add_one"]))
    )
    assert result.returncode == 0, f"exit {result.returncode}\n{result.stderr}"
    lines = result.stdout.strip().splitlines()
    assert lines[0].startswith("buffer refused:") and "damaged" in lines[0], lines
    assert lines[1].startswith("file refused:") and "damaged" in lines[1], lines
    assert lines[2] == "good program ran"


def _fuzz_module():
    path = Path(__file__).resolve().parent.parent / "fuzz" / "fuzz_pte_reader.py"
    spec = importlib.util.spec_from_file_location("fuzz_pte_reader", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("case", READER_CASES, ids=[p.stem for p in READER_CASES])
def test_pte_reader_regression(case: Path):
    from torch_tensorrt_executorch_runtime import pte

    data = case.read_bytes()
    _fuzz_module().check_one(pte, data)
    with pytest.raises(pte.PteFormatError) as raised:
        pte.read_program(data)
    assert str(raised.value).isprintable()


def test_regression_corpus_is_present():
    assert len(PROGRAM_CASES) >= 6 and len(DATA_CASES) >= 6 and len(READER_CASES) >= 4
