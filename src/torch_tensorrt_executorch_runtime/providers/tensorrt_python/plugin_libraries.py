"""Plugin libraries (load option plugin_libraries), loaded once into each plugin registry."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from ...errors import InvalidArgumentError


class PluginLibraries:
    """The plugin libraries loaded into each plugin registry, which runtimes may share.

    A registry refuses a library whose plugins it already holds ("will fail and return nullptr if any of the
    plugins are already registered", NvInferRuntimeCommon.h:133-134), and the runtimes of two devices can hand
    back the same registry, so a library is loaded once per registry, not once per runtime.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # id(registry) -> (the registry, kept alive so that its id is not reused; the paths loaded into it)
        self._loaded: dict[int, tuple[object, set[str]]] = {}

    def load(self, name: str, registry: Any, paths: Sequence[str]) -> None:
        with self._lock:
            _, loaded = self._loaded.setdefault(id(registry), (registry, set()))
            for path in paths:
                if path in loaded:
                    continue
                if registry.load_library(path) is None:
                    raise InvalidArgumentError(
                        f"{name} could not load plugin library '{path}' (load option plugin_libraries): the file "
                        "is missing, is not a TensorRT plugin library, or registers a plugin already registered"
                    )
                loaded.add(path)
