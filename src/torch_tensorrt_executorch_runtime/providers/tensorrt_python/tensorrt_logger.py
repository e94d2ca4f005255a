"""TensorRT's log, forwarded to ours, and the errors a failed call can name.

TensorRT's Python calls answer None or False on failure and say why only
through the logger. `TensorRTLog` forwards every message to the package's
logger and, while a thread is inside `collect_errors()`, keeps that thread's
errors for the exception the call raises. An error collected for a call is
logged at info (its exception carries it), any other at error; an internal
error ("Execution is unrecoverable", NvInferRuntime.h 11.1 :1592) always at
error.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import threading
from collections.abc import Callable, Iterator
from typing import Any

logger = logging.getLogger("torch_tensorrt_executorch_runtime")


class TensorRTLog:
    """One per provider: the TensorRT loggers of its modules and each thread's collected errors."""

    def __init__(self) -> None:
        self._errors = threading.local()
        self._loggers: dict[str, object] = {}
        self._lock = threading.Lock()

    def logger_for(self, name: str, module: Any) -> object:
        """Module `name`'s ILogger (made once; TensorRT keeps a pointer to it, so it lives here)."""
        with self._lock:
            trt_logger = self._loggers.get(name)
            if trt_logger is None:
                trt_logger = _make_logger(module, functools.partial(self.log, name))
                self._loggers[name] = trt_logger
            return trt_logger

    def log(self, module: str, severity: str, message: str) -> None:
        severity = severity.rsplit(".", 1)[-1]  # "Severity.ERROR" where an enum has no .name
        if severity in ("INTERNAL_ERROR", "ERROR"):
            errors = getattr(self._errors, "messages", None)
            if errors is not None:
                errors.append(message)
            collected = errors is not None and severity == "ERROR"
            (logger.info if collected else logger.error)("%s: %s", module, message)
        elif severity == "WARNING":
            logger.warning("%s: %s", module, message)
        elif severity == "INFO":
            logger.info("%s: %s", module, message)
        else:
            logger.debug("%s: %s", module, message)

    @contextlib.contextmanager
    def collect_errors(self) -> Iterator[list[str]]:
        """The errors TensorRT logs on this thread until the block ends, in order."""
        self._errors.messages = []
        try:
            yield self._errors.messages
        finally:
            self._errors.messages = None


def _make_logger(trt: Any, sink: Callable[[str, str], None]) -> object:
    """Module `trt`'s ILogger, handing (severity name, message) to `sink`."""

    class _Logger(trt.ILogger):
        def __init__(self) -> None:
            trt.ILogger.__init__(self)

        def log(self, severity: object, msg: str) -> None:
            name = getattr(severity, "name", str(severity))
            sink(name, msg)

    return _Logger()
