"""NVTX ranges around enqueue: on with TORCH_TENSORRT_EXECUTORCH_NVTX=1 or `set_nvtx_enabled(True)`.

Ranges come from the `nvtx` package, else `torch.cuda.nvtx`; without either
they turn themselves off with one warning.
"""

from __future__ import annotations

import contextlib
import logging
import os
from contextlib import AbstractContextManager

logger = logging.getLogger("torch_tensorrt_executorch_runtime")

NVTX_ENV = "TORCH_TENSORRT_EXECUTORCH_NVTX"

_nvtx_enabled = os.environ.get(NVTX_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def set_nvtx_enabled(enabled: bool) -> None:
    """Turn NVTX ranges around enqueue on or off."""
    global _nvtx_enabled
    _nvtx_enabled = bool(enabled)


def nvtx_range(name: str) -> AbstractContextManager[object]:
    """A range named `name` while NVTX ranges are on, else a context that does nothing."""
    if not _nvtx_enabled:
        return contextlib.nullcontext()
    try:
        import nvtx

        return nvtx.annotate(name, domain="torch_tensorrt_executorch")
    except ImportError:
        pass
    try:
        import torch.cuda.nvtx as torch_nvtx

        return torch_nvtx.range(name)
    except ImportError:
        logger.warning("NVTX ranges need the nvtx package (pip install nvtx) or torch; turning them off")
        set_nvtx_enabled(False)
        return contextlib.nullcontext()
