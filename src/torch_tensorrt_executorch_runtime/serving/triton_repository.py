"""A Triton model repository from a `.pte` (`torch-tensorrt-executorch triton-repo`).

    OUT_DIR/NAME/config.pbtxt         from the method's signature (triton_config)
    OUT_DIR/NAME/1/model.py           imports triton_model.TritonPythonModel
    OUT_DIR/NAME/1/PROGRAM.pte        the program, and the .ptd files it needs

The package must be installed in the Python backend's environment (the
interpreter the stub runs); model.py holds no logic of its own, so a
repository keeps working across package updates.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Sequence
from pathlib import Path

from ..program import load
from .served_program import register_provider_libraries
from .signature import SignatureError, method_signature
from .triton_config import config_pbtxt

MODEL_PY = '''"""Triton Python backend model: an ExecuTorch TensorRT program (written by
torch-tensorrt-executorch triton-repo; the package must be installed where the
Python backend runs)."""

from torch_tensorrt_executorch_runtime.serving.triton_model import TritonPythonModel

__all__ = ["TritonPythonModel"]
'''

# Triton's model names become folder names and URL path parts.
_MODEL_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")
VERSION = "1"


def instance_kind(provider: str | None, kind: str | None = None) -> str:
    """KIND_CPU for a provider that runs on the host (its name says so: test-host), else KIND_GPU;
    `kind` ("cpu" or "gpu") decides when given."""
    if kind is not None:
        if kind not in ("cpu", "gpu"):
            raise ValueError(f"instance kind must be cpu or gpu, got {kind!r}")
        return f"KIND_{kind.upper()}"
    return "KIND_CPU" if provider is not None and provider.endswith("-host") else "KIND_GPU"


def write_triton_repository(
    program_path: str | os.PathLike,
    out_dir: str | os.PathLike,
    name: str,
    *,
    method: str = "forward",
    instances: int = 1,
    provider: str | None = None,
    provider_libraries: Sequence[str | os.PathLike] = (),
    max_batch: int = 0,
    kind: str | None = None,
) -> Path:
    """Write the model `name` into the repository `out_dir`; returns the model's folder."""
    if not _MODEL_NAME.match(name):
        raise ValueError(f"model name {name!r}: Triton model names are letters, digits, '_', '.' and '-'")
    program_path = Path(program_path)
    libraries = [str(Path(p).resolve()) for p in provider_libraries]
    register_provider_libraries(libraries, provider)
    with load(program_path) as program:
        signature = method_signature(program, program_path, method)
        data_paths = list(program.data_paths)
    if max_batch:
        problem = signature.batch_problem(max_batch)
        if problem is not None:
            raise SignatureError(f"cannot batch requests up to {max_batch}: {problem}")

    model_dir = Path(out_dir) / name
    version_dir = model_dir / VERSION
    version_dir.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(program_path, version_dir / program_path.name)
    for data in data_paths:
        shutil.copyfile(data, version_dir / Path(data).name)
    (version_dir / "model.py").write_text(MODEL_PY)
    (model_dir / "config.pbtxt").write_text(
        config_pbtxt(
            name,
            signature,
            program_file=program_path.name,
            instances=instances,
            kind=instance_kind(provider, kind),
            max_batch=max_batch,
            provider=provider,
            provider_libraries=libraries,
        )
    )
    return model_dir
