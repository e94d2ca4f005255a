"""Inputs the fuzzers found (tests/fuzz/regressions/), replayed as tests.

program/: .pte files that crashed the process when loaded through the
Program C API (ExecuTorch dereferenced optional flatbuffer fields, or
aborted on an unknown dtype). Each must now be refused with
InvalidProgramError, from a buffer and from a file, and the process must
still run a good program.
pte-reader/: .pte files that made inspect's reader raise something other
than PteFormatError, or a message on more than one line.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

REGRESSIONS = Path(__file__).resolve().parent.parent / "fuzz" / "regressions"
PROGRAM_CASES = sorted((REGRESSIONS / "program").glob("*.pte"))
READER_CASES = sorted((REGRESSIONS / "pte-reader").glob("*.pte"))


def _exercise(tte, program):
    for name in program.method_names:
        program.load_method(name)
        info = program.method(name)
        inputs = [np.zeros(v.shape, dtype=np.float32) for v in info.inputs]
        program.run(inputs, name)


@pytest.mark.parametrize("case", PROGRAM_CASES, ids=[p.stem for p in PROGRAM_CASES])
@pytest.mark.parametrize("source", ["buffer", "file"])
def test_program_regression_is_refused(tte, host_provider, assert_usable, case: Path, source):
    with pytest.raises(tte.errors.InvalidProgramError, match="damaged"):
        program = tte.load(case.read_bytes() if source == "buffer" else case)
        with program:
            _exercise(tte, program)
    assert_usable()


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
    assert len(PROGRAM_CASES) >= 5 and len(READER_CASES) >= 4
