"""The Python TensorRT provider against a stand-in `tensorrt` module.

No TensorRT can run here, so these tests give the provider a module with
TensorRT's Python API surface (Runtime, ICudaEngine, IExecutionContext,
ILogger) and check what the provider asks of it: module order and override,
no runtime without a CUDA device, host code for lean/dispatch, dtype mapping,
profiles, shapes, addresses, enqueue, aliasing, weight streaming, errors.
"""

from __future__ import annotations

import enum
import sys
import types

import pytest

from torch_tensorrt_executorch_runtime.errors import (
    ExecutionError,
    InvalidArgumentError,
    MissingPackageError,
    NoDeviceError,
    NotAcceptedError,
    NotSupportedError,
)
from torch_tensorrt_executorch_runtime.providers import EngineLoadOptions, tensorrt_python
from torch_tensorrt_executorch_runtime.providers.tensorrt_python import TensorRTProvider

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


def make_module(name: str, tensors=None, *, deserialize_ok=True, aliased=None, streamable=0):
    """A module with the parts of TensorRT's Python API the provider uses."""
    module = types.ModuleType(name)
    module.__version__ = "11.1.0"
    module.calls = []
    module.TensorIOMode = TensorIOMode
    tensors = tensors or [
        ("x", TensorIOMode.INPUT, DataType.FLOAT, (-1, 4), [((1, 4), (2, 4), (8, 4))]),
        ("y", TensorIOMode.OUTPUT, DataType.FLOAT, (-1, 4), None),
    ]

    class ILogger:
        def __init__(self):
            pass

    class Context:
        def __init__(self):
            self.shapes = {}

        def set_input_shape(self, tensor, shape):
            module.calls.append(("set_input_shape", tensor, tuple(shape)))
            if shape[0] > 8:
                module.logger.log(Severity.ERROR, f"shape {tuple(shape)} is outside profile 0")
                return False
            self.shapes[tensor] = tuple(shape)
            return True

        def get_tensor_shape(self, tensor):
            return self.shapes.get("x", (1, 4))

        def set_tensor_address(self, tensor, address):
            module.calls.append(("set_tensor_address", tensor, address))
            return True

        def set_optimization_profile_async(self, profile, stream):
            module.calls.append(("set_optimization_profile_async", profile, stream))
            return profile < 2

        def execute_async_v3(self, stream):
            module.calls.append(("execute_async_v3", stream))
            return stream != 0xBAD

    class Engine:
        num_io_tensors = len(tensors)
        num_optimization_profiles = 2
        streamable_weights_size = streamable

        def __init__(self):
            self.weight_streaming_budget_v2 = None

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
            return self._find(name)[4][0]

        def is_shape_inference_io(self, name):
            return False

        def create_execution_context(self):
            module.calls.append(("create_execution_context", self.weight_streaming_budget_v2))
            return Context()

    if aliased is not None:
        Engine.get_aliased_input_tensor = lambda self, name: aliased.get(name)

    class Runtime:
        created = 0

        def __init__(self, logger):
            Runtime.created += 1
            module.logger = logger
            self.engine_host_code_allowed = False
            module.runtime = self

        def deserialize_cuda_engine(self, plan):
            module.calls.append(("deserialize_cuda_engine", bytes(plan)))
            if not deserialize_ok:
                module.logger.log(Severity.ERROR, "Serialization assertion magicTag failed")
                return None
            return Engine()

    module.ILogger = ILogger
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


def options(device_id=0, budget=None):
    return EngineLoadOptions(device_id=device_id, weight_streaming_budget=budget)


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
    assert engine._module_name == "tensorrt_lean"


def test_falls_through_to_the_next_installed_module(install):
    full, rtx = install(make_module("tensorrt", deserialize_ok=False), make_module("tensorrt_rtx"))
    provider = TensorRTProvider(["tensorrt", "tensorrt_rtx"], device_count=lambda: 1)
    engine = provider.deserialize(memoryview(PLAN), 0, options())
    assert engine._module_name == "tensorrt_rtx"
    assert full.calls == [("deserialize_cuda_engine", PLAN)]


def test_deserialize_failure_says_why(install):
    install(make_module("tensorrt", deserialize_ok=False))
    provider = TensorRTProvider(["tensorrt"], device_count=lambda: 1)
    with pytest.raises(ExecutionError, match="magicTag.*minor version"):
        provider.deserialize(memoryview(PLAN), 0, options())


def test_lean_and_dispatch_allow_engine_host_code(install):
    lean, full = install(make_module("tensorrt_lean"), make_module("tensorrt"))
    TensorRTProvider(["tensorrt_lean"], device_count=lambda: 1).deserialize(memoryview(PLAN), 0, options())
    assert lean.runtime.engine_host_code_allowed is True
    TensorRTProvider(["tensorrt"], device_count=lambda: 1).deserialize(memoryview(PLAN), 0, options())
    assert full.runtime.engine_host_code_allowed is False


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
    engine = TensorRTProvider(["tensorrt"], device_count=lambda: 1).deserialize(memoryview(PLAN), 0, options())
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
        TensorRTProvider(["tensorrt"], device_count=lambda: 1).deserialize(memoryview(PLAN), 0, options())


def test_shapes_addresses_and_enqueue(install):
    (trt,) = install(make_module("tensorrt"))
    engine = TensorRTProvider(["tensorrt"], device_count=lambda: 1).deserialize(memoryview(PLAN), 0, options())
    engine.select_profile(1, 77)
    engine.set_input_shape("x", (3, 4))
    assert engine.get_output_shape("y") == (3, 4)
    engine.set_tensor_address("x", 0x1000)
    engine.set_tensor_address("y", 0x2000)
    engine.enqueue(0x5000)
    assert ("set_optimization_profile_async", 1, 77) in trt.calls
    assert ("set_tensor_address", "y", 0x2000) in trt.calls
    assert trt.calls[-1] == ("execute_async_v3", 0x5000)
    with pytest.raises(InvalidArgumentError, match="profile 5"):
        engine.select_profile(5, 0)
    with pytest.raises(InvalidArgumentError, match=r"\[9, 4\].*outside profile"):
        engine.set_input_shape("x", (9, 4))
    with pytest.raises(ExecutionError, match="enqueue failed"):
        engine.enqueue(0xBAD)


def test_weight_streaming_budget(install):
    (trt,) = install(make_module("tensorrt", streamable=1 << 20))
    engine = TensorRTProvider(["tensorrt"], device_count=lambda: 1).deserialize(
        memoryview(PLAN), 0, options(budget=4096)
    )
    assert ("create_execution_context", 4096) in trt.calls
    assert engine._engine.weight_streaming_budget_v2 == 4096


def test_weight_streaming_ignored_for_non_streaming_engines(install, caplog):
    (trt,) = install(make_module("tensorrt", streamable=0))
    TensorRTProvider(["tensorrt"], device_count=lambda: 1).deserialize(memoryview(PLAN), 0, options(budget=4096))
    assert ("create_execution_context", None) in trt.calls
    assert "not built with weight streaming" in caplog.text


def test_nvtx_switch(install, monkeypatch):
    install(make_module("tensorrt"))
    ranges = []

    class FakeNvtx(types.ModuleType):
        def annotate(self, name, domain=None):
            ranges.append(name)
            import contextlib

            return contextlib.nullcontext()

    monkeypatch.setitem(sys.modules, "nvtx", FakeNvtx("nvtx"))
    engine = TensorRTProvider(["tensorrt"], device_count=lambda: 1).deserialize(memoryview(PLAN), 0, options())
    tensorrt_python.set_nvtx_enabled(True)
    try:
        engine.enqueue(1)
    finally:
        tensorrt_python.set_nvtx_enabled(False)
    engine.enqueue(1)
    assert ranges == ["TensorRTBackend enqueue (tensorrt)"]


def test_registered_at_import(tte):
    names = tte.providers.providers()
    if "tensorrt-native" in names:
        assert "tensorrt-python" not in names
    else:
        assert "tensorrt-python" in names
