"""The Python TensorRT provider: runs engines through TensorRT's Python API.

Registered at import as `tensorrt-python`: beside the native provider
(`tensorrt-native`, which the backend asks first) when one of the modules
below is installed, for TensorRT-RTX and plans the native provider does not
take; and always when the wheel has no native provider, where without a
module it answers with what to install. It needs no TensorRT headers at build
time and works with whichever TensorRT runtime is installed. Modules are
tried in this order:

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
import functools
import importlib
import importlib.util
import logging
import math
import os
import tempfile
import threading
from collections.abc import Callable, Sequence

from .. import _dtypes, _native
from .._plan_magic import is_test_engine_plan
from ..errors import (
    ExecutionError,
    InvalidArgumentError,
    InvalidProgramError,
    MissingPackageError,
    NoDeviceError,
    NotAcceptedError,
    NotSupportedError,
)
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


class _OutputResult:
    """What TensorRT's output allocator of one data-dependent output saw during one enqueue."""

    def __init__(self, own_memory):
        self.own_memory = own_memory  # grown past the bound, never shrunk; freed at close
        self.capacity = 0
        self.address = 0
        self.shape: tuple[int, ...] | None = None
        self.failure = ""

    def reset(self, capacity: int) -> None:
        self.capacity, self.address, self.shape, self.failure = int(capacity), 0, None, ""

    def memory_for(self, name: str, current: int, size: int, alignment: int) -> int:
        """reallocateOutputAsync's answer: the bound buffer when the request fits ("If currentMemory
        is known to be big enough, one option is to return currentMemory", NvInferRuntime.h 11.1
        :3855-3882), else memory of our own; 0 (TensorRT's nullptr: the enqueue fails) with the
        reason kept when none can be had. Never raises: TensorRT calls it from C++ (noexcept)."""
        try:
            alignment = max(int(alignment), 1)
            if current and size <= self.capacity and current % alignment == 0:
                self.address = int(current)
            else:
                address = int(self.own_memory.reserve(int(size)))
                if address % alignment:
                    raise ExecutionError(f"memory at {address:#x} is not aligned to {alignment} bytes")
                self.address = address
            return self.address
        except BaseException as exc:  # noqa: BLE001 (TensorRT's C++ caller cannot take an exception)
            self.failure = f"no memory for output '{name}' ({size} bytes): {exc}"
            self.address = 0
            return 0

    def notify(self, shape) -> None:
        try:
            self.shape = tuple(int(d) for d in shape)
        except BaseException as exc:  # noqa: BLE001 (called from C++)
            self.failure = f"TensorRT reported an unreadable shape: {exc}"


def _make_output_allocator(trt, result: _OutputResult):
    """TensorRT's IOutputAllocator (module `trt`'s) over `result`."""

    class _OutputAllocator(trt.IOutputAllocator):
        def __init__(self):
            trt.IOutputAllocator.__init__(self)

        def reallocate_output_async(self, tensor_name, memory, size, alignment, stream):
            return result.memory_for(tensor_name, int(memory or 0), int(size), int(alignment))

        # TensorRT 9's name, which the 10.x bindings call when the async one is not overridden.
        def reallocate_output(self, tensor_name, memory, size, alignment):
            return result.memory_for(tensor_name, int(memory or 0), int(size), int(alignment))

        def notify_shape(self, tensor_name, shape):
            result.notify(shape)

    return _OutputAllocator()


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
        synchronize: Callable[[], None] | None = None,
        device_memory: Callable[[int], object] | None = None,
    ):
        self._requested = tuple(modules) if modules else None
        self._device_count = device_count
        self._synchronize = synchronize
        # Makes the memory a data-dependent output gets when the engine asks for more than the
        # planned bound: called with a device id, returns an object with reserve(nbytes) -> address
        # and free() (_native.DeviceBlock).
        self.device_memory = device_memory or _native.DeviceBlock
        self._lock = threading.Lock()
        self._modules: dict[str, object] = {}
        self._runtimes: dict[tuple[str, int], _Runtime] = {}
        self._loggers: dict[str, object] = {}
        self._plugins_initialized: set[str] = set()
        self._plugin_libraries = _PluginLibraries()
        self._errors = threading.local()

    # TensorRT's logger: forward to ours, and remember errors so that a
    # failed call can say why. An error collected for a call is logged at
    # info (its exception carries it), any other at error; an internal error
    # ("Execution is unrecoverable", NvInferRuntime.h 11.1 :1592) always at error.
    def _log(self, module: str, severity: str, message: str) -> None:
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

    def synchronize(self) -> None:
        """Wait for the device's work (the one-time profile switches at load)."""
        if self._synchronize is not None:
            self._synchronize()
        else:
            _native.synchronize_current_context()

    def describe_runtime(self) -> str:
        """Which TensorRT Python modules this provider would use (none imported)."""
        found = installed_modules(self._requested)
        return ("TensorRT Python modules: " + ", ".join(found)) if found else INSTALL_HINT

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

    def _runtime(self, name: str, module, device_id: int) -> _Runtime:
        key = (name, device_id)
        with self._lock:
            runtime = self._runtimes.get(key)
            if runtime is not None:
                return runtime
            trt_logger = self._loggers.get(name)
            if trt_logger is None:
                trt_logger = _make_logger(module, functools.partial(self._log, name))
                self._loggers[name] = trt_logger
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
            runtime = _Runtime(trt_runtime)
            self._runtimes[key] = runtime
            return runtime

    def create_execution_context(self, engine: TensorRTEngine, options: EngineLoadOptions) -> TensorRTEngine:
        """Another engine object on what `engine` deserialized: one copy of the weights per plan and
        device however many programs load it (the backend's share_engines)."""
        return engine.share(options)

    def deserialize(self, plan: memoryview, device_id: int, options: EngineLoadOptions):
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
        for name, module in self._import():
            runtime = self._runtime(name, module, device_id)
            with runtime.lock, self._collect_errors() as errors:
                runtime.apply(name, options, self._plugin_libraries)
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


class _PluginLibraries:
    """The plugin libraries loaded into each plugin registry, which runtimes may share.

    A registry refuses a library whose plugins it already holds ("will fail and return nullptr if any of the
    plugins are already registered", NvInferRuntimeCommon.h:133-134), and the runtimes of two devices can hand
    back the same registry, so a library is loaded once per registry, not once per runtime.
    """

    def __init__(self):
        self._lock = threading.Lock()
        # id(registry) -> (the registry, kept alive so that its id is not reused; the paths loaded into it)
        self._loaded: dict[int, tuple[object, set[str]]] = {}

    def load(self, name: str, registry, paths: Sequence[str]) -> None:
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


class _Runtime:
    """One TensorRT runtime and the settings its next deserialize needs (runtime state, not per engine)."""

    def __init__(self, trt_runtime):
        self.trt = trt_runtime
        self.lock = threading.Lock()
        self.dla_core = -1  # the core last set on this runtime; -1: never set (TensorRT's default)

    def apply(self, name: str, options: EngineLoadOptions, plugin_libraries: _PluginLibraries) -> None:
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


def _is_host_location(trt, engine, name: str) -> bool:
    location = getattr(trt, "TensorLocation", None)
    get = getattr(engine, "get_tensor_location", None)
    return location is not None and get is not None and get(name) == location.HOST


def _format_problem(trt, engine, name: str, profile: int) -> str | None:
    """Why tensor `name` is not linear in `profile` (NvInferRuntime.h:1428 kLINEAR), or None."""
    tensor_format = getattr(trt, "TensorFormat", None)
    describe = getattr(engine, "get_tensor_format_desc", None)
    desc = describe(name, profile) if describe is not None else ""
    if tensor_format is not None and hasattr(engine, "get_tensor_format"):
        if engine.get_tensor_format(name, profile) != tensor_format.LINEAR:
            return desc or str(engine.get_tensor_format(name, profile))
        return None
    # The lean and dispatch modules have no TensorFormat enum: ask whether the
    # format packs components (vectorized formats) and what TensorRT calls it.
    vectorized = getattr(engine, "get_tensor_vectorized_dim", None)
    components = getattr(engine, "get_tensor_components_per_element", None)
    if vectorized is not None and vectorized(name, profile) != -1:
        return desc or "a vectorized format"
    if components is not None and components(name, profile) not in (-1, 1):
        return desc or "a vectorized format"
    if desc and "linear" not in desc.lower():
        return desc
    return None


class TensorRTEngine:
    """A deserialized engine and one execution context per optimization profile.

    Several TensorRTEngine objects may share one deserialized engine (`share`): each has its own
    contexts, profile, shapes and addresses; the ICudaEngine lives while any of them holds it
    (Python references; TensorRT's contexts keep their engine alive too).
    """

    def __init__(self, module_name: str, trt, engine, options: EngineLoadOptions, provider: TensorRTProvider,
                 *, shared: TensorRTEngine | None = None):
        self._module_name = module_name
        self._trt = trt
        self._engine = engine
        self._provider = provider
        self._contexts: list = []
        self._profile = 0
        self._device_id = options.device_id
        # Data-dependent outputs: (profile, name) -> its result and TensorRT's allocator (kept
        # alive here: the context holds only a pointer to it).
        self._outputs: dict[tuple[int, str], tuple[_OutputResult, object]] = {}
        self._runtime_cache = None
        self._runtime_cache_path = options.runtime_cache_path
        if shared is None:
            self._check_capability()
            # Engine-wide (weight streaming budget): the first load's stays in force for every
            # engine object that shares it (engine_provider.h, create_execution_context).
            self.streams_weights = self._apply_weight_streaming(options.weight_streaming_budget)
            self.io_tensors = self._describe()
        else:
            self.streams_weights = shared.streams_weights
            self.io_tensors = shared.io_tensors
        self.num_profiles = max(1, int(engine.num_optimization_profiles))
        self._create_contexts()

    def share(self, options: EngineLoadOptions) -> TensorRTEngine:
        """Another engine object on this deserialized engine, with contexts of its own."""
        if self._engine is None:
            raise InvalidArgumentError("the engine was closed; it cannot be shared")
        return TensorRTEngine(self._module_name, self._trt, self._engine, options, self._provider, shared=self)

    def _check_capability(self) -> None:
        capability = getattr(self._engine, "engine_capability", None)
        standard = getattr(getattr(self._trt, "EngineCapability", None), "STANDARD", None)
        if capability is not None and standard is not None and capability != standard:
            raise NotSupportedError(
                f"the engine was built with EngineCapability {getattr(capability, 'name', capability)} (safety or "
                "standalone DLA); only STANDARD engines run through the TensorRT runtime"
            )

    def _apply_weight_streaming(self, budget: int | None) -> bool:
        """The native provider's rules: an explicit budget clamped to the streamable size, else TensorRT's own
        default left in place (streaming disabled, NvInferRuntime.h:3648); read back, since the binding drops
        the setter's result. Returns whether weights stream (enqueue then synchronizes and cannot be captured,
        NvInferRuntime.h:4642)."""
        engine = self._engine
        streamable = int(getattr(engine, "streamable_weights_size", 0) or 0)
        if streamable <= 0:
            if budget is not None:
                logger.warning(
                    "weight_streaming_budget=%d ignored: the engine was not built with weight streaming; "
                    "all its weights stay on the device",
                    budget,
                )
            return False
        if budget is not None and budget < 0:
            raise InvalidArgumentError(f"weight_streaming_budget must be a byte count >= 0, got {budget}")
        if budget is not None:
            wanted = min(int(budget), streamable)
            engine.weight_streaming_budget_v2 = wanted
            if int(engine.weight_streaming_budget_v2) != wanted:
                raise ExecutionError(
                    f"TensorRT refused a weight streaming budget of {wanted} bytes (streamable weights: "
                    f"{streamable} bytes)"
                )
        applied = int(engine.weight_streaming_budget_v2)
        logger.info(
            "weight streaming: budget %d of %d streamable bytes (%s)",
            applied,
            streamable,
            "requested" if budget is not None else "TensorRT's default",
        )
        return applied < streamable

    def _describe(self) -> list[IoTensor]:
        trt = self._trt
        engine = self._engine
        aliased_of = getattr(engine, "get_aliased_input_tensor", None)
        shape_io = getattr(engine, "is_shape_inference_io", None)
        profiles = max(1, int(engine.num_optimization_profiles))
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
            is_shape_tensor = bool(shape_io(name)) if shape_io is not None else False
            # What the native provider refuses too: memory the backend does not
            # give (kHOST tensors other than shape tensors, NvInferRuntime.h:3105)
            # and layouts it does not write (anything but linear).
            if not is_shape_tensor and _is_host_location(trt, engine, name):
                raise NotSupportedError(
                    f"tensor '{name}' lives in host memory (TensorLocation.HOST); this provider binds device "
                    "memory only"
                )
            for profile in range(profiles):
                problem = _format_problem(trt, engine, name, profile)
                if problem is not None:
                    raise NotSupportedError(
                        f"tensor '{name}' uses TensorRT format '{problem}' in profile {profile}; only linear "
                        "(contiguous row-major) I/O is supported: build the engine with linear I/O formats"
                    )
            aliased = None
            if not is_input and aliased_of is not None:
                aliased = aliased_of(name) or None
            tensors.append(
                IoTensor(
                    name=name,
                    is_input=is_input,
                    dtype=dtype,
                    rank=len(engine.get_tensor_shape(name)),
                    aliased_input=aliased,
                    is_shape_tensor=is_shape_tensor,
                )
            )
        return tensors

    def _runtime_config(self):
        """TensorRT-RTX: a runtime config carrying the kernel cache kept at runtime_cache_path."""
        path = self._runtime_cache_path
        create = getattr(self._engine, "create_runtime_config", None)
        if not path or create is None:
            if path:
                logger.info("runtime_cache_path ignored: %s keeps no runtime cache", self._module_name)
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
        self._runtime_cache = cache
        return config

    def _create_contexts(self) -> None:
        # One context per optimization profile, switched once here: a switch
        # "will trigger layer resource updates on the next call of enqueueV3"
        # (NvInferRuntime.h:4272), which a CUDA-graph replay never makes.
        # Each context allocates for its own profile only.
        strategy = getattr(getattr(self._trt, "ExecutionContextAllocationStrategy", None), "ON_PROFILE_CHANGE", None)
        config = self._runtime_config()
        for profile in range(self.num_profiles):
            with self._provider._collect_errors() as errors:
                if config is not None:
                    context = self._engine.create_execution_context(config)
                elif strategy is not None and self.num_profiles > 1:
                    context = self._engine.create_execution_context(strategy)
                else:
                    context = self._engine.create_execution_context()
            if context is None:
                reason = errors[-1] if errors else "out of device memory?"
                raise ExecutionError(f"{self._module_name} could not create an execution context: {reason}")
            if profile > 0:
                try:
                    context.set_optimization_profile_async(profile, 0)
                except RuntimeError as exc:
                    raise ExecutionError(f"TensorRT could not select optimization profile {profile}: {exc}") from exc
            self._contexts.append(context)
        if self.num_profiles > 1:
            self._provider.synchronize()

    @property
    def _context(self):
        return self._contexts[self._profile]

    def profile_shape(self, profile: int, name: str):
        """(min, opt, max) of input `name` in `profile`. Engines without dynamic inputs may define no profile
        ranges: a static input then ranges over its own shape, as in the native provider."""
        shape = tuple(int(d) for d in self._engine.get_tensor_shape(name))
        try:
            shapes = self._engine.get_tensor_profile_shape(name, profile)
        except (RuntimeError, ValueError, IndexError):
            shapes = ()
        ranges = tuple(tuple(int(d) for d in dims) for dims in shapes or ())
        if len(ranges) == 3 and all(len(dims) == len(shape) for dims in ranges):
            return ranges
        if all(d >= 0 for d in shape):
            return shape, shape, shape
        raise InvalidProgramError(
            f"TensorRT gives dynamic input '{name}' ({list(shape)}) no shape range in optimization profile {profile}"
        )

    def select_profile(self, profile: int, stream: int | None) -> None:
        if not 0 <= profile < len(self._contexts):
            raise InvalidArgumentError(
                f"optimization profile {profile} does not exist (the engine has {len(self._contexts)})"
            )
        self._profile = profile

    def set_input_shape(self, name: str, shape: tuple[int, ...]) -> None:
        with self._provider._collect_errors() as errors:
            ok = self._context.set_input_shape(name, shape)
        if not ok:
            reason = f": {errors[-1]}" if errors else ""
            raise InvalidArgumentError(f"TensorRT refused shape {list(shape)} for input '{name}'{reason}")

    def get_output_shape(self, name: str):
        shape = tuple(int(d) for d in self._context.get_tensor_shape(name))
        if any(d < 0 for d in shape):
            # Known only once the engine ran (nonzero, masking, NMS): TensorRT asks an output
            # allocator for the memory and tells it the shape ("If getTensorShape(name) reports
            # a -1 for any dimension of an output after all input shapes have been set, use
            # setOutputAllocator()", NvInferRuntime.h 11.1 :4371-4373).
            self._output(name)
        return shape

    def _output(self, name: str) -> _OutputResult:
        """The output allocator of `name` on the selected profile's context, installed once."""
        key = (self._profile, name)
        entry = self._outputs.get(key)
        if entry is None:
            result = _OutputResult(self._provider.device_memory(self._device_id))
            allocator = _make_output_allocator(self._trt, result)
            if not self._context.set_output_allocator(name, allocator):
                raise ExecutionError(f"TensorRT refused an output allocator for output '{name}'")
            entry = self._outputs[key] = (result, allocator)
        return entry[0]

    def set_output_capacity(self, name: str, nbytes: int) -> None:
        """Before an enqueue: the address set for data-dependent output `name` holds `nbytes`."""
        self._output(name).reset(nbytes)

    def output_result(self, name: str) -> tuple[tuple[int, ...], int]:
        """After an enqueue: the shape TensorRT told and where the elements are."""
        entry = self._outputs.get((self._profile, name))
        if entry is None:
            raise ExecutionError(f"output '{name}' has no data-dependent result: its shape was never unknown")
        result = entry[0]
        if result.failure:
            raise ExecutionError(result.failure)
        if result.shape is None:
            raise ExecutionError(f"TensorRT did not report the shape of data-dependent output '{name}'")
        if not result.address and math.prod(result.shape) > 0:
            raise ExecutionError(f"TensorRT asked no memory for data-dependent output '{name}'")
        return result.shape, result.address

    def set_tensor_address(self, name: str, address: int) -> None:
        if not self._context.set_tensor_address(name, address):
            raise InvalidArgumentError(f"TensorRT refused the address of tensor '{name}'")

    def capturable(self, stream: int | None) -> bool:
        """Whether this enqueue may be captured into a CUDA graph now."""
        if self.streams_weights:
            return False
        # TensorRT-RTX says per context and stream (lazy kernels, allocation):
        # not capturable unless the engine says so, so a binding without the
        # question answers no. TensorRT itself captures whenever weights are
        # resident.
        ask = getattr(self._context, "is_stream_capturable", None)
        if ask is None:
            return self._module_name != "tensorrt_rtx"
        return bool(ask(stream or 0))

    def enqueue(self, stream: int | None) -> None:
        with _nvtx_range(f"TensorRTBackend enqueue ({self._module_name})"):
            with self._provider._collect_errors() as errors:
                ok = self._context.execute_async_v3(stream or 0)
        if not ok:
            reason = errors[-1] if errors else "no reason given"
            raise ExecutionError(f"TensorRT enqueue failed: {reason}")

    def close(self) -> None:
        self._save_runtime_cache()
        self._contexts = []
        self._engine = None
        outputs, self._outputs = self._outputs, {}
        for result, _ in outputs.values():
            try:
                result.own_memory.free()
            except Exception:  # nothing to report a failure to: the backend is letting go
                logger.warning("freeing an output's device memory failed", exc_info=True)

    def _save_runtime_cache(self) -> None:
        cache, path = self._runtime_cache, self._runtime_cache_path
        self._runtime_cache = None
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


def register(modules: Sequence[str] | None = None) -> str:
    """Register the Python TensorRT provider (once) and return its name."""
    from . import providers, register_provider

    if PROVIDER_NAME not in providers():
        register_provider(
            TensorRTProvider(modules), name=PROVIDER_NAME, memory="device", capturable=True, kind="python"
        )
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
