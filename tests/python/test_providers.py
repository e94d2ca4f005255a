"""The provider extension point: Python providers over the provider ABI, and libraries."""

from __future__ import annotations

import ctypes
import json
import logging
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

SCALE_MAGIC = b"PY-SCALE-ENGINE\n"


class ScaleEngine:
    """y = x * factor on host memory; x is float32 [1..8, 3]."""

    def __init__(self, factor: float, log: list):
        from torch_tensorrt_executorch_runtime.providers import IoTensor

        self.factor = factor
        self.log = log
        self.io_tensors = [
            IoTensor("y", is_input=False, dtype="float32", rank=2),  # outputs first: bound by name
            IoTensor("x", is_input=True, dtype="float32", rank=2),
        ]
        self.num_profiles = 1
        self.shape = None
        self.addresses = {}

    def profile_shape(self, profile, name):
        assert name == "x"
        return (1, 3), (2, 3), (8, 3)

    def set_input_shape(self, name, shape):
        self.shape = shape

    def get_output_shape(self, name):
        return self.shape

    def set_tensor_address(self, name, address):
        self.addresses[name] = address

    def enqueue(self, stream):
        assert stream is None  # host memory: no stream
        count = math.prod(self.shape)
        x = np.ctypeslib.as_array((ctypes.c_float * count).from_address(self.addresses["x"]))
        y = np.ctypeslib.as_array((ctypes.c_float * count).from_address(self.addresses["y"]))
        y[:] = x * self.factor
        self.log.append(("enqueue", self.shape))

    def close(self):
        self.log.append(("close",))


class ScaleProvider:
    def __init__(self):
        self.log = []

    def deserialize(self, plan, device_id, options):
        data = bytes(plan)
        if not data.startswith(SCALE_MAGIC):
            return None
        document = json.loads(data[len(SCALE_MAGIC) :])
        if document.get("fail"):
            raise RuntimeError(document["fail"])
        self.log.append(("deserialize", device_id))
        return ScaleEngine(document["factor"], self.log)

    def close(self):
        self.log.append(("release",))


def scale_plan(factor: float, **extra) -> bytes:
    return SCALE_MAGIC + json.dumps({"factor": factor, **extra}).encode()


@pytest.fixture
def scale_program(tmp_path):
    from torch_tensorrt_executorch_runtime.pack import EngineSpec, TensorSpec, pack_program

    def make(factor=3.0, name="scale", **extra):
        path = tmp_path / f"{name}.pte"
        pack_program(
            path,
            [
                EngineSpec(
                    scale_plan(factor, **extra),
                    [TensorSpec("x", "float32", [(1, 2, 8), 3])],
                    [TensorSpec("y", "float32", ["x:0", 3])],
                )
            ],
        )
        return path

    return make


def test_python_host_provider_runs_a_program(tte, scale_program):
    provider = ScaleProvider()
    name = tte.register_provider(provider, name="py-scale", memory="host")
    try:
        assert name in tte.providers.providers()
        program = tte.load(scale_program(2.5), options={"provider": "py-scale"})
        x = torch.arange(12, dtype=torch.float32).reshape(4, 3)
        (y,) = program.forward(x)
        assert torch.allclose(y, x * 2.5)
        (y,) = program.forward(torch.ones(1, 3))
        assert torch.allclose(y, torch.full((1, 3), 2.5))
        assert ("deserialize", 0) in provider.log
        assert ("enqueue", (4, 3)) in provider.log and ("enqueue", (1, 3)) in provider.log
        (delegate,) = program.delegates
        assert delegate.provider == "py-scale"
        program.close()
        assert ("close",) in provider.log
    finally:
        tte.unregister_provider("py-scale")
    assert "py-scale" not in tte.providers.providers()
    assert ("release",) in provider.log


def test_python_provider_error_reaches_the_user(tte, scale_program):
    tte.register_provider(ScaleProvider(), name="py-scale-fail", memory="host")
    try:
        program = tte.load(scale_program(fail="plan refused by the test"), options={"provider": "py-scale-fail"})
        with pytest.raises(tte.errors.Error, match="plan refused by the test"):
            program.forward(torch.ones(2, 3))
    finally:
        tte.unregister_provider("py-scale-fail")


def test_engines_outlive_unregistration(tte, scale_program):
    provider = ScaleProvider()
    tte.register_provider(provider, name="py-scale-alive", memory="host")
    program = tte.load(scale_program(4.0), options={"provider": "py-scale-alive"})
    program.load_method()
    tte.unregister_provider("py-scale-alive")
    assert ("release",) not in provider.log
    (y,) = program.forward(torch.ones(2, 3))
    assert torch.allclose(y, torch.full((2, 3), 4.0))
    program.close()
    assert provider.log[-1] == ("release",)


class RecordingScaleProvider(ScaleProvider):
    """Keeps the EngineLoadOptions of every deserialize."""

    def __init__(self):
        super().__init__()
        self.options = []

    def deserialize(self, plan, device_id, options):
        self.options.append(options)
        return super().deserialize(plan, device_id, options)


# tte.load's options cross the C API, ExecuTorch's backend options, the
# backend's load options and the provider ABI (TteEngineLoadOptions) before
# a Python provider sees them as EngineLoadOptions: a budget past 32 bits,
# an empty budget that leaves the compile spec's, and every TensorRT option.
def test_load_options_reach_the_provider(tte, tmp_path):
    from torch_tensorrt_executorch_runtime.pack import EngineSpec, TensorSpec, pack_program
    from torch_tensorrt_executorch_runtime.providers import EngineLoadOptions

    path = tmp_path / "budget.pte"
    pack_program(
        path,
        [
            EngineSpec(
                scale_plan(2.0),
                [TensorSpec("x", "float32", [(1, 2, 8), 3])],
                [TensorSpec("y", "float32", ["x:0", 3])],
                weight_streaming_budget=4096,
            )
        ],
    )
    provider = RecordingScaleProvider()
    tte.register_provider(provider, name="py-scale-options", memory="host")

    def received(**options):
        count = len(provider.options)
        with tte.load(path, options={"provider": "py-scale-options", **options}) as program:
            program.load_method()
        assert len(provider.options) == count + 1, "one deserialize per load"
        return provider.options[-1]

    try:
        assert received() == EngineLoadOptions(device_id=0, weight_streaming_budget=4096)
        assert received(weight_streaming_budget=2 << 30).weight_streaming_budget == 2 << 30
        assert received(weight_streaming_budget="").weight_streaming_budget == 4096, "empty: the compile spec's"
        cache = str(tmp_path / "engine.rtxcache")
        assert received(
            engine_host_code_allowed=False, dla_core=1, plugin_libraries="/a/libp.so:/b/libq.so",
            runtime_cache_path=cache
        ) == EngineLoadOptions(
            device_id=0,
            weight_streaming_budget=4096,
            engine_host_code_allowed=False,
            dla_core=1,
            plugin_libraries=("/a/libp.so", "/b/libq.so"),
            runtime_cache_path=cache,
        )
    finally:
        tte.unregister_provider("py-scale-options")


class CountingScaleEngine(ScaleEngine):
    """ScaleEngine that counts the calls it gets, and fails its enqueue on request."""

    def __init__(self, factor, log):
        super().__init__(factor, log)
        self.calls = {"set_input_shape": 0, "get_output_shape": 0, "set_tensor_address": 0, "enqueue": 0}
        self.fail_next_enqueue = False

    def set_input_shape(self, name, shape):
        self.calls["set_input_shape"] += 1
        super().set_input_shape(name, shape)

    def get_output_shape(self, name):
        self.calls["get_output_shape"] += 1
        return super().get_output_shape(name)

    def set_tensor_address(self, name, address):
        self.calls["set_tensor_address"] += 1
        super().set_tensor_address(name, address)

    def enqueue(self, stream):
        self.calls["enqueue"] += 1
        if self.fail_next_enqueue:
            self.fail_next_enqueue = False
            raise RuntimeError("enqueue told to fail")
        super().enqueue(stream)


class CountingScaleProvider(ScaleProvider):
    def __init__(self):
        super().__init__()
        self.engines = []

    def deserialize(self, plan, device_id, options):
        engine = super().deserialize(plan, device_id, options)
        engine = CountingScaleEngine(engine.factor, self.log)
        self.engines.append(engine)
        return engine


def test_python_provider_gets_shapes_and_addresses_only_when_they_change(tte, scale_program):
    provider = CountingScaleProvider()
    tte.register_provider(provider, name="py-scale-count", memory="host")
    try:
        program = tte.load(scale_program(2.0), options={"provider": "py-scale-count"})
        x = np.arange(6, dtype=np.float32).reshape(2, 3)
        for _ in range(3):
            (y,) = program.forward(x)
            np.testing.assert_array_equal(y, x * 2)
        (engine,) = provider.engines
        # The planned arenas do not move: one shape and two addresses for three runs.
        assert engine.calls == {"set_input_shape": 1, "get_output_shape": 1, "set_tensor_address": 2, "enqueue": 3}
        x4 = np.ones((4, 3), np.float32)
        (y,) = program.forward(x4)
        np.testing.assert_array_equal(y, x4 * 2)
        assert engine.calls["set_input_shape"] == 2 and engine.calls["get_output_shape"] == 2
        assert engine.calls["enqueue"] == 4
        addresses = engine.calls["set_tensor_address"]  # staging may have grown for the larger shape
        # After a failed enqueue the backend sends the shapes again; the addresses the
        # engine took before the failure are not sent twice.
        engine.fail_next_enqueue = True
        with pytest.raises(tte.errors.Error, match="enqueue told to fail"):
            program.forward(x4)
        (y,) = program.forward(x4)
        np.testing.assert_array_equal(y, x4 * 2)
        assert engine.calls == {
            "set_input_shape": 3, "get_output_shape": 3, "set_tensor_address": addresses, "enqueue": 6,
        }
        program.close()
    finally:
        tte.unregister_provider("py-scale-count")


class TwoContextScaleEngine(ScaleEngine):
    """ScaleEngine with one execution context per profile (as tensorrt-python):
    profile 0 takes 1..4 rows, profile 1 takes 5..8, and an address set while
    one profile is selected belongs to that profile's context only."""

    def __init__(self, factor, log):
        super().__init__(factor, log)
        self.num_profiles = 2
        self.profile = 0
        self.contexts = {0: {}, 1: {}}

    def profile_shape(self, profile, name):
        return ((1, 3), (2, 3), (4, 3)) if profile == 0 else ((5, 3), (6, 3), (8, 3))

    def select_profile(self, profile, stream):
        self.profile = profile

    def set_tensor_address(self, name, address):
        self.contexts[self.profile][name] = address

    def enqueue(self, stream):
        missing = {"x", "y"} - set(self.contexts[self.profile])
        if missing:
            raise RuntimeError(f"profile {self.profile}'s context has no address for {sorted(missing)}")
        self.addresses = self.contexts[self.profile]
        super().enqueue(stream)


class TwoContextScaleProvider(ScaleProvider):
    def deserialize(self, plan, device_id, options):
        engine = super().deserialize(plan, device_id, options)
        return TwoContextScaleEngine(engine.factor, self.log)


def test_addresses_are_kept_per_profile_context(tte, scale_program):
    # The same addresses across a profile switch still reach the new profile's context.
    tte.register_provider(TwoContextScaleProvider(), name="py-scale-contexts", memory="host")
    try:
        program = tte.load(scale_program(2.0), options={"provider": "py-scale-contexts"})
        for rows in (2, 6, 3, 7):
            x = np.arange(rows * 3, dtype=np.float32).reshape(rows, 3)
            (y,) = program.forward(x)
            np.testing.assert_array_equal(y, x * 2)
        program.close()
    finally:
        tte.unregister_provider("py-scale-contexts")


def test_duplicate_name_is_refused(tte):
    tte.register_provider(ScaleProvider(), name="py-dup", memory="host")
    try:
        with pytest.raises(tte.errors.Error, match="py-dup"):
            tte.register_provider(ScaleProvider(), name="py-dup", memory="host")
    finally:
        tte.unregister_provider("py-dup")


def test_bad_registrations(tte):
    with pytest.raises(TypeError, match="deserialize"):
        tte.register_provider(object(), name="nothing")
    with pytest.raises(ValueError, match="memory"):
        tte.register_provider(ScaleProvider(), name="x", memory="shared")
    with pytest.raises(tte.errors.Error):
        tte.unregister_provider("never-registered")


def test_not_accepted_passes_the_plan_on(run_python, tmp_path):
    """tensorrt-python and a refusing provider pass; the third provider takes the plan."""
    from torch_tensorrt_executorch_runtime.pack import EngineSpec, TensorSpec, pack_program
    from torch_tensorrt_executorch_runtime.testing import MAGIC

    path = tmp_path / "chain.pte"
    plan = MAGIC + b"not json: for the chain test"
    pack_program(path, [EngineSpec(plan, [TensorSpec("x", "float32", [3])], [TensorSpec("y", "float32", [3])])])
    result = run_python(
        f"""
        import ctypes, numpy as np
        import torch_tensorrt_executorch_runtime as tte
        from torch_tensorrt_executorch_runtime.providers import IoTensor, NotAcceptedError

        class Refuser:
            def deserialize(self, plan, device_id, options):
                raise NotAcceptedError("not mine")

        class Engine:
            io_tensors = [IoTensor("x", True, "float32", 1), IoTensor("y", False, "float32", 1)]
            num_profiles = 1
            def profile_shape(self, profile, name): return (3,), (3,), (3,)
            def set_input_shape(self, name, shape): pass
            def get_output_shape(self, name): return (3,)
            def set_tensor_address(self, name, address): setattr(self, name, address)
            def enqueue(self, stream):
                ctypes.memmove(self.y, self.x, 12)

        class Taker:
            def deserialize(self, plan, device_id, options):
                return Engine() if bytes(plan).endswith(b"chain test") else None

        tte.register_provider(Refuser(), name="refuser", memory="host")
        tte.register_provider(Taker(), name="taker", memory="host")
        print(tte.providers.providers())
        program = tte.load({str(path)!r})
        (y,) = program.forward(np.array([1, 2, 3], np.float32))
        print(y.tolist(), program.delegates[0].provider)
        """
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    # The TensorRT provider the package registered (native, when installed) comes first.
    assert lines[0].index("tensorrt-") < lines[0].index("refuser") < lines[0].index("taker")
    assert lines[-1] == "[1.0, 2.0, 3.0] taker"


def test_provider_library_registration(run_python, host_library):
    result = run_python(
        f"""
        import torch_tensorrt_executorch_runtime as tte
        print(tte.register_provider_library({str(host_library)!r}))
        print(tte.providers.providers())
        try:
            tte.register_provider_library({str(host_library)!r})
        except tte.errors.Error as exc:
            print("again:", type(exc).__name__)
        """
    )
    assert result.returncode == 0, result.stderr
    added, names, again = result.stdout.strip().splitlines()
    assert added == "['test-host']"
    # The built-in providers the environment has, in registration order: both
    # native ones with the wheel's libraries, the Python one where TensorRT's
    # (or TensorRT-RTX's) Python bindings import, as after scripts/demo.sh.
    assert names in (
        "['tensorrt-native-11', 'tensorrt-native-10', 'test-host']",
        "['tensorrt-native-11', 'tensorrt-native-10', 'tensorrt-python', 'test-host']",
        "['tensorrt-native-11', 'test-host']",
        "['tensorrt-python', 'test-host']",
    )
    assert again.startswith("again:")


def test_per_tensor_calls_of_a_python_provider_say_they_are_not_supported(tte):
    # Python providers run through the batched entry; the per-tensor entries
    # the ABI also has answer "not supported" with the reason, never succeed.
    from torch_tensorrt_executorch_runtime import errors
    from torch_tensorrt_executorch_runtime._native import abi
    from torch_tensorrt_executorch_runtime._native import providers as native_providers

    error = abi.TteError()
    status = native_providers._unbatched(ctypes.pointer(error))
    assert status == errors.TTE_ERROR_NOT_SUPPORTED
    assert error.code == errors.TTE_ERROR_NOT_SUPPORTED
    assert "batched entry" in error.text() or "compiled binding" in error.text()


class SharingScaleProvider(ScaleProvider):
    """A provider that can make another engine object on what it deserialized."""

    def create_execution_context(self, engine, options):
        self.log.append(("create_execution_context", options.device_id))
        return ScaleEngine(engine.factor, self.log)


def test_a_sharing_python_provider_deserializes_a_plan_once(tte, scale_program, caplog):
    sharing, plain = SharingScaleProvider(), ScaleProvider()
    tte.register_provider(sharing, name="py-scale-sharing", memory="host")
    tte.register_provider(plain, name="py-scale-plain", memory="host")
    try:
        path = scale_program(2.0)
        data = path.read_bytes()  # from bytes: the plan is keyed by its digest, whenever the file was written
        tte.reset_runtime_stats()
        programs = [tte.load(data, options={"provider": "py-scale-sharing"}) for _ in range(3)]
        for i, program in enumerate(programs):
            (y,) = program.forward(torch.full((i + 1, 3), float(i)))
            assert torch.equal(y, torch.full((i + 1, 3), 2.0 * i))
        assert [e[0] for e in sharing.log].count("deserialize") == 1
        assert [e[0] for e in sharing.log].count("create_execution_context") == 2
        assert tte.runtime_stats()["shared_engine_reuses"] == 2
        # Closed in any order, the others keep running.
        programs[0].close()
        (y,) = programs[2].forward(torch.ones(2, 3))
        assert torch.equal(y, torch.full((2, 3), 2.0))
        for program in programs[1:]:
            program.close()

        # Without create_execution_context: a deserialize per load, and nothing logged about it.
        with caplog.at_level(logging.WARNING):
            others = [tte.load(data, options={"provider": "py-scale-plain"}) for _ in range(2)]
            for program in others:
                program.forward(torch.ones(1, 3))
        assert [e[0] for e in plain.log].count("deserialize") == 2
        assert not [r for r in caplog.records if "execution context" in r.getMessage()]
        for program in others:
            program.close()
    finally:
        tte.unregister_provider("py-scale-sharing")
        tte.unregister_provider("py-scale-plain")
