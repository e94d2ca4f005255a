"""TensorRT runtimes: one per module and CUDA device, and the settings each deserialize needs.

A runtime's settings (engine host code, DLA core, plugin libraries) are
runtime state, not per engine, so each deserialize sets them under the
runtime's lock before it reads the plan.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from ...errors import InvalidArgumentError, NoDeviceError
from ..types import EngineLoadOptions
from .plugin_libraries import PluginLibraries
from .tensorrt_logger import TensorRTLog

logger = logging.getLogger("torch_tensorrt_executorch_runtime")


class Runtime:
    """One TensorRT runtime and the settings its next deserialize needs."""

    def __init__(self, trt_runtime: Any):
        self.trt = trt_runtime
        self.lock = threading.Lock()
        self.dla_core = -1  # the core last set on this runtime; -1: never set (TensorRT's default)

    def apply(self, name: str, options: EngineLoadOptions, plugin_libraries: PluginLibraries) -> None:
        # Version-compatible plans embed the lean runtime as host code, which
        # TensorRT runs only when allowed (NvInferRuntime.h:2139,
        # setEngineHostCodeAllowed, default false); trtexec and Polygraphy
        # allow it on every runtime, full ones included.
        if hasattr(self.trt, "engine_host_code_allowed"):
            self.trt.engine_host_code_allowed = bool(options.engine_host_code_allowed)
        if options.dla_core is not None:
            cores = int(getattr(self.trt, "num_DLA_cores", 0))
            if not 0 <= options.dla_core < cores:
                raise InvalidArgumentError(
                    f"load option dla_core={options.dla_core}: this device has {cores} DLA core(s)"
                    + (" (DLA exists on Jetson AGX/NX modules only)" if cores == 0 else "")
                )
            self.trt.DLA_core = int(options.dla_core)
            self.dla_core = int(options.dla_core)
        elif self.dla_core != -1:
            # Back to TensorRT's default, -1, only after a core was set: the
            # documented range of setDLACore is [0, getNbDlaCores())
            # (NvInferRuntime.h:1867), and -1 is only its initial value (:1865).
            self.trt.DLA_core = -1
            self.dla_core = -1
        if options.plugin_libraries:
            plugin_libraries.load(name, self.trt.get_plugin_registry(), options.plugin_libraries)


class RuntimePool:
    """The runtimes of one provider, made on first use and kept for the provider's life."""

    def __init__(self, log: TensorRTLog):
        self._log = log
        self._lock = threading.Lock()
        self._runtimes: dict[tuple[str, int], Runtime] = {}
        self._plugins_initialized: set[str] = set()
        self.plugin_libraries = PluginLibraries()

    def get(self, name: str, module: Any, device_id: int) -> Runtime:
        """Module `name`'s runtime for CUDA device `device_id`, made on first use."""
        key = (name, device_id)
        with self._lock:
            runtime = self._runtimes.get(key)
            if runtime is not None:
                return runtime
            trt_logger = self._log.logger_for(name, module)
            # TensorRT's own plugins, as Polygraphy registers them before
            # every deserialize (the full and RTX modules only have them).
            init_plugins = getattr(module, "init_libnvinfer_plugins", None)
            if init_plugins is not None and name not in self._plugins_initialized:
                self._plugins_initialized.add(name)
                if not init_plugins(trt_logger, ""):
                    logger.warning("%s could not register TensorRT's plugins", name)
            trt_runtime = module.Runtime(trt_logger)
            if trt_runtime is None:
                raise NoDeviceError(f"{name}.Runtime could not be created on CUDA device {device_id}")
            runtime = Runtime(trt_runtime)
            self._runtimes[key] = runtime
            return runtime
