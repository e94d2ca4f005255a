"""The provider: which plans it takes, on which device, through which module; and registering it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ... import _native
from ..._plan_magic import is_test_engine_plan
from ...errors import ExecutionError, NoDeviceError, NotAcceptedError
from ..types import EngineLoadOptions
from .engine import TensorRTEngine
from .modules import ModuleImporter
from .runtime_pool import RuntimePool
from .tensorrt_logger import TensorRTLog

PROVIDER_NAME = "tensorrt-python"


class TensorRTProvider:
    """Engine provider over TensorRT's Python API (see the package docstring)."""

    def __init__(
        self,
        modules: Sequence[str] | None = None,
        *,
        device_count: Callable[[], int] | None = None,
        synchronize: Callable[[], None] | None = None,
        device_memory: Callable[[int], Any] | None = None,
    ):
        self._modules = ModuleImporter(modules)
        self._device_count = device_count
        self._synchronize = synchronize
        # Makes the memory a data-dependent output gets when the engine asks for more than the
        # planned bound: called with a device id, returns an object with reserve(nbytes) -> address
        # and free() (_native.DeviceBlock).
        self.device_memory: Callable[[int], Any] = device_memory or _native.DeviceBlock
        self.tensorrt_log = TensorRTLog()
        self._runtimes = RuntimePool(self.tensorrt_log)

    def _cuda_devices(self) -> int:
        if self._device_count is not None:
            return int(self._device_count())
        return _native.cuda_device_count()

    def synchronize(self) -> None:
        """Wait for the device's work (the one-time profile switches at load)."""
        if self._synchronize is not None:
            self._synchronize()
        else:
            _native.synchronize_current_context()

    def describe_runtime(self) -> str:
        """Which TensorRT Python modules this provider would use (none imported)."""
        return self._modules.describe()

    def create_execution_context(self, engine: TensorRTEngine, options: EngineLoadOptions) -> TensorRTEngine:
        """Another engine object on what `engine` deserialized: one copy of the weights per plan and
        device however many programs load it (the backend's share_engines)."""
        return engine.share(options)

    def deserialize(self, plan: memoryview, device_id: int, options: EngineLoadOptions) -> TensorRTEngine:
        if is_test_engine_plan(plan):
            raise NotAcceptedError("a test-engine plan is not a TensorRT plan")
        count = self._cuda_devices()
        if count <= 0:
            raise NoDeviceError(
                "no CUDA device: TensorRTBackend needs an NVIDIA GPU and driver to run TensorRT engines "
                "(the TensorRT runtime is not created without one)"
            )
        if device_id >= count:
            raise NoDeviceError(f"the engine wants CUDA device {device_id}, but this process sees {count}")
        attempts = []
        for name, module in self._modules.load():
            runtime = self._runtimes.get(name, module, device_id)
            with runtime.lock, self.tensorrt_log.collect_errors() as errors:
                runtime.apply(name, options, self._runtimes.plugin_libraries)
                engine = runtime.trt.deserialize_cuda_engine(plan)
            if engine is not None:
                return TensorRTEngine(name, module, engine, options, self)
            version = getattr(module, "__version__", "?")
            reason = errors[-1] if errors else "no reason given"
            if not options.engine_host_code_allowed:
                reason += " (engine host code is refused: load option engine_host_code_allowed=False)"
            attempts.append(f"{name} {version}: {reason}")
        raise ExecutionError(
            "no installed TensorRT runtime could deserialize the engine ("
            + "; ".join(attempts)
            + "). Engines load only under the TensorRT minor version that built them unless built "
            "version-compatible, and TensorRT-RTX engines only with tensorrt_rtx"
        )


def register(modules: Sequence[str] | None = None) -> str:
    """Register the Python TensorRT provider (once) and return its name."""
    from .. import providers, register_provider

    if PROVIDER_NAME not in providers():
        register_provider(
            TensorRTProvider(modules), name=PROVIDER_NAME, memory="device", capturable=True, kind="python"
        )
    return PROVIDER_NAME
