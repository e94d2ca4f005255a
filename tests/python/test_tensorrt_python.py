"""The Python TensorRT provider against a stand-in `tensorrt` module.

No TensorRT can run here, so these tests give the provider a module with
TensorRT's Python API surface (Runtime, ICudaEngine, IExecutionContext,
ILogger) and check what the provider asks of it: module order and override,
no runtime without a CUDA device, engine host code, dtype mapping, what the
backend cannot bind (formats, locations, data-dependent outputs,
capabilities), one context per profile, shapes, addresses, enqueue,
aliasing, weight streaming, capture, DLA, plugins, the TensorRT-RTX runtime
cache, errors. Each rule cites the TensorRT header line it follows.
"""

from __future__ import annotations

import enum
import logging
import os
import sys
import types

import pytest

from torch_tensorrt_executorch_runtime.errors import (
    ExecutionError,
    InvalidArgumentError,
    InvalidProgramError,
    MissingPackageError,
    NoDeviceError,
    NotAcceptedError,
    NotSupportedError,
)
from torch_tensorrt_executorch_runtime.providers import EngineLoadOptions, tensorrt_python
from torch_tensorrt_executorch_runtime.providers.tensorrt_python import TensorRTProvider
from torch_tensorrt_executorch_runtime.providers.tensorrt_python import runtime_cache as trt_runtime_cache

PLAN = b"fake-plan-bytes"


class TensorIOMode(enum.Enum):
    NONE = 0
    INPUT = 1
    OUTPUT = 2


class DataType(enum.Enum):
    FLOAT = 0
    HALF = 1
    INT8 = 2
    INT32 = 3
    BOOL = 4
    UINT8 = 5
    FP8 = 6
    BF16 = 7
    INT64 = 8
    INT4 = 9


class Severity(enum.Enum):
    INTERNAL_ERROR = 0
    ERROR = 1
    WARNING = 2
    INFO = 3
    VERBOSE = 4


class TensorFormat(enum.Enum):
    LINEAR = 0
    CHW4 = 2


class TensorLocation(enum.Enum):
    DEVICE = 0
    HOST = 1


class EngineCapability(enum.Enum):
    STANDARD = 0
    SAFETY = 1


def make_module(
    name: str,
    tensors=None,
    *,
    deserialize_ok=True,
    aliased=None,
    streamable=0,
    formats=None,
    locations=None,
    vectorized=None,
    dynamic_outputs=(),
    capability=None,
    dla_cores=0,
    budget_accepted=True,
    stream_capturable=None,
    runtime_cache=False,
    plugins=False,
    shared_registry=False,
):
    """A module with the parts of TensorRT's Python API the provider uses.

    formats: tensor -> TensorFormat (adds TensorFormat, as the full module has);
    locations: tensor -> TensorLocation; vectorized: tensor -> vectorized dim
    (lean-style modules without TensorFormat); dynamic_outputs: outputs whose
    shape stays unknown; stream_capturable: TensorRT-RTX's answer;
    shared_registry: every runtime hands back one plugin registry. A tensor's
    profile ranges None: get_tensor_profile_shape raises; []: it answers empty.
    """
    module = types.ModuleType(name)
    module.__version__ = "11.1.0"
    module.calls = []
    module.TensorIOMode = TensorIOMode
    module.TensorLocation = TensorLocation
    if formats is not None:
        module.TensorFormat = TensorFormat
    if capability is not None:
        module.EngineCapability = EngineCapability
    if plugins:
        module.init_libnvinfer_plugins = (
            lambda logger, namespace: module.calls.append(("init_plugins", namespace)) or True
        )
    tensors = tensors or [
        ("x", TensorIOMode.INPUT, DataType.FLOAT, (-1, 4), [((1, 4), (2, 4), (8, 4))]),
        ("y", TensorIOMode.OUTPUT, DataType.FLOAT, (-1, 4), None),
    ]

    class ILogger:
        def __init__(self):
            pass

    class IOutputAllocator:
        def __init__(self):
            pass

    # Data-dependent outputs: what the engine produces on its next run, {name: (bytes asked, shape)}.
    module.produce = {}

    class Context:
        def __init__(self, index):
            self.shapes = {}
            self.index = index
            self.addresses = {}
            self.allocators = {}

        def set_input_shape(self, tensor, shape):
            module.calls.append(("set_input_shape", tensor, tuple(shape)))
            if tensor == "x" and shape[0] > 8:
                module.logger.log(Severity.ERROR, f"shape {tuple(shape)} is outside profile 0")
                return False
            self.shapes[tensor] = tuple(shape)
            return True

        def get_tensor_shape(self, tensor):
            if tensor in dynamic_outputs:
                return (-1, 4)
            return self.shapes.get("x", (1, 4))

        def set_tensor_address(self, tensor, address):
            module.calls.append(("set_tensor_address", self.index, tensor, address))
            self.addresses[tensor] = address
            return True

        def set_output_allocator(self, tensor, allocator):
            module.calls.append(("set_output_allocator", self.index, tensor))
            self.allocators[tensor] = allocator
            return True

        def set_optimization_profile_async(self, profile, stream):
            module.calls.append(("set_optimization_profile_async", self.index, profile, stream))
            if profile >= 2:
                raise RuntimeError("profile out of range")
            return True

        def execute_async_v3(self, stream):
            module.calls.append(("execute_async_v3", self.index, stream))
            # As enqueueV3 does for a data-dependent output: ask its allocator for memory (the
            # address set is the current memory), fail on nullptr, then tell the shape.
            for tensor, (size, shape) in module.produce.items():
                allocator = self.allocators.get(tensor)
                if allocator is None:
                    return False
                memory = allocator.reallocate_output_async(tensor, self.addresses.get(tensor, 0), size, 256, stream)
                module.calls.append(("allocated", self.index, tensor, memory))
                if not memory:
                    return False
                allocator.notify_shape(tensor, shape)
            return stream != 0xBAD

    if stream_capturable is not None:
        Context.is_stream_capturable = lambda self, stream: stream_capturable

    class Engine:
        num_io_tensors = len(tensors)
        num_optimization_profiles = 2
        streamable_weights_size = streamable

        def __init__(self):
            self._budget = streamable or None  # TensorRT's default: everything resident
            self.contexts = 0
            if capability is not None:
                self.engine_capability = capability

        # The binding's setter drops TensorRT's answer; reading back shows it.
        @property
        def weight_streaming_budget_v2(self):
            return self._budget

        @weight_streaming_budget_v2.setter
        def weight_streaming_budget_v2(self, value):
            module.calls.append(("set_budget", value))
            if budget_accepted or value == 0:
                self._budget = value

        def get_weight_streaming_automatic_budget(self):
            return streamable // 2

        def get_tensor_location(self, name):
            return (locations or {}).get(name, TensorLocation.DEVICE)

        def get_tensor_format_desc(self, name, profile):
            if formats is not None and (formats.get(name, TensorFormat.LINEAR) != TensorFormat.LINEAR):
                return "Four wide channel vectorized row major FP32 format"
            return "Row-major linear FP32 format"

        def get_tensor_name(self, index):
            return tensors[index][0]

        def _find(self, name):
            return next(t for t in tensors if t[0] == name)

        def get_tensor_mode(self, name):
            return self._find(name)[1]

        def get_tensor_dtype(self, name):
            return self._find(name)[2]

        def get_tensor_shape(self, name):
            return self._find(name)[3]

        def get_tensor_profile_shape(self, name, profile):
            ranges = self._find(name)[4]
            if ranges is None:
                raise RuntimeError(f"no profile ranges for '{name}'")
            return ranges[0] if ranges else []

        def is_shape_inference_io(self, name):
            return False

        def create_execution_context(self, config=None):
            module.calls.append(("create_execution_context", self._budget, config))
            self.contexts += 1
            return Context(self.contexts - 1)

    if aliased is not None:
        Engine.get_aliased_input_tensor = lambda self, name: aliased.get(name)
    if formats is not None:
        Engine.get_tensor_format = lambda self, name, profile: formats.get(name, TensorFormat.LINEAR)
    if vectorized is not None:
        Engine.get_tensor_vectorized_dim = lambda self, name, profile: vectorized.get(name, -1)
        Engine.get_tensor_components_per_element = lambda self, name, profile: 1

    class RuntimeCache:
        def __init__(self):
            self.data = b""

        def deserialize(self, data):
            module.calls.append(("cache_deserialize", bytes(data)))
            self.data = bytes(data)
            return True

        def serialize(self):
            return self.data + b"+more kernels"

    class RuntimeConfig:
        def __init__(self):
            self.cache = None

        def create_runtime_cache(self):
            return RuntimeCache()

        def set_runtime_cache(self, cache):
            self.cache = cache
            return True

    if runtime_cache:
        Engine.create_runtime_config = lambda self: RuntimeConfig()

    class PluginRegistry:
        def load_library(self, path):
            module.calls.append(("load_library", path))
            return None if "missing" in path else object()

    registry = PluginRegistry()

    class Runtime:
        created = 0

        def __init__(self, logger):
            Runtime.created += 1
            module.logger = logger
            self.engine_host_code_allowed = False
            self.num_DLA_cores = dla_cores
            self._dla_core = -1
            self.registry = registry if shared_registry else PluginRegistry()
            module.runtime = self

        @property
        def DLA_core(self):  # noqa: N802 (TensorRT's name)
            return self._dla_core

        @DLA_core.setter
        def DLA_core(self, core):  # noqa: N802
            module.calls.append(("set_dla_core", core))
            self._dla_core = core

        def get_plugin_registry(self):
            return self.registry

        def deserialize_cuda_engine(self, plan):
            module.calls.append(("deserialize_cuda_engine", bytes(plan)))
            if not deserialize_ok:
                module.logger.log(Severity.ERROR, "Serialization assertion magicTag failed")
                return None
            return Engine()

    module.ILogger = ILogger
    module.IOutputAllocator = IOutputAllocator
    module.Runtime = Runtime
    return module


@pytest.fixture
def install(monkeypatch):
    monkeypatch.delenv(tensorrt_python.MODULE_ENV, raising=False)

    def put(*modules):
        for module in modules:
            monkeypatch.setitem(sys.modules, module.__name__, module)
            # find_spec() of a module in sys.modules reads its __spec__.
            module.__spec__ = types.SimpleNamespace(name=module.__name__, submodule_search_locations=None)
        return modules

    return put


def options(device_id=0, budget=None, **fields):
    return EngineLoadOptions(device_id=device_id, weight_streaming_budget=budget, **fields)


def load(module_name="tensorrt", **fields):
    provider = TensorRTProvider([module_name], device_count=lambda: 1, synchronize=lambda: None)
    return provider.deserialize(memoryview(PLAN), 0, options(**fields))


def test_no_cuda_device_never_creates_a_runtime(install):
    (trt,) = install(make_module("tensorrt"))
    provider = TensorRTProvider(["tensorrt"], device_count=lambda: 0)
    with pytest.raises(NoDeviceError, match="no CUDA device"):
        provider.deserialize(memoryview(PLAN), 0, options())
    assert trt.Runtime.created == 0
    assert trt.calls == []


def test_device_id_past_the_count(install):
    (trt,) = install(make_module("tensorrt"))
    provider = TensorRTProvider(["tensorrt"], device_count=lambda: 1)
    with pytest.raises(NoDeviceError, match="device 1.*sees 1"):
        provider.deserialize(memoryview(PLAN), 1, options(device_id=1))
    assert trt.Runtime.created == 0


def test_test_plans_are_not_accepted(install):
    (trt,) = install(make_module("tensorrt"))
    provider = TensorRTProvider(["tensorrt"], device_count=lambda: 1)
    with pytest.raises(NotAcceptedError):
        provider.deserialize(memoryview(b"TTE-TEST-ENGINE\n{}"), 0, options())
    assert trt.Runtime.created == 0


def test_missing_module_names_the_pip_command(install):
    provider = TensorRTProvider(["tensorrt_not_installed_here"], device_count=lambda: 1)
    with pytest.raises(MissingPackageError, match="pip install"):
        provider.deserialize(memoryview(PLAN), 0, options())
    default = TensorRTProvider(["no_trt_a", "no_trt_b"], device_count=lambda: 1)
    with pytest.raises(MissingPackageError, match="no_trt_a, no_trt_b"):
        default.deserialize(memoryview(PLAN), 0, options())


def test_default_hint_lists_the_extras(monkeypatch):
    assert "[tensorrt]" in tensorrt_python.INSTALL_HINT and "tensorrt-lean-cu13" in tensorrt_python.INSTALL_HINT
    assert tensorrt_python.DEFAULT_MODULES == ("tensorrt", "tensorrt_lean", "tensorrt_dispatch", "tensorrt_rtx")


def test_module_order_and_environment_override(install, monkeypatch):
    assert tensorrt_python.configured_modules() == tensorrt_python.DEFAULT_MODULES
    assert tensorrt_python.configured_modules(["tensorrt_rtx"]) == ("tensorrt_rtx",)
    monkeypatch.setenv(tensorrt_python.MODULE_ENV, "tensorrt_lean, tensorrt")
    assert tensorrt_python.configured_modules() == ("tensorrt_lean", "tensorrt")
    install(make_module("tensorrt"), make_module("tensorrt_lean"))
    provider = TensorRTProvider(device_count=lambda: 1)
    engine = provider.deserialize(memoryview(PLAN), 0, options())
    assert engine.module_name == "tensorrt_lean"


def test_falls_through_to_the_next_installed_module(install):
    full, rtx = install(make_module("tensorrt", deserialize_ok=False), make_module("tensorrt_rtx"))
    provider = TensorRTProvider(["tensorrt", "tensorrt_rtx"], device_count=lambda: 1)
    engine = provider.deserialize(memoryview(PLAN), 0, options())
    assert engine.module_name == "tensorrt_rtx"
    assert full.calls == [("deserialize_cuda_engine", PLAN)]


def test_deserialize_failure_says_why(install):
    install(make_module("tensorrt", deserialize_ok=False))
    provider = TensorRTProvider(["tensorrt"], device_count=lambda: 1)
    with pytest.raises(ExecutionError, match="magicTag.*minor version"):
        provider.deserialize(memoryview(PLAN), 0, options())


def test_tensorrt_errors_the_exception_carries_are_logged_at_info(install, caplog):
    # Shown with the log-level switch, not before the exception that says it.
    install(make_module("tensorrt", deserialize_ok=False))
    provider = TensorRTProvider(["tensorrt"], device_count=lambda: 1)
    caplog.set_level(logging.DEBUG, logger="torch_tensorrt_executorch_runtime")
    with pytest.raises(ExecutionError, match="magicTag"):
        provider.deserialize(memoryview(PLAN), 0, options())
    logged = [(r.levelno, r.getMessage()) for r in caplog.records if "magicTag" in r.getMessage()]
    assert logged == [(logging.INFO, "tensorrt: Serialization assertion magicTag failed")]
    # An error no call collects (no exception will say it) stays at error.
    caplog.clear()
    provider.tensorrt_log.log("tensorrt", "ERROR", "an error outside any call")
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [
        (logging.ERROR, "tensorrt: an error outside any call")
    ]
    # An internal error is an error even while a call collects it.
    caplog.clear()
    with provider.tensorrt_log.collect_errors() as collected:
        provider.tensorrt_log.log("tensorrt", "INTERNAL_ERROR", "unrecoverable")
    assert collected == ["unrecoverable"]
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [(logging.ERROR, "tensorrt: unrecoverable")]


# Version-compatible plans embed the lean runtime as host code, which
# TensorRT runs only when allowed (NvInferRuntime.h:2139, default false);
# trtexec and Polygraphy allow it on every runtime, the full one included.
def test_every_runtime_allows_engine_host_code_unless_refused(install):
    lean, full = install(make_module("tensorrt_lean"), make_module("tensorrt"))
    load("tensorrt_lean")
    assert lean.runtime.engine_host_code_allowed is True
    provider = TensorRTProvider(["tensorrt"], device_count=lambda: 1, synchronize=lambda: None)
    provider.deserialize(memoryview(PLAN), 0, options())
    assert full.runtime.engine_host_code_allowed is True
    provider.deserialize(memoryview(PLAN), 0, options(engine_host_code_allowed=False))
    assert full.runtime.engine_host_code_allowed is False, "the same runtime refuses it for this load"


def test_refused_host_code_is_named_when_deserialize_fails(install):
    install(make_module("tensorrt", deserialize_ok=False))
    with pytest.raises(ExecutionError, match="engine_host_code_allowed=False"):
        load(engine_host_code_allowed=False)


def test_one_runtime_per_module_and_device(install):
    (trt,) = install(make_module("tensorrt"))
    provider = TensorRTProvider(["tensorrt"], device_count=lambda: 2)
    for device in (0, 0, 1, 1):
        provider.deserialize(memoryview(PLAN), device, options(device_id=device))
    assert trt.Runtime.created == 2


def test_engine_describes_its_tensors(install):
    tensors = [
        ("cache", TensorIOMode.INPUT, DataType.HALF, (4, 8), [((4, 8), (4, 8), (4, 8))]),
        ("out", TensorIOMode.OUTPUT, DataType.HALF, (4, 8), None),
        ("ids", TensorIOMode.INPUT, DataType.INT64, (-1,), [((1,), (4,), (16,))]),
        ("mask", TensorIOMode.OUTPUT, DataType.BOOL, (-1,), None),
        ("scale", TensorIOMode.INPUT, DataType.BF16, (1,), [((1,), (1,), (1,))]),
        ("q", TensorIOMode.OUTPUT, DataType.FP8, (2,), None),
    ]
    install(make_module("tensorrt", tensors, aliased={"out": "cache", "mask": ""}))
    engine = load()
    described = [(t.name, t.is_input, t.dtype, t.rank, t.aliased_input) for t in engine.io_tensors]
    assert described == [
        ("cache", True, "float16", 2, None),
        ("out", False, "float16", 2, "cache"),
        ("ids", True, "int64", 1, None),
        ("mask", False, "bool", 1, None),
        ("scale", True, "bfloat16", 1, None),
        ("q", False, "float8_e4m3fn", 1, None),
    ]
    assert engine.num_profiles == 2
    assert engine.profile_shape(0, "ids") == ((1,), (4,), (16,))


def test_unsupported_dtype_is_refused(install):
    tensors = [("w", TensorIOMode.INPUT, DataType.INT4, (4,), [((4,), (4,), (4,))])]
    install(make_module("tensorrt", tensors))
    with pytest.raises(NotSupportedError, match="INT4"):
        load()


# One context per profile, switched once at load: a switch "will trigger
# layer resource updates on the next call of enqueueV3"
# (NvInferRuntime.h:4272), which a CUDA-graph replay never makes.
def test_shapes_addresses_and_enqueue_on_the_profiles_own_context(install):
    (trt,) = install(make_module("tensorrt"))
    engine = load()
    assert [c for c in trt.calls if c[0] == "set_optimization_profile_async"] == [
        ("set_optimization_profile_async", 1, 1, 0)
    ], "context 1 is switched to profile 1 once, at load"
    trt.calls.clear()
    engine.select_profile(1, 77)
    engine.set_input_shape("x", (3, 4))
    assert engine.get_output_shape("y") == (3, 4)
    engine.set_tensor_address("x", 0x1000)
    engine.set_tensor_address("y", 0x2000)
    engine.enqueue(0x5000)
    engine.select_profile(0, 77)
    engine.enqueue(0x5000)
    assert not [c for c in trt.calls if c[0] == "set_optimization_profile_async"], "no switch at call time"
    assert ("set_tensor_address", 1, "y", 0x2000) in trt.calls
    assert trt.calls[-2:] == [("execute_async_v3", 1, 0x5000), ("execute_async_v3", 0, 0x5000)]
    with pytest.raises(InvalidArgumentError, match="profile 5"):
        engine.select_profile(5, 0)
    with pytest.raises(InvalidArgumentError, match=r"\[9, 4\].*outside profile"):
        engine.set_input_shape("x", (9, 4))
    with pytest.raises(ExecutionError, match="enqueue failed"):
        engine.enqueue(0xBAD)


# The native provider's rules (NvInferRuntime.h:3648,3677): an explicit
# budget clamped to the streamable size, TensorRT's own default (streaming
# disabled) when none is asked, read back because the binding drops the
# setter's answer.
def test_weight_streaming_budget(install):
    (trt,) = install(make_module("tensorrt", streamable=1 << 20))
    engine = load(budget=4096)
    assert ("create_execution_context", 4096, None) in trt.calls
    assert engine._engine.weight_streaming_budget_v2 == 4096
    assert engine.streams_weights


def test_weight_streaming_clamps_and_defaults_to_tensorrts_default(install):
    (trt,) = install(make_module("tensorrt", streamable=1 << 20))
    assert load(budget=1 << 40)._engine.weight_streaming_budget_v2 == 1 << 20
    assert not load(budget=1 << 40).streams_weights, "a budget of everything streams nothing"
    trt.calls.clear()
    unasked = load()
    assert not [c for c in trt.calls if c[0] == "set_budget"], "TensorRT's default is left in place"
    assert unasked._engine.weight_streaming_budget_v2 == 1 << 20 and not unasked.streams_weights


def test_weight_streaming_refused_budgets(install):
    install(make_module("tensorrt", streamable=1 << 20, budget_accepted=False))
    with pytest.raises(ExecutionError, match="refused a weight streaming budget of 4096"):
        load(budget=4096)
    # Without a request nothing is set, so nothing is refused.
    assert not load().streams_weights


def test_weight_streaming_ignored_for_non_streaming_engines(install, caplog):
    (trt,) = install(make_module("tensorrt", streamable=0))
    load(budget=4096)
    assert not [c for c in trt.calls if c[0] == "set_budget"]
    assert "not built with weight streaming" in caplog.text


# enqueueV3 "will become synchronous, and the graph will not be capturable"
# while weights stream (NvInferRuntime.h:4642); TensorRT-RTX answers per
# context and stream.
def test_capturable(install):
    install(make_module("tensorrt", streamable=1 << 20))
    assert load(budget=0).capturable(7) is False
    assert load(budget=1 << 20).capturable(7) is True
    install(make_module("tensorrt_rtx", stream_capturable=False))
    assert load("tensorrt_rtx").capturable(7) is False
    install(make_module("tensorrt_rtx", stream_capturable=True))
    assert load("tensorrt_rtx").capturable(7) is True
    # TensorRT-RTX: not capturable unless the engine says so.
    install(make_module("tensorrt_rtx"))
    assert load("tensorrt_rtx").capturable(7) is False
    install(make_module("tensorrt"))
    assert load().capturable(7) is True, "TensorRT itself is capturable with its weights resident"


# What the backend cannot bind is refused at load, as the native provider
# does: vectorized or channel-last formats (NvInferRuntime.h:1428, kLINEAR
# only) and host-memory tensors (getTensorLocation, :3105).
def test_non_linear_formats_are_refused(install):
    install(make_module("tensorrt", formats={"x": TensorFormat.CHW4}))
    with pytest.raises(NotSupportedError, match="'x' uses TensorRT format 'Four wide channel vectorized"):
        load()
    install(make_module("tensorrt", formats={}))
    load()


def test_vectorized_formats_are_refused_without_the_format_enum(install):
    install(make_module("tensorrt_lean", vectorized={"y": 1}))
    with pytest.raises(NotSupportedError, match="'y' uses TensorRT format"):
        load("tensorrt_lean")


def test_host_memory_tensors_are_refused(install):
    install(make_module("tensorrt", locations={"x": TensorLocation.HOST}))
    with pytest.raises(NotSupportedError, match="'x' lives in host memory"):
        load()


# Engines without dynamic inputs may define no profile ranges: a static
# input ranges over its own shape, as in the native provider; a dynamic one
# without a range is refused.
@pytest.mark.parametrize("ranges", [None, []], ids=["raises", "empty"])
def test_static_inputs_without_profile_ranges_use_their_shape(install, ranges):
    tensors = [
        ("x", TensorIOMode.INPUT, DataType.FLOAT, (2, 4), ranges),
        ("y", TensorIOMode.OUTPUT, DataType.FLOAT, (2, 4), None),
    ]
    (trt,) = install(make_module("tensorrt", tensors))
    engine = load()
    assert engine.profile_shape(1, "x") == ((2, 4), (2, 4), (2, 4))
    tensors[0] = ("x", TensorIOMode.INPUT, DataType.FLOAT, (-1, 4), ranges)
    install(make_module("tensorrt", tensors))
    with pytest.raises(InvalidProgramError, match=r"dynamic input 'x' \(\[-1, 4\]\) no shape range"):
        load().profile_shape(0, "x")


class FakeDeviceMemory:
    """DeviceBlock's interface over made-up addresses, recording what is asked."""

    def __init__(self, log, device, fail=False):
        self.log, self.device, self.fail = log, device, fail
        self.address = self.nbytes = 0

    def reserve(self, nbytes):
        self.log.append(("reserve", self.device, nbytes))
        if self.fail:
            raise MemoryError("out of device memory")
        if nbytes > self.nbytes:
            self.address, self.nbytes = 0x10000 * (len(self.log) + 1), nbytes
        return self.address

    def free(self):
        self.log.append(("free", self.device, self.nbytes))


def data_dependent_engine(install, fail=False, device_id=0):
    (module,) = install(make_module("tensorrt", dynamic_outputs=("y",)))
    memory_log = []
    provider = TensorRTProvider(
        ["tensorrt"], device_count=lambda: 2, synchronize=lambda: None,
        device_memory=lambda device: FakeDeviceMemory(memory_log, device, fail),
    )
    engine = provider.deserialize(memoryview(PLAN), device_id, options(device_id=device_id))
    return module, engine, memory_log


def test_a_data_dependent_output_gets_an_output_allocator(install):
    """A -1 after the input shapes are set: the output gets an allocator on the context that runs it
    (NvInferRuntime.h 11.1 :4371-4373), which hands TensorRT the bound buffer when it fits."""
    module, engine, memory_log = data_dependent_engine(install)
    engine.set_input_shape("x", (4, 4))
    assert engine.get_output_shape("y") == (-1, 4)
    assert ("set_output_allocator", 0, "y") in module.calls
    engine.set_tensor_address("y", 0x4000)
    for produced in [(3, 4), (0, 4), (4, 4)]:
        module.produce = {"y": (64, produced)}
        engine.set_output_capacity("y", 64)
        engine.enqueue(7)
        assert engine.output_result("y") == (produced, 0x4000)
    assert memory_log == [], "the bound held every request"
    assert [c for c in module.calls if c[0] == "set_output_allocator"] == [("set_output_allocator", 0, "y")]


def test_a_request_past_the_bound_gets_memory_grown_never_shrunk(install):
    module, engine, memory_log = data_dependent_engine(install, device_id=1)
    engine.get_output_shape("y")
    engine.set_tensor_address("y", 0x4000)
    results = []
    for request in (100, 400, 200):
        module.produce = {"y": (request, (2, 4))}
        engine.set_output_capacity("y", 64)
        engine.enqueue(7)
        results.append(engine.output_result("y"))
    assert memory_log == [("reserve", 1, 100), ("reserve", 1, 400), ("reserve", 1, 200)]
    assert results[1] == results[2] and results[0] != results[1], "grown once, then kept"
    assert all(address != 0x4000 for _, address in results)
    engine.close()
    assert memory_log[-1] == ("free", 1, 400)


def test_no_memory_fails_the_run_with_the_reason(install):
    module, engine, _ = data_dependent_engine(install, fail=True)
    engine.get_output_shape("y")
    engine.set_tensor_address("y", 0x4000)
    module.produce = {"y": (100, (2, 4))}
    engine.set_output_capacity("y", 64)
    with pytest.raises(ExecutionError, match="enqueue failed"):
        engine.enqueue(7)
    with pytest.raises(ExecutionError, match=r"no memory for output 'y' \(100 bytes\): out of device memory"):
        engine.output_result("y")


def test_each_profiles_context_has_its_own_output_allocator(install):
    module, engine, _ = data_dependent_engine(install)
    engine.get_output_shape("y")
    engine.select_profile(1, 7)
    engine.get_output_shape("y")
    engine.set_tensor_address("y", 0x8000)
    module.produce = {"y": (32, (1, 4))}
    engine.set_output_capacity("y", 64)
    engine.enqueue(7)
    assert engine.output_result("y") == ((1, 4), 0x8000)
    installed = [c for c in module.calls if c[0] == "set_output_allocator"]
    assert installed == [("set_output_allocator", 0, "y"), ("set_output_allocator", 1, "y")]


def test_a_shape_never_reported_is_an_error(install):
    module, engine, _ = data_dependent_engine(install)
    engine.get_output_shape("y")
    engine.set_output_capacity("y", 64)
    engine.enqueue(7)  # the engine produced nothing: no allocation, no shape
    with pytest.raises(ExecutionError, match="did not report the shape of data-dependent output 'y'"):
        engine.output_result("y")
    with pytest.raises(ExecutionError, match="its shape was never unknown"):
        engine.output_result("x")


def test_safety_engines_are_refused(install):
    install(make_module("tensorrt", capability=EngineCapability.SAFETY))
    with pytest.raises(NotSupportedError, match="EngineCapability SAFETY"):
        load()
    install(make_module("tensorrt", capability=EngineCapability.STANDARD))
    load()


# setDLACore (NvInferRuntime.h:1877) does nothing when the core does not
# exist: refused instead. Its range is [0, getNbDlaCores()) (:1867): -1,
# the runtime's initial value (:1865), is set back only after a core was.
def test_dla_core(install):
    (trt,) = install(make_module("tensorrt", dla_cores=2))
    load(dla_core=1)
    assert trt.runtime.DLA_core == 1
    with pytest.raises(InvalidArgumentError, match="dla_core=2: this device has 2 DLA core"):
        load(dla_core=2)


def test_dla_core_is_reset_only_after_one_was_set(install):
    (trt,) = install(make_module("tensorrt", dla_cores=2))
    provider = TensorRTProvider(["tensorrt"], device_count=lambda: 1, synchronize=lambda: None)
    for core in (None, None, 1, None, None):
        provider.deserialize(memoryview(PLAN), 0, options(dla_core=core))
    assert [c for c in trt.calls if c[0] == "set_dla_core"] == [("set_dla_core", 1), ("set_dla_core", -1)]


def test_plugin_libraries_load_once_per_runtime(install):
    (trt,) = install(make_module("tensorrt", plugins=True))
    provider = TensorRTProvider(["tensorrt"], device_count=lambda: 1, synchronize=lambda: None)
    for _ in range(2):
        provider.deserialize(memoryview(PLAN), 0, options(plugin_libraries=("/opt/p/libmine.so",)))
    assert trt.calls.count(("load_library", "/opt/p/libmine.so")) == 1
    assert trt.calls.count(("init_plugins", "")) == 1, "TensorRT's own plugins, once per module"
    with pytest.raises(InvalidArgumentError, match="could not load plugin library '/missing.so'"):
        provider.deserialize(memoryview(PLAN), 0, options(plugin_libraries=("/missing.so",)))


# A registry refuses a library whose plugins it holds already
# (NvInferRuntimeCommon.h:133-134), and the runtimes of two devices may hand
# back one registry (getPluginRegistry, NvInferRuntime.h:2105): a library is
# loaded once per registry, not once per runtime.
@pytest.mark.parametrize("shared", [True, False])
def test_plugin_libraries_load_once_per_registry(install, shared):
    (trt,) = install(make_module("tensorrt", shared_registry=shared))
    provider = TensorRTProvider(["tensorrt"], device_count=lambda: 2, synchronize=lambda: None)
    for device in (0, 1, 0, 1):
        provider.deserialize(memoryview(PLAN), device,
                             options(device_id=device, plugin_libraries=("/opt/p/libmine.so",)))
    assert trt.Runtime.created == 2
    assert trt.calls.count(("load_library", "/opt/p/libmine.so")) == (1 if shared else 2)


# TensorRT-RTX compiles kernels at load; its runtime cache keeps them
# between processes: read when the engine loads, written (atomically) when
# it closes.
def test_runtime_cache_is_read_and_written(install, tmp_path):
    (rtx,) = install(make_module("tensorrt_rtx", runtime_cache=True))
    path = tmp_path / "model.rtxcache"
    engine = load("tensorrt_rtx", runtime_cache_path=str(path))
    assert all(c[2] is not None for c in rtx.calls if c[0] == "create_execution_context")
    engine.close()
    assert path.read_bytes() == b"+more kernels"
    load("tensorrt_rtx", runtime_cache_path=str(path)).close()
    assert ("cache_deserialize", b"+more kernels") in rtx.calls
    assert path.read_bytes() == b"+more kernels+more kernels"
    assert not list(tmp_path.glob("*.tmp")) and not list(tmp_path.glob(".*.tmp"))


def test_runtime_cache_temporaries_are_unique_per_engine(install, tmp_path, monkeypatch):
    # Two engines of one process saving one cache at once must not write into
    # one temporary file.
    install(make_module("tensorrt_rtx", runtime_cache=True))
    path = tmp_path / "model.rtxcache"
    first = load("tensorrt_rtx", runtime_cache_path=str(path))
    second = load("tensorrt_rtx", runtime_cache_path=str(path))
    temporaries = []
    real_replace = os.replace

    def recording_replace(source, target):
        temporaries.append(str(source))
        real_replace(source, target)

    monkeypatch.setattr(trt_runtime_cache.os, "replace", recording_replace)
    first.close()
    second.close()
    assert len(temporaries) == 2 and temporaries[0] != temporaries[1]


def test_nvtx_switch(install, monkeypatch):
    install(make_module("tensorrt"))
    ranges = []

    class FakeNvtx(types.ModuleType):
        def annotate(self, name, domain=None):
            ranges.append(name)
            import contextlib

            return contextlib.nullcontext()

    monkeypatch.setitem(sys.modules, "nvtx", FakeNvtx("nvtx"))
    engine = load()
    tensorrt_python.set_nvtx_enabled(True)
    try:
        engine.enqueue(1)
    finally:
        tensorrt_python.set_nvtx_enabled(False)
    engine.enqueue(1)
    assert ranges == ["TensorRTBackend enqueue (tensorrt)"]


def test_registered_at_import(tte):
    names = tte.providers.providers()
    native = [name for name in names if name.startswith("tensorrt-native-")]
    if native:
        # Joined by the Python provider only where a TensorRT module is installed.
        assert ("tensorrt-python" in names) == bool(tensorrt_python.installed_modules())
        assert names[: len(native)] == native
    else:
        assert "tensorrt-python" in names


def test_a_plan_loaded_twice_is_deserialized_once(install):
    """create_execution_context: another engine object on the same ICudaEngine, with contexts of its own
    (one per profile), its own profile and addresses; either may close first."""
    (module,) = install(make_module("tensorrt"))
    provider = TensorRTProvider(["tensorrt"], device_count=lambda: 1, synchronize=lambda: None)
    first = provider.deserialize(memoryview(PLAN), 0, options())
    second = provider.create_execution_context(first, options())
    assert [c for c in module.calls if c[0] == "deserialize_cuda_engine"] == [("deserialize_cuda_engine", PLAN)]
    assert second._engine is first._engine
    assert first._engine.contexts == 4, "two contexts (one per profile) for each engine object"
    assert second.io_tensors == first.io_tensors and second.num_profiles == first.num_profiles
    first.select_profile(1, None)
    first.set_tensor_address("x", 256)
    second.set_tensor_address("x", 512)
    addressed = [c for c in module.calls if c[0] == "set_tensor_address"]
    assert addressed == [("set_tensor_address", 1, "x", 256), ("set_tensor_address", 2, "x", 512)]
    first.close()
    second.set_input_shape("x", (3, 4))
    second.enqueue(7)
    assert module.calls[-1] == ("execute_async_v3", 2, 7)
    second.close()
    with pytest.raises(InvalidArgumentError, match="closed"):
        provider.create_execution_context(second, options())


def test_the_first_loads_weight_streaming_budget_stays_in_force(install):
    (module,) = install(make_module("tensorrt", streamable=1000))
    provider = TensorRTProvider(["tensorrt"], device_count=lambda: 1, synchronize=lambda: None)
    first = provider.deserialize(memoryview(PLAN), 0, options(budget=400))
    second = provider.create_execution_context(first, options(budget=900))
    assert first._engine.weight_streaming_budget_v2 == 400
    assert second.streams_weights and first.streams_weights
