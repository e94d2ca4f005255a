"""Which TensorRT Python modules the provider uses, and importing them.

The order comes from the caller, else TORCH_TENSORRT_EXECUTORCH_TENSORRT_MODULE
(one name, or several separated by commas), else `DEFAULT_MODULES`. Nothing is
imported to answer which are installed; `ModuleImporter` imports each once.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import threading
from collections.abc import Sequence
from types import ModuleType

from ...errors import MissingPackageError

MODULE_ENV = "TORCH_TENSORRT_EXECUTORCH_TENSORRT_MODULE"
DEFAULT_MODULES = ("tensorrt", "tensorrt_lean", "tensorrt_dispatch", "tensorrt_rtx")
PIP_PACKAGES = {
    "tensorrt": "tensorrt-cu13",
    "tensorrt_lean": "tensorrt-lean-cu13",
    "tensorrt_dispatch": "tensorrt-dispatch-cu13",
    "tensorrt_rtx": "tensorrt-rtx-cu13",
}
INSTALL_HINT = (
    "no TensorRT Python runtime is installed: pip install 'torch-tensorrt-executorch-runtime[tensorrt]' "
    "(tensorrt-cu13, any engine of TensorRT 11.1), or [lean] (tensorrt-lean-cu13, version-compatible "
    "engines), or [rtx] (tensorrt-rtx-cu13, TensorRT-RTX engines)"
)


def configured_modules(modules: Sequence[str] | None = None) -> tuple[str, ...]:
    """Module names to try, in order: the argument, else the environment, else the default."""
    if modules:
        return tuple(modules)
    value = os.environ.get(MODULE_ENV, "").strip()
    if value:
        return tuple(part.strip() for part in value.split(",") if part.strip())
    return DEFAULT_MODULES


def installed_modules(modules: Sequence[str] | None = None) -> list[str]:
    """Which of the configured modules are installed (found without importing them)."""
    found = []
    for name in configured_modules(modules):
        try:
            if importlib.util.find_spec(name) is not None:
                found.append(name)
        except (ImportError, ValueError):
            continue
    return found


class ModuleImporter:
    """Imports the configured modules once each, for every thread of one provider."""

    def __init__(self, requested: Sequence[str] | None = None):
        self.requested = tuple(requested) if requested else None
        self._lock = threading.Lock()
        self._modules: dict[str, ModuleType] = {}

    def describe(self) -> str:
        """Which modules would be used (none imported), else what to install."""
        found = installed_modules(self.requested)
        return ("TensorRT Python modules: " + ", ".join(found)) if found else INSTALL_HINT

    def load(self) -> list[tuple[str, ModuleType]]:
        """(name, module) of each installed configured module, in order; MissingPackageError when none imports."""
        names = configured_modules(self.requested)
        loaded = []
        failures = []
        with self._lock:
            for name in names:
                if name in self._modules:
                    loaded.append((name, self._modules[name]))
                    continue
                try:
                    if importlib.util.find_spec(name) is None:
                        continue
                    module = importlib.import_module(name)
                except Exception as exc:  # a broken install names itself below
                    failures.append(f"{name}: {exc}")
                    continue
                self._modules[name] = module
                loaded.append((name, module))
        if not loaded:
            detail = f" (import failed: {'; '.join(failures)})" if failures else ""
            if self.requested or os.environ.get(MODULE_ENV):
                wanted = ", ".join(names)
                packages = " or ".join(PIP_PACKAGES.get(n, n) for n in names)
                raise MissingPackageError(f"TensorRT module {wanted} is not installed: pip install {packages}{detail}")
            raise MissingPackageError(INSTALL_HINT + detail)
        return loaded
