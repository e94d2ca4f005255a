"""`torch_tensorrt.load(path, format="executorch")` calls `runtime.load(path)`.

Kept at the module path Torch-TensorRT 2.14 imports, with upstream 0.1.0's
signature; it returns the same `Program` as `torch_tensorrt_executorch_runtime.load`.
"""

from __future__ import annotations

import os
from typing import Any

from .program import Program
from .program import load as _load


def load(path: str | os.PathLike[str], **kwargs: Any) -> Program:
    """Open the ExecuTorch program at `path` (keyword arguments as in `load()`)."""
    return _load(path, **kwargs)


__all__ = ["Program", "load"]
