"""One log-level switch for this package's Python logger and the plugin.

`set_log_level("info")` (or TORCH_TENSORRT_EXECUTORCH_LOG_LEVEL=info at import)
sets the `torch_tensorrt_executorch_runtime` logger, the plugin's own level
(which also gates what it forwards from ExecuTorch), and the severity the
Python TensorRT provider passes on from TensorRT's logger.
"""

from __future__ import annotations

import logging
import os

from . import _native

LOG_LEVEL_ENV = "TORCH_TENSORRT_EXECUTORCH_LOG_LEVEL"
logger = logging.getLogger("torch_tensorrt_executorch_runtime")

# name (the plugin's too) -> Python logging level
LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "off": logging.CRITICAL + 10,
}
_ALIASES = {"warn": "warning", "verbose": "debug", "none": "off", "quiet": "off", "critical": "error"}


def _parse(level: str | int) -> str:
    if isinstance(level, int) and not isinstance(level, bool):
        for name, python_level in LEVELS.items():
            if level <= python_level:
                return name
        return "off"
    key = str(level).strip().lower()
    key = _ALIASES.get(key, key)
    if key not in LEVELS:
        raise ValueError(f"unknown log level '{level}'; expected one of {', '.join(LEVELS)}")
    return key


def set_log_level(level: str | int) -> None:
    """Set the level of this package's logger and of the plugin (debug, info, warning, error, off)."""
    name = _parse(level)
    logger.setLevel(LEVELS[name])
    if _native.is_loaded():
        _native.set_log_level(name)


def get_log_level() -> str:
    """The effective level of this package's logger, as a name."""
    return _parse(logger.getEffectiveLevel())


def apply_environment() -> None:
    value = os.environ.get(LOG_LEVEL_ENV)
    if value:
        try:
            set_log_level(value)
        except ValueError as exc:
            logger.warning("ignoring %s: %s", LOG_LEVEL_ENV, exc)
