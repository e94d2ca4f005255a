"""The packer: programs for each placement, several methods and delegates,
aliasing, mixed backends, external data, and errors for bad specs."""

from __future__ import annotations

import json
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from torch_tensorrt_executorch_runtime.pack import (
    EngineSpec,
    PackError,
    TensorSpec,
    build_program,
    pack_program,
    plan_program,
    this_platform,
)
from torch_tensorrt_executorch_runtime.pte import DEVICE_PLANNED, DEVICE_RESIDENT, HOST, read_program

HERE = Path(__file__).resolve().parent


def blob_document(payload: bytes) -> tuple[bytes, dict, bytes]:
    magic, offset, size, engine_offset, engine_size, _ = struct.unpack_from("<4sIIIQ8s", payload)
    return magic, json.loads(payload[offset:offset + size]), payload[engine_offset:engine_offset + engine_size]


def binding_names(document: dict, is_input: bool) -> list[str]:
    return [b["name"] for b in document["io_bindings"] if b["is_input"] is is_input]


def dynamic_engine(**options) -> EngineSpec:
    return EngineSpec(
        b"dynamic-plan",
        [TensorSpec("x", "float32", [(1, 2, 16), 8])],
        [TensorSpec("y", "float32", ["x:0", 8]), TensorSpec("stats", "int32", [3])],
        **options,
    )


@pytest.fixture(scope="module")
def placements():
    return {p: build_program([dynamic_engine(device_id=1)], placement=p)
            for p in ("host", "device_planned", "device_resident")}


def test_host_placement(placements):
    method = read_program(placements["host"].program).methods[0]
    assert method.placement == HOST
    assert method.buffer_devices == {} and not any(op.startswith("et_copy") for op in method.operators)
    assert all(v.tensor.device == "cpu" and v.tensor.memory_planned for v in method.inputs + method.outputs)
    (delegate,) = method.delegates
    assert delegate.id == "TensorRTBackend" and delegate.compile_specs == ()


def test_device_planned_placement(placements):
    method = read_program(placements["device_planned"].program).methods[0]
    assert method.placement == DEVICE_PLANNED
    assert set(method.buffer_devices.values()) == {"cuda:1"}
    assert {"et_copy::_h2d_copy.out", "et_copy::_d2h_copy.out"} <= set(method.operators)
    assert all(v.tensor.device == "cpu" and v.tensor.memory_planned for v in method.inputs + method.outputs)
    assert method.delegates[0].target_device == "cuda:1"


def test_device_resident_placement(placements):
    method = read_program(placements["device_resident"].program).methods[0]
    assert method.placement == DEVICE_RESIDENT
    assert all(v.tensor.device == "cuda:1" and not v.tensor.memory_planned for v in method.inputs + method.outputs)
    assert not any(op.startswith("et_copy") for op in method.operators)
    assert method.delegates[0].target_device == "cuda:1"


@pytest.mark.parametrize("placement", ["host", "device_planned", "device_resident"])
def test_dynamic_dims_plan_their_upper_bound(placements, placement):
    method = read_program(placements[placement].program).methods[0]
    (x,) = method.inputs
    y, stats = method.outputs
    assert (x.tensor.dtype, x.tensor.sizes, x.tensor.dynamism) == ("float32", (16, 8), "dynamic_bound")
    assert (y.tensor.dtype, y.tensor.sizes, y.tensor.dynamism) == ("float32", (16, 8), "dynamic_bound")
    assert (stats.tensor.dtype, stats.tensor.sizes, stats.tensor.dynamism) == ("int32", (3,), "static")


@pytest.mark.parametrize("placement", ["host", "device_planned", "device_resident"])
def test_blob_is_the_engine_spec_blob(placements, placement):
    spec = dynamic_engine(device_id=1)
    (delegate,) = read_program(placements[placement].program).methods[0].delegates
    assert delegate.payload == spec.blob()
    magic, document, engine = blob_document(delegate.payload)
    assert magic == b"TR01" and engine == b"dynamic-plan"
    assert document["io_bindings"] == [
        {"name": "x", "dtype": "", "shape": [], "is_input": True},
        {"name": "y", "dtype": "", "shape": [], "is_input": False},
        {"name": "stats", "dtype": "", "shape": [], "is_input": False},
    ]
    assert document["device_id"] == 1 and document["target_platform"] == this_platform()


def test_blob_metadata_and_compile_specs():
    spec = dynamic_engine(
        hardware_compatible=True,
        serialized_metadata="bWV0YQ==",
        target_platform="linux_aarch64",
        weight_streaming_budget=123456789,
        write_binding_names=False,
    )
    (delegate,) = read_program(pack_program(None, [spec], placement="device_planned")).methods[0].delegates
    assert [(s.key, s.value) for s in delegate.compile_specs] == [
        ("weight_streaming_budget", b"123456789"),
        ("target_device", b"cuda:0"),
    ]
    _, document, _ = blob_document(delegate.payload)
    assert document["io_bindings"] == []
    assert (document["hardware_compatible"], document["serialized_metadata"], document["target_platform"]) == (
        True, "bWV0YQ==", "linux_aarch64",
    )


def test_writes_the_file(tmp_path):
    path = tmp_path / "model.pte"
    data = pack_program(path, [dynamic_engine()])
    assert path.read_bytes() == data
    assert list(tmp_path.iterdir()) == [path]
    assert read_program(path).method_names == ("forward",)


def _delegate_arguments(data: bytes, method_name: str) -> list[list[int]]:
    """The value indices each DelegateCall passes, from exir's own deserializer."""
    from executorch.exir._serialize._program import deserialize_pte_binary
    from executorch.exir.schema import DelegateCall

    program = deserialize_pte_binary(data).program
    plan = next(p for p in program.execution_plan if p.name == method_name)
    calls = [i.instr_args for i in plan.chains[0].instructions if isinstance(i.instr_args, DelegateCall)]
    return [call.args for call in sorted(calls, key=lambda c: c.delegate_index)]


@pytest.fixture(scope="module")
def chained():
    # The second engine lists the wired tensor 'h' after the method input 'z',
    # with mixed dtypes, so binding order and wiring are both visible.
    first = EngineSpec(
        b"first",
        [TensorSpec("x", "float32", [(1, 4, 8), 3])],
        [TensorSpec("h", "float16", ["x:0", 3]), TensorSpec("side", "int64", [2])],
    )
    second = EngineSpec(
        b"second",
        [TensorSpec("z", "int32", [5]), TensorSpec("h", "float16", [(1, 4, 8), 3])],
        [TensorSpec("out", "float16", ["h:0", 3]), TensorSpec("zz", "int32", ["z:0"])],
    )
    single = EngineSpec(b"single", [TensorSpec("p", "bool", [7])], [TensorSpec("q", "uint8", [7])])
    return build_program({"forward": [first, second], "other": [single]}, placement={"forward": "device_planned"})


def test_multi_method(chained):
    info = read_program(chained.program)
    assert set(info.method_names) == {"forward", "other"}
    other = info.method("other")
    assert other.placement == HOST
    assert [(v.tensor.dtype, v.tensor.sizes) for v in other.inputs] == [("bool", (7,))]
    assert [(v.tensor.dtype, v.tensor.sizes) for v in other.outputs] == [("uint8", (7,))]
    assert blob_document(other.delegates[0].payload)[2] == b"single"
    assert info.method("forward").placement == DEVICE_PLANNED


def test_multi_delegate_wiring(chained):
    forward = read_program(chained.program).method("forward")
    # Method inputs: engine inputs no earlier engine produces, in first use.
    assert [(v.tensor.dtype, v.tensor.sizes) for v in forward.inputs] == [("float32", (8, 3)), ("int32", (5,))]
    # Method outputs: outputs no later engine consumes, engine by engine.
    assert [(v.tensor.dtype, v.tensor.sizes) for v in forward.outputs] == [
        ("int64", (2,)), ("float16", (8, 3)), ("int32", (5,)),
    ]
    first, second = forward.delegates
    assert blob_document(first.payload)[2] == b"first" and blob_document(second.payload)[2] == b"second"
    # The d2h/h2d round trip between the two device delegates is elided.
    assert forward.operators.count("et_copy::_h2d_copy.out") == 1


def test_bindings_follow_delegate_argument_order(chained):
    forward = read_program(chained.program).method("forward")
    first_args, second_args = _delegate_arguments(chained.program, "forward")
    _, document, _ = blob_document(forward.delegates[1].payload)
    inputs = binding_names(document, True)
    outputs = binding_names(document, False)
    assert sorted(inputs) == ["h", "z"] and outputs == ["out", "zz"]
    # Device placement copies z to the device first, so follow the argument
    # that is not produced by the first delegate: that one is z.
    produced_by_first = set(first_args[1:])
    positions = {name: second_args[i] for i, name in enumerate(inputs)}
    assert positions["h"] in produced_by_first
    assert positions["z"] not in produced_by_first
    assert len(second_args) == len(inputs) + len(outputs)


def test_bindings_follow_argument_order_on_host():
    first = EngineSpec(b"a", [TensorSpec("x", "float32", [4])], [TensorSpec("h", "float32", [4])])
    second = EngineSpec(
        b"b", [TensorSpec("z", "int32", [5]), TensorSpec("h", "float32", [4])], [TensorSpec("out", "float32", [4])]
    )
    data = pack_program(None, [first, second])
    info = read_program(data).methods[0]
    x_index, z_index = (v.index for v in info.inputs)
    first_args, second_args = _delegate_arguments(data, "forward")
    _, document, _ = blob_document(info.delegates[1].payload)
    names = binding_names(document, True)
    assert second_args[names.index("z")] == z_index
    assert second_args[names.index("h")] == first_args[1]


def _kv_engine(**options) -> EngineSpec:
    return EngineSpec(
        b"kv-plan",
        [TensorSpec("cache", "float32", [2, 4]), TensorSpec("x", "float32", [2, 4])],
        [TensorSpec("cache_out", "float32", ["cache:0", "cache:1"]), TensorSpec("y", "float32", [2, 4])],
        aliased_io=[("cache_out", "cache", "kv_cache_update")],
        **options,
    )


@pytest.mark.parametrize("placement", ["host", "device_planned"])
def test_aliased_io_as_mutable_buffer(placement):
    from executorch.exir._serialize._program import deserialize_pte_binary

    data = pack_program(None, [_kv_engine()], placement=placement)
    method = read_program(data).methods[0]
    # The cache is the method's state, not an input or output.
    assert [v.tensor.sizes for v in method.inputs] == [(2, 4)] and len(method.outputs) == 1
    assert "aten::copy_" in method.operators
    magic, document, _ = blob_document(method.delegates[0].payload)
    assert magic == b"TR02"
    assert document["aliased_io"] == [{"output": "cache_out", "input": "cache", "kind": "kv_cache_update"}]
    assert binding_names(document, True) == ["cache", "x"]
    assert binding_names(document, False) == ["cache_out", "y"]
    # The buffer is planned and starts from a serialized zero state.
    pte = deserialize_pte_binary(data)
    plan = pte.program.execution_plan[0]
    (call,) = [i.instr_args for i in plan.chains[0].instructions if type(i.instr_args).__name__ == "DelegateCall"]
    states = [v.val for v in plan.values if type(v.val).__name__ == "Tensor" and v.val.data_buffer_idx > 0]
    assert len(states) == 1 and states[0].allocation_info is not None and list(states[0].sizes) == [2, 4]
    assert bytes(pte.mutable_data[states[0].data_buffer_idx].storage) == b"\x00" * 32
    if placement == "host":
        assert plan.values[call.args[0]].val is states[0]


@pytest.mark.parametrize("placement", ["host", "device_resident"])
def test_aliased_io_as_method_input(placement):
    data = pack_program(None, [_kv_engine()], placement=placement, alias_mode="input")
    method = read_program(data).methods[0]
    assert len(method.inputs) == 2 and len(method.outputs) == 2
    assert "aten::copy_" not in method.operators
    magic, document, _ = blob_document(method.delegates[0].payload)
    assert magic == b"TR02" and document["aliased_io"][0]["input"] == "cache"
    if placement == "device_resident":
        assert method.placement == DEVICE_RESIDENT
        assert all(not v.tensor.memory_planned for v in method.inputs + method.outputs)


def test_user_alias_kind():
    spec = _kv_engine()
    user = EngineSpec(spec.engine, spec.inputs, spec.outputs, aliased_io=[("cache_out", "cache", "user")])
    _, document, _ = blob_document(user.blob())
    assert document["aliased_io"][0]["kind"] == "user"
    pair = EngineSpec(spec.engine, spec.inputs, spec.outputs, aliased_io=[("cache_out", "cache")])
    assert pair.aliased_io == (("cache_out", "cache", "kv_cache_update"),)


def test_xnnpack_epilogue():
    data = pack_program(None, [dynamic_engine()], epilogue={"y": [float(i) for i in range(8)]})
    method = read_program(data).methods[0]
    assert [d.id for d in method.delegates] == ["TensorRTBackend", "XnnpackBackend"]
    assert [(v.tensor.dtype, v.tensor.sizes) for v in method.outputs] == [("float32", (16, 8)), ("int32", (3,))]
    assert method.external_constants == ()


def test_portable_epilogue():
    method = read_program(pack_program(None, [dynamic_engine()], epilogue={"y": 0.5},
                                       epilogue_backend="portable")).methods[0]
    assert [d.id for d in method.delegates] == ["TensorRTBackend"]
    assert "aten::mul.out" in method.operators


def test_xnnpack_refuses_an_int_epilogue():
    with pytest.raises(PackError, match="XNNPACK did not take the epilogue"):
        pack_program(None, [dynamic_engine()], epilogue={"stats": 2.0})


def test_external_constants_in_ptd(tmp_path):
    path = tmp_path / "weights_demo.pte"
    pack_program(path, [dynamic_engine()], epilogue={"y": 4.0}, external_constants=True)
    ptd = tmp_path / "weights_demo.ptd"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["weights_demo.ptd", "weights_demo.pte"]
    data = ptd.read_bytes()
    assert data[4:8] == b"FT01" and struct.pack("<f", 4.0) in data
    info = read_program(path)
    assert info.external_constants == ("epilogue_0",) and info.needs_external_data
    assert [d.id for d in info.methods[0].delegates] == ["TensorRTBackend", "XnnpackBackend"]


def test_external_constants_named_file(tmp_path):
    packed = build_program([dynamic_engine()], epilogue={"y": 1.5}, epilogue_backend="portable",
                           external_constants="shared")
    assert list(packed.data_files) == ["shared.ptd"]
    written = packed.write(tmp_path / "m.pte")
    assert [p.name for p in written] == ["m.pte", "shared.ptd"]
    assert read_program(packed.program).external_constants == ("epilogue_0",)


def test_backend_named_like_upstreams_is_not_picked():
    # exir picks the first BackendDetails subclass named TensorRTBackend;
    # define an impostor first, as importing Torch-TensorRT would.
    script = f"""
import sys
sys.path.insert(0, {str(HERE)!r})
import conftest
from executorch.exir.backend.backend_details import BackendDetails

class TensorRTBackend(BackendDetails):
    @staticmethod
    def preprocess(program, compile_specs):
        raise RuntimeError("the impostor was asked to preprocess")

from torch_tensorrt_executorch_runtime.pack import EngineSpec, TensorSpec, pack_program
from torch_tensorrt_executorch_runtime.pte import read_program
spec = EngineSpec(b"plan", [TensorSpec("x", "float32", [4])], [TensorSpec("y", "float32", [4])])
for methods in ([spec], {{"a": [spec], "b": [spec]}}):
    info = read_program(pack_program(None, methods))
    assert all(d.payload == spec.blob() for m in info.methods for d in m.delegates)
names = [c.__name__ for c in BackendDetails.__subclasses__()]
assert names.count("TensorRTBackend") == 2, names  # visible again after packing
print("ok")
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0 and result.stdout.strip().endswith("ok"), result.stdout + result.stderr[-3000:]


def test_pack_module_imports_without_torch():
    script = f"""
import sys
sys.path.insert(0, {str(HERE)!r})
import conftest
before = set(sys.modules)
sys.modules["torch"] = None
from torch_tensorrt_executorch_runtime.pack import EngineSpec, TensorSpec, plan_program, PackError
plans = plan_program([EngineSpec(b"p", [TensorSpec("x", "float32", [4])], [TensorSpec("y", "float32", ["x:0"])])])
assert plans[0].inputs[0].name == "x"
try:
    EngineSpec(b"p", [TensorSpec("x", "float32", [4])], [TensorSpec("y", "float32", ["w:0"])])
except PackError as error:
    assert "no input 'w'" in str(error)
loaded = set(sys.modules) - before
assert not any(m.startswith(("torch.", "executorch")) for m in loaded), sorted(loaded)
print("ok")
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and result.stdout.strip().endswith("ok"), result.stdout + result.stderr


# Errors: all raised while checking specs, before anything is traced.

def _engine(inputs, outputs, **options):
    return EngineSpec(b"plan", inputs, outputs, **options)


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: TensorSpec("x", "float128", [1]), "unsupported dtype 'float128'"),
        (lambda: TensorSpec("", "float32", [1]), "non-empty str"),
        (lambda: TensorSpec("x", "float32", [-1]), "size must be >= 0"),
        (lambda: TensorSpec("x", "float32", [True]), "a dim is an int"),
        (lambda: TensorSpec("x", "float32", [(4, 2, 8)]), "min <= opt <= max"),
        (lambda: TensorSpec("x", "float32", [(1, 2)]), r"\(min, opt, max\)"),
        (lambda: TensorSpec("x", "float32", [(0, 1, 1)]), "at least 2"),
        (lambda: TensorSpec("x", "float32", ["x"]), "'input_name:dim'"),
        (lambda: TensorSpec("x", "float32", "12"), "sequence of dims"),
        (lambda: _engine([TensorSpec("x", "float32", [4])], [TensorSpec("y", "float32", ["w:0"])]),
         "refers to 'w:0', but the engine has no input 'w'"),
        (lambda: _engine([TensorSpec("x", "float32", [4])], [TensorSpec("y", "float32", ["x:1"])]),
         "input 'x' has rank 1"),
        (lambda: _engine([TensorSpec("x", "float32", [4])], [TensorSpec("x", "float32", [4])]),
         "duplicate tensor name 'x'"),
        (lambda: _engine([TensorSpec("x", "float32", [4]), TensorSpec("x", "int32", [4])],
                         [TensorSpec("y", "float32", [4])]),
         "duplicate tensor name 'x'"),
        (lambda: _engine([TensorSpec("x", "float32", [4])], [TensorSpec("y", "float32", [(1, 2, 4)])]),
         "outputs take an int or 'input_name:dim'"),
        (lambda: _engine([TensorSpec("x", "float32", ["x:0"])], [TensorSpec("y", "float32", [4])]),
         "inputs take an int or"),
        (lambda: _engine([], [TensorSpec("y", "float32", [4])]), "at least one input"),
        (lambda: _engine([TensorSpec("x", "float32", [4])], []), "at least one output"),
        (lambda: EngineSpec(b"", [TensorSpec("x", "float32", [4])], [TensorSpec("y", "float32", [4])]),
         "engine is empty"),
        (lambda: EngineSpec("plan", [TensorSpec("x", "float32", [4])], [TensorSpec("y", "float32", [4])]),
         "must be bytes"),
        (lambda: _engine([TensorSpec("x", "float32", [4])], [TensorSpec("y", "float32", [4])], aliased_io=[("z", "x")]),
         "output 'z', which is not an output"),
        (lambda: _engine([TensorSpec("x", "float32", [4])], [TensorSpec("y", "float32", [4])], aliased_io=[("y", "w")]),
         "input 'w', which is not an input"),
        (lambda: _engine([TensorSpec("x", "float32", [4])], [TensorSpec("y", "float32", [4])],
                         aliased_io=[("y", "x", "swap")]),
         "kind must be one of"),
        (lambda: _engine([TensorSpec("x", "float32", [4])], [TensorSpec("y", "int32", [4])], aliased_io=[("y", "x")]),
         "is int32 but its input 'x' is float32"),
        (lambda: _engine([TensorSpec("x", "float32", [4])], [TensorSpec("y", "float32", [5])], aliased_io=[("y", "x")]),
         "must equal dim 0 of its input"),
        (lambda: _engine([TensorSpec("x", "float32", [4])], [TensorSpec("y", "float32", [4])], device_id=-1),
         "device_id"),
        (lambda: _engine([TensorSpec("x", "float32", [4])], [TensorSpec("y", "float32", [4])], device_id=True),
         "device_id"),
        (lambda: _engine([TensorSpec("x", "float32", [4])], [TensorSpec("y", "float32", [4])],
                         weight_streaming_budget=-5),
         "weight_streaming_budget"),
        (lambda: _engine([TensorSpec("x", "float32", [4])], [TensorSpec("y", "float32", [4])],
                         weight_streaming_budget=True),
         "weight_streaming_budget"),
        (lambda: _engine([TensorSpec("x", "float32", [4])], [TensorSpec("y", "float32", [4])],
                         weight_streaming_budget=2**63),
         "weight_streaming_budget"),
    ],
)
def test_spec_errors(make, message):
    with pytest.raises(PackError, match=message):
        make()


def _simple(x="x", y="y", dtype="float32", shape=(4,), out_shape=None):
    if out_shape is None:
        out_shape = [f"{x}:{i}" if isinstance(d, tuple) else d for i, d in enumerate(shape)]
    return _engine([TensorSpec(x, dtype, list(shape))], [TensorSpec(y, dtype, list(out_shape))])


@pytest.mark.parametrize(
    "methods, options, message",
    [
        ([_simple(y="h"), _simple(x="h", dtype="int32")], {}, "produced as float32, consumed as int32"),
        ([_simple(y="h"), _simple(x="h", shape=(4, 1))], {}, "produced with rank 1, consumed with rank 2"),
        ([_simple(y="h", shape=[(1, 4, 8)], out_shape=["x:0"]), _simple(x="h", shape=[(1, 2, 4)])], {},
         r"dim 0 is produced as \[1, 8\] but engine 1 accepts \[1, 4\]"),
        ([_simple(x="h", y="out"), _simple(y="h")], {}, "engine 0 consumes 'h', which engine 1 produces later"),
        ([_simple(y="h"), _simple(x="k", y="h")], {}, "produced by engine 0 and engine 1"),
        ([_simple(y="a"), _simple(y="b", dtype="int32")], {}, "declared float32"),
        ([_simple(y="a"), _simple(y="b")], {"placement": "device_resident"}, "'x' feeds engines"),
        ([_simple(y="h"), _simple(x="h", y="x2")], {"placement": "gpu"}, "placement must be one of"),
        ([_simple()], {"alias_mode": "copy"}, "alias_mode must be one of"),
        ([_simple()], {"placement": {"decode": "host"}}, "unknown methods"),
        ([_simple()], {"epilogue": {"nope": 2.0}}, "not method outputs"),
        ([_simple()], {"epilogue": {"y": [1.0, 2.0]}}, "has 2 values"),
        ([_simple()], {"epilogue": {"y": "2"}}, "float or a non-empty sequence"),
        ([], {}, "has no engines"),
        ({}, {}, "no methods"),
        ("forward", {}, "methods must be"),
    ],
)
def test_wiring_errors(methods, options, message):
    with pytest.raises(PackError, match=message):
        plan_program(methods, **options)


def test_alias_errors():
    kv = _kv_engine()
    with pytest.raises(PackError, match="cannot be combined with placement 'device_resident'"):
        plan_program([kv], placement="device_resident")
    dynamic_kv = EngineSpec(
        b"kv",
        [TensorSpec("cache", "float32", [(1, 2, 4)])],
        [TensorSpec("cache_out", "float32", ["cache:0"])],
        aliased_io=[("cache_out", "cache")],
    )
    with pytest.raises(PackError, match="needs a static shape"):
        plan_program([dynamic_kv])
    plan_program([dynamic_kv], alias_mode="input")
    reader = _simple(x="cache", y="seen", shape=(2, 4))
    with pytest.raises(PackError, match="cannot also feed engine 1|more than one engine"):
        plan_program([kv, reader])
    only_state = EngineSpec(
        b"kv", [TensorSpec("cache", "float32", [4])], [TensorSpec("cache_out", "float32", ["cache:0"])],
        aliased_io=[("cache_out", "cache")],
    )
    with pytest.raises(PackError, match="has no outputs"):
        plan_program([only_state])


def test_build_errors():
    with pytest.raises(PackError, match="external_constants needs an epilogue"):
        build_program([_simple()], external_constants=True)
    with pytest.raises(PackError, match="epilogue_backend"):
        build_program([_simple()], epilogue={"y": 1.0}, epilogue_backend="cuda")
    with pytest.raises(PackError, match="without folders"):
        build_program([_simple()], epilogue={"y": 1.0}, external_constants="a/b")


def test_this_platform_token():
    assert this_platform() in ("linux_x86_64", "linux_aarch64", "windows_x86_64", "windows_arm64", "unknown")


def test_a_data_dependent_output_is_refused_with_device_resident_io():
    """exir inserts a device-to-host copy for such an output and plans no memory for its source."""
    from torch_tensorrt_executorch_runtime.testing import test_engine_spec

    spec = test_engine_spec(
        "keep_positive", [TensorSpec("x", "float32", [(1, 8, 64)])], [TensorSpec("y", "float32", ["<=16"])]
    )
    with pytest.raises(PackError, match="data-dependent dim.*'device_resident'.*use placement 'device_planned'"):
        build_program([spec], placement="device_resident")
    planned = read_program(build_program([spec], placement="device_planned").program).methods[0]
    assert planned.placement == DEVICE_PLANNED
