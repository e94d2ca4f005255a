"""scripts/ci/check-layers.py finds what it exists to find, in a tree made for each case."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "ci" / "check-layers.py"
PACKAGE = "src/torch_tensorrt_executorch_runtime"


def make_tree(root: Path, files: dict[str, str]) -> Path:
    base = {
        f"{PACKAGE}/__init__.py": "from . import runtime\n",
        f"{PACKAGE}/runtime.py": "from .program import program\n",
        f"{PACKAGE}/errors.py": "",
        f"{PACKAGE}/program/__init__.py": "",
        f"{PACKAGE}/program/program.py": "from .. import errors\nfrom ..providers import types\n",
        f"{PACKAGE}/providers/__init__.py": "",
        f"{PACKAGE}/providers/types.py": "from ..errors import *\n",
        f"{PACKAGE}/cli/__init__.py": "from ..program import program\n",
        "cpp/src/common/status.h": "#pragma once\n",
        "cpp/src/backend/backend.h": '#pragma once\n#include "common/status.h"\n',
        "cpp/src/backend/backend.cpp": '#include "backend/backend.h"\n',
    }
    base.update(files)
    for name, text in base.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def check(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), str(root)], capture_output=True, text=True, check=False)


def test_the_repository_keeps_its_layers():
    result = check(ROOT)
    assert result.returncode == 0, result.stderr
    assert "check-layers: ok" in result.stderr


def test_a_tree_in_order_passes(tmp_path):
    result = check(make_tree(tmp_path, {}))
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(
    "files, message",
    [
        # A lower Python layer importing a higher one, at module level.
        ({f"{PACKAGE}/errors.py": "from . import cli\n"}, "(ground) imports torch_tensorrt_executorch_runtime.cli"),
        ({f"{PACKAGE}/providers/types.py": "from ..program import program\n"}, "(providers) imports"),
        # A module no layer names.
        ({f"{PACKAGE}/newthing.py": ""}, "torch_tensorrt_executorch_runtime.newthing is in no layer"),
        # A circle within one layer.
        (
            {
                f"{PACKAGE}/program/a.py": "from . import b\n",
                f"{PACKAGE}/program/b.py": "from . import a\n",
            },
            "Python import circle",
        ),
        # Production code importing the test helpers.
        ({f"{PACKAGE}/testing.py": "", f"{PACKAGE}/runtime.py": "from . import testing\n"}, "imports the test helpers"),
        # A lower C++ layer including a higher one.
        ({"cpp/src/common/status.h": '#pragma once\n#include "backend/backend.h"\n'}, "(common) includes"),
        # The Program API naming a backend header that is not the backend's face.
        (
            {"cpp/src/program/program.cpp": '#include "backend/backend.h"\n'},
            "includes cpp/src/backend/backend.h, which is internal to backend",
        ),
    ],
    ids=["python-up", "providers-up", "no-layer", "circle", "testing", "cpp-up", "cpp-face"],
)
def test_each_violation_is_named(tmp_path, files, message):
    result = check(make_tree(tmp_path, files))
    assert result.returncode == 1, result.stderr
    assert message in result.stderr, result.stderr


def test_the_backends_face_is_open_to_the_program_api(tmp_path):
    face = {
        "cpp/src/backend/tensorrt_backend.h": "#pragma once\n",
        "cpp/src/backend/load_options.h": "#pragma once\n",
        "cpp/src/program/program.cpp": '#include "backend/tensorrt_backend.h"\n#include "backend/load_options.h"\n',
        "cpp/src/c_api/c_api.cpp": '#include "backend/backend.h"\n',
    }
    result = check(make_tree(tmp_path, face))
    assert result.returncode == 0, result.stderr


def test_imports_inside_functions_are_not_edges(tmp_path):
    # They run after every module has loaded: the way a lower layer reaches up when it must.
    result = check(make_tree(tmp_path, {f"{PACKAGE}/errors.py": "def later():\n    from . import cli\n"}))
    assert result.returncode == 0, result.stderr
