"""TensorRT-RTX's runtime cache (load option runtime_cache_path): read at load, written at close.

The kernels TensorRT-RTX compiles for this GPU at run time are kept in a file
so that the next process starts with them. Other modules keep no runtime
cache; for them the option is ignored with a message.
"""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
from typing import Any

logger = logging.getLogger("torch_tensorrt_executorch_runtime")


class RuntimeCache:
    """The runtime cache of one engine object, kept at `path` (None: no cache)."""

    def __init__(self, path: str | None):
        self.path = path
        self._cache: Any = None

    def runtime_config(self, engine: Any, module_name: str) -> Any:
        """A runtime config carrying the cache read from `path`, for create_execution_context; None where
        there is no path or the module keeps no runtime cache."""
        path = self.path
        create = getattr(engine, "create_runtime_config", None)
        if not path or create is None:
            if path:
                logger.info("runtime_cache_path ignored: %s keeps no runtime cache", module_name)
            return None
        config = create()
        cache = config.create_runtime_cache()
        try:
            with open(path, "rb") as file:
                if not cache.deserialize(file.read()):
                    logger.warning(
                        "runtime cache %s does not fit this TensorRT-RTX, GPU or driver; starting anew", path
                    )
        except FileNotFoundError:
            pass
        config.set_runtime_cache(cache)
        self._cache = cache
        return config

    def save(self) -> None:
        """Write the cache to `path` (once; a failure is logged, never raised: the engine is closing)."""
        cache, path = self._cache, self.path
        self._cache = None
        if cache is None or not path:
            return
        temporary = None
        try:
            data = cache.serialize()
            # Unique per engine and process (engines of one process may close
            # at once with the same path), in the cache's folder so the
            # replace stays on one filesystem.
            folder, name = os.path.split(os.path.abspath(path))
            descriptor, temporary = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder)
            with os.fdopen(descriptor, "wb") as file:
                file.write(memoryview(data))
            os.replace(temporary, path)  # atomic: a reader never sees half a cache
            temporary = None
        except OSError as exc:
            logger.warning("could not write the runtime cache %s: %s", path, exc)
        finally:
            if temporary is not None:
                with contextlib.suppress(OSError):
                    os.unlink(temporary)
