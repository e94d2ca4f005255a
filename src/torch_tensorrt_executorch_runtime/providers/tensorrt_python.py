"""The Python TensorRT provider: runs engines through TensorRT's Python API.

Registered at import as `tensorrt-python` when the plugin has no native
TensorRT provider. It needs no TensorRT headers at build time and works with
whichever TensorRT runtime is installed. Modules are tried in this order:

1. `tensorrt`          (pip install tensorrt-cu13): every engine built by its minor version;
2. `tensorrt_lean`     (pip install tensorrt-lean-cu13): version-compatible engines only;
3. `tensorrt_dispatch` (pip install tensorrt-dispatch-cu13): version-compatible engines only;
4. `tensorrt_rtx`      (pip install tensorrt-rtx-cu13): TensorRT-RTX engines.

A plan is given to each installed module in turn until one deserializes it.
Pass `modules=[...]` or set TORCH_TENSORRT_EXECUTORCH_TENSORRT_MODULE (one
name, or several separated by commas) to use other modules or another order.

No TensorRT runtime is ever created without a usable CUDA device: on a machine
without one, creating a runtime and deserializing can crash the process, so
the provider answers "no CUDA device" first.

Set TORCH_TENSORRT_EXECUTORCH_NVTX=1 (or call `set_nvtx_enabled(True)`) for an
NVTX range around every enqueue (through the `nvtx` package, else
`torch.cuda.nvtx`).
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import logging
import os
import threading
from collections.abc import Callable, Sequence

from .. import _dtypes, _native
from ..errors import (
    ExecutionError,
    InvalidArgumentError,
    MissingPackageError,
    NoDeviceError,
    NotAcceptedError,
    NotSupportedError,
)
from ..testing import MAGIC as TEST_ENGINE_MAGIC
from .types import EngineLoadOptions, IoTensor

logger = logging.getLogger("torch_tensorrt_executorch_runtime")

PROVIDER_NAME = "tensorrt-python"
MODULE_ENV = "TORCH_TENSORRT_EXECUTORCH_TENSORRT_MODULE"
NVTX_ENV = "TORCH_TENSORRT_EXECUTORCH_NVTX"
DEFAULT_MODULES = ("tensorrt", "tensorrt_lean", "tensorrt_dispatch", "tensorrt_rtx")
PIP_PACKAGES = {
    "tensorrt": "tensorrt-cu13",
    "tensorrt_lean": "tensorrt-lean-cu13",
    "tensorrt_dispatch": "tensorrt-dispatch-cu13",
    "tensorrt_rtx": "tensorrt-rtx-cu13",
}
# Version-compatible engines embed their own lean runtime, which these
# runtimes must be allowed to run.
HOST_CODE_MODULES = ("tensorrt_lean", "tensorrt_dispatch")

INSTALL_HINT = (
    "no TensorRT Python runtime is installed: pip install 'torch-tensorrt-executorch-runtime[tensorrt]' "
    "(tensorrt-cu13, any engine of TensorRT 11.1), or [lean] (tensorrt-lean-cu13, version-compatible "
    "engines), or [rtx] (tensorrt-rtx-cu13, TensorRT-RTX engines)"
)

_nvtx_enabled = os.environ.get(NVTX_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def set_nvtx_enabled(enabled: bool) -> None:
    """Turn NVTX ranges around enqueue on or off."""
    global _nvtx_enabled
    _nvtx_enabled = bool(enabled)


def _nvtx_range(name: str):
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


def _make_logger(trt, sink: Callable[[str, str], None]):
    class _Logger(trt.ILogger):
        def __init__(self):
            trt.ILogger.__init__(self)

        def log(self, severity, msg):
            name = getattr(severity, "name", str(severity))
            sink(name, msg)

    return _Logger()


class TensorRTProvider:
    """Engine provider over TensorRT's Python API (see the module docstring)."""

    def __init__(
        self,
        modules: Sequence[str] | None = None,
        *,
        device_count: Callable[[], int] | None = None,
        allow_host_code: bool = True,
    ):
        self._requested = tuple(modules) if modules else None
        self._device_count = device_count
        self._allow_host_code = allow_host_code
        self._lock = threading.Lock()
        self._modules: dict[str, object] = {}
        self._runtimes: dict[tuple[str, int], object] = {}
        self._loggers: dict[str, object] = {}
        self._errors = threading.local()

    # TensorRT's logger: forward to ours, and remember errors so that a
    # failed call can say why.
    def _log(self, module: str, severity: str, message: str) -> None:
        if severity in ("INTERNAL_ERROR", "ERROR"):
            errors = getattr(self._errors, "messages", None)
            if errors is not None:
                errors.append(message)
            logger.error("%s: %s", module, message)
        elif severity == "WARNING":
            logger.warning("%s: %s", module, message)
        elif severity == "INFO":
            logger.info("%s: %s", module, message)
        else:
            logger.debug("%s: %s", module, message)

    @contextlib.contextmanager
    def _collect_errors(self):
        self._errors.messages = []
        try:
            yield self._errors.messages
        finally:
            self._errors.messages = None

    def _cuda_devices(self) -> int:
        if self._device_count is not None:
            return int(self._device_count())
        return _native.cuda_device_count()

    def _import(self) -> list[tuple[str, object]]:
        names = configured_modules(self._requested)
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
            if self._requested or os.environ.get(MODULE_ENV):
                wanted = ", ".join(names)
                packages = " or ".join(PIP_PACKAGES.get(n, n) for n in names)
                raise MissingPackageError(f"TensorRT module {wanted} is not installed: pip install {packages}{detail}")
            raise MissingPackageError(INSTALL_HINT + detail)
        return loaded

    def _runtime(self, name: str, module, device_id: int):
        key = (name, device_id)
        with self._lock:
            runtime = self._runtimes.get(key)
            if runtime is not None:
                return runtime
            trt_logger = self._loggers.get(name)
            if trt_logger is None:
                trt_logger = _make_logger(module, lambda s, m, n=name: self._log(n, s, m))
                self._loggers[name] = trt_logger
            runtime = module.Runtime(trt_logger)
            if runtime is None:
                raise NoDeviceError(f"{name}.Runtime could not be created on CUDA device {device_id}")
            if self._allow_host_code and name in HOST_CODE_MODULES and hasattr(runtime, "engine_host_code_allowed"):
                runtime.engine_host_code_allowed = True
            self._runtimes[key] = runtime
            return runtime

    def deserialize(self, plan: memoryview, device_id: int, options: EngineLoadOptions):
        if bytes(plan[: len(TEST_ENGINE_MAGIC)]) == TEST_ENGINE_MAGIC:
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
        for name, module in self._import():
            with self._collect_errors() as errors:
                runtime = self._runtime(name, module, device_id)
                engine = runtime.deserialize_cuda_engine(plan)
            if engine is not None:
                return TensorRTEngine(name, module, engine, options, self)
            version = getattr(module, "__version__", "?")
            reason = errors[-1] if errors else "no reason given"
            attempts.append(f"{name} {version}: {reason}")
        raise ExecutionError(
            "no installed TensorRT runtime could deserialize the engine ("
            + "; ".join(attempts)
            + "). Engines load only under the TensorRT minor version that built them unless built "
            "version-compatible, and TensorRT-RTX engines only with tensorrt_rtx"
        )


class TensorRTEngine:
    """One deserialized engine and its execution context."""

    def __init__(self, module_name: str, trt, engine, options: EngineLoadOptions, provider: TensorRTProvider):
        self._module_name = module_name
        self._trt = trt
        self._engine = engine
        self._provider = provider
        self._apply_weight_streaming(options.weight_streaming_budget)
        with provider._collect_errors() as errors:
            self._context = engine.create_execution_context()
        if self._context is None:
            reason = errors[-1] if errors else "out of device memory?"
            raise ExecutionError(f"{module_name} could not create an execution context: {reason}")
        self.io_tensors = self._describe()
        self.num_profiles = int(engine.num_optimization_profiles)

    def _apply_weight_streaming(self, budget: int | None) -> None:
        if budget is None:
            return
        streamable = getattr(self._engine, "streamable_weights_size", 0)
        if not streamable:
            logger.warning(
                "weight_streaming_budget=%d ignored: the engine was not built with weight streaming", budget
            )
            return
        self._engine.weight_streaming_budget_v2 = int(budget)

    def _describe(self) -> list[IoTensor]:
        trt = self._trt
        engine = self._engine
        aliased_of = getattr(engine, "get_aliased_input_tensor", None)
        tensors = []
        for index in range(engine.num_io_tensors):
            name = engine.get_tensor_name(index)
            is_input = engine.get_tensor_mode(name) == trt.TensorIOMode.INPUT
            dtype_name = getattr(engine.get_tensor_dtype(name), "name", str(engine.get_tensor_dtype(name)))
            dtype = _dtypes.from_tensorrt(dtype_name)
            if dtype is None:
                raise NotSupportedError(
                    f"tensor '{name}' has TensorRT dtype {dtype_name}, which ExecuTorch cannot hold "
                    f"(supported: {', '.join(_dtypes.tensorrt_names())})"
                )
            aliased = None
            if not is_input and aliased_of is not None:
                aliased = aliased_of(name) or None
            shape_io = getattr(engine, "is_shape_inference_io", None)
            tensors.append(
                IoTensor(
                    name=name,
                    is_input=is_input,
                    dtype=dtype,
                    rank=len(engine.get_tensor_shape(name)),
                    aliased_input=aliased,
                    is_shape_tensor=bool(shape_io(name)) if shape_io is not None else False,
                )
            )
        return tensors

    def profile_shape(self, profile: int, name: str):
        shapes = self._engine.get_tensor_profile_shape(name, profile)
        return tuple(tuple(int(d) for d in dims) for dims in shapes)

    def select_profile(self, profile: int, stream: int | None) -> None:
        if not self._context.set_optimization_profile_async(profile, stream or 0):
            raise InvalidArgumentError(f"TensorRT refused optimization profile {profile}")

    def set_input_shape(self, name: str, shape: tuple[int, ...]) -> None:
        with self._provider._collect_errors() as errors:
            ok = self._context.set_input_shape(name, shape)
        if not ok:
            reason = f": {errors[-1]}" if errors else ""
            raise InvalidArgumentError(f"TensorRT refused shape {list(shape)} for input '{name}'{reason}")

    def get_output_shape(self, name: str):
        return tuple(int(d) for d in self._context.get_tensor_shape(name))

    def set_tensor_address(self, name: str, address: int) -> None:
        if not self._context.set_tensor_address(name, address):
            raise InvalidArgumentError(f"TensorRT refused the address of tensor '{name}'")

    def enqueue(self, stream: int | None) -> None:
        with _nvtx_range(f"TensorRTBackend enqueue ({self._module_name})"):
            with self._provider._collect_errors() as errors:
                ok = self._context.execute_async_v3(stream or 0)
        if not ok:
            reason = errors[-1] if errors else "no reason given"
            raise ExecutionError(f"TensorRT enqueue failed: {reason}")

    def close(self) -> None:
        self._context = None
        self._engine = None


def register(modules: Sequence[str] | None = None) -> str:
    """Register the Python TensorRT provider (once) and return its name."""
    from . import providers, register_provider

    if PROVIDER_NAME not in providers():
        register_provider(TensorRTProvider(modules), name=PROVIDER_NAME, memory="device", capturable=True, kind="python")
    return PROVIDER_NAME


__all__ = [
    "DEFAULT_MODULES",
    "PROVIDER_NAME",
    "TensorRTEngine",
    "TensorRTProvider",
    "configured_modules",
    "installed_modules",
    "register",
    "set_nvtx_enabled",
]
