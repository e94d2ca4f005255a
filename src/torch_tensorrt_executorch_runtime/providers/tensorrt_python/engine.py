"""A deserialized TensorRT engine as the provider protocol's `Engine`.

One execution context per optimization profile, shapes and addresses set on
the selected profile's context, enqueue through `execute_async_v3`. Several
engine objects may share one deserialized engine (`share`, the backend's
share_engines): each has its own contexts, profile, shapes and addresses.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from ...errors import ExecutionError, InvalidArgumentError, InvalidProgramError, NotSupportedError
from ..types import EngineLoadOptions, IoTensor
from .io_tensors import describe_io_tensors
from .nvtx_ranges import nvtx_range
from .output_allocator import OutputResult, make_output_allocator
from .runtime_cache import RuntimeCache
from .tensorrt_logger import TensorRTLog
from .weight_streaming import apply_weight_streaming

logger = logging.getLogger("torch_tensorrt_executorch_runtime")


class EngineHost(Protocol):
    """What an engine uses of the provider that made it."""

    tensorrt_log: TensorRTLog
    # Called with a device id; returns an object with reserve(nbytes) -> address and free().
    device_memory: Callable[[int], Any]

    def synchronize(self) -> None: ...


class TensorRTEngine:
    """A deserialized engine and one execution context per optimization profile.

    The ICudaEngine lives while any engine object sharing it holds it (Python references; TensorRT's
    contexts keep their engine alive too).
    """

    def __init__(
        self,
        module_name: str,
        trt: Any,
        engine: Any,
        options: EngineLoadOptions,
        host: EngineHost,
        *,
        shared: TensorRTEngine | None = None,
    ):
        self._module_name = module_name
        self._trt = trt
        self._engine = engine
        self._host = host
        self._contexts: list[Any] = []
        self._profile = 0
        self._device_id = options.device_id
        # Data-dependent outputs: (profile, name) -> its result and TensorRT's allocator (kept
        # alive here: the context holds only a pointer to it).
        self._outputs: dict[tuple[int, str], tuple[OutputResult, Any]] = {}
        self._runtime_cache = RuntimeCache(options.runtime_cache_path)
        self.streams_weights: bool
        self.io_tensors: Sequence[IoTensor]
        if shared is None:
            self._check_capability()
            self.streams_weights = apply_weight_streaming(engine, options.weight_streaming_budget)
            self.io_tensors = describe_io_tensors(trt, engine)
        else:
            self.streams_weights = shared.streams_weights
            self.io_tensors = shared.io_tensors
        self.num_profiles = max(1, int(engine.num_optimization_profiles))
        self._create_contexts()

    @property
    def module_name(self) -> str:
        """The TensorRT Python module that deserialized the engine."""
        return self._module_name

    def share(self, options: EngineLoadOptions) -> TensorRTEngine:
        """Another engine object on this deserialized engine, with contexts of its own."""
        if self._engine is None:
            raise InvalidArgumentError("the engine was closed; it cannot be shared")
        return TensorRTEngine(self._module_name, self._trt, self._engine, options, self._host, shared=self)

    def _check_capability(self) -> None:
        capability = getattr(self._engine, "engine_capability", None)
        standard = getattr(getattr(self._trt, "EngineCapability", None), "STANDARD", None)
        if capability is not None and standard is not None and capability != standard:
            raise NotSupportedError(
                f"the engine was built with EngineCapability {getattr(capability, 'name', capability)} (safety or "
                "standalone DLA); only STANDARD engines run through the TensorRT runtime"
            )

    def _create_contexts(self) -> None:
        # One context per optimization profile, switched once here: a switch
        # "will trigger layer resource updates on the next call of enqueueV3"
        # (NvInferRuntime.h:4272), which a CUDA-graph replay never makes.
        # Each context allocates for its own profile only.
        strategy = getattr(getattr(self._trt, "ExecutionContextAllocationStrategy", None), "ON_PROFILE_CHANGE", None)
        config = self._runtime_cache.runtime_config(self._engine, self._module_name)
        for profile in range(self.num_profiles):
            with self._host.tensorrt_log.collect_errors() as errors:
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
            self._host.synchronize()

    @property
    def _context(self) -> Any:
        return self._contexts[self._profile]

    def profile_shape(self, profile: int, name: str) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
        """(min, opt, max) of input `name` in `profile`. Engines without dynamic inputs may define no profile
        ranges: a static input then ranges over its own shape, as in the native provider."""
        shape = tuple(int(d) for d in self._engine.get_tensor_shape(name))
        try:
            shapes = self._engine.get_tensor_profile_shape(name, profile)
        except (RuntimeError, ValueError, IndexError):
            shapes = ()
        ranges = tuple(tuple(int(d) for d in dims) for dims in shapes or ())
        if len(ranges) == 3 and all(len(dims) == len(shape) for dims in ranges):
            return ranges[0], ranges[1], ranges[2]
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
        with self._host.tensorrt_log.collect_errors() as errors:
            ok = self._context.set_input_shape(name, shape)
        if not ok:
            reason = f": {errors[-1]}" if errors else ""
            raise InvalidArgumentError(f"TensorRT refused shape {list(shape)} for input '{name}'{reason}")

    def get_output_shape(self, name: str) -> tuple[int, ...]:
        shape = tuple(int(d) for d in self._context.get_tensor_shape(name))
        if any(d < 0 for d in shape):
            # Known only once the engine ran (nonzero, masking, NMS): TensorRT asks an output
            # allocator for the memory and tells it the shape ("If getTensorShape(name) reports
            # a -1 for any dimension of an output after all input shapes have been set, use
            # setOutputAllocator()", NvInferRuntime.h 11.1 :4371-4373).
            self._output(name)
        return shape

    def _output(self, name: str) -> OutputResult:
        """The output allocator of `name` on the selected profile's context, installed once."""
        key = (self._profile, name)
        entry = self._outputs.get(key)
        if entry is None:
            result = OutputResult(self._host.device_memory(self._device_id))
            allocator = make_output_allocator(self._trt, result)
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
        with nvtx_range(f"TensorRTBackend enqueue ({self._module_name})"):
            with self._host.tensorrt_log.collect_errors() as errors:
                ok = self._context.execute_async_v3(stream or 0)
        if not ok:
            reason = errors[-1] if errors else "no reason given"
            raise ExecutionError(f"TensorRT enqueue failed: {reason}")

    def close(self) -> None:
        self._runtime_cache.save()
        self._contexts = []
        self._engine = None
        outputs, self._outputs = self._outputs, {}
        for result, _ in outputs.values():
            try:
                result.own_memory.free()
            except Exception:  # nothing to report a failure to: the backend is letting go
                logger.warning("freeing an output's device memory failed", exc_info=True)
