"""The Python writer of test-engine plans (docs/test-engine-format.md).

The plans under tests/data/test_engines/ are this writer's golden output; the
C++ tests (cpp/tests/test_test_engine_format.cpp) parse and run the same
files, so both sides agree on the bytes. After an intended format change,
rewrite them with TTE_REGENERATE_GOLDEN=1 and review the diff.

When TTE_TEST_PROVIDER_DIR names a build's cpp/ folder, the host test
provider itself deserializes what the writer makes.
"""

from __future__ import annotations

import ctypes
import json
import os
from pathlib import Path

import pytest

from torch_tensorrt_executorch_runtime.testing import (
    DTYPES,
    MAGIC,
    PlanInput,
    PlanOutput,
    Profile,
    make_test_engine,
    parse_test_engine,
)

GOLDEN_DIR = Path(__file__).resolve().parents[1] / "data" / "test_engines"


def golden_plans() -> dict[str, bytes]:
    return {
        "add_one_profiles.plan": make_test_engine(
            "add_one",
            [
                PlanInput(
                    "x", "float32", profiles=[Profile([1, 4], [2, 4], [8, 4]), Profile([9, 4], [16, 4], [32, 4])]
                ),
                PlanOutput("y", "float32", shape_of="x"),
            ],
        ),
        # Interleaved I/O, names outside ASCII (one outside the BMP), a fixed
        # shape, aliasing, a fail hook that fails nothing, a spin.
        "kv_update_unicode.plan": make_test_engine(
            "kv_update",
            [
                PlanOutput("кэш_out", "float16", shape_of="кэш"),
                PlanInput("кэш", "float16", shape=[2, 3]),
                PlanInput("x😀", "float16", shape=[2, 3]),
                PlanOutput("y", "float16", shape_of="кэш"),
            ],
            aliases={"кэш_out": "кэш"},
            fail={"deserialize": ""},
            spin_us=1,
        ),
        "identity_dicts.plan": make_test_engine(
            "identity",
            [
                {"name": "mask", "is_input": True, "dtype": "bool", "profiles": [{"min": [0], "opt": [3], "max": [5]}]},
                {"name": "ids", "is_input": True, "dtype": "int64", "profiles": [{"min": [], "opt": [], "max": []}]},
                {"name": "mask_out", "is_input": False, "dtype": "bool", "shape_of": "mask"},
                {"name": "ids_out", "is_input": False, "dtype": "int64", "shape": []},
            ],
            fail={"enqueue": "enqueue failed on purpose"},
        ),
    }


@pytest.mark.parametrize("name", sorted(golden_plans()))
def test_writer_matches_golden_plans(name):
    plan = golden_plans()[name]
    path = GOLDEN_DIR / name
    if os.environ.get("TTE_REGENERATE_GOLDEN") == "1":
        path.write_bytes(plan)
    assert path.read_bytes() == plan, f"{path} differs from the writer's output (TTE_REGENERATE_GOLDEN=1 rewrites it)"


def test_plan_is_magic_then_compact_utf8_json():
    plan = golden_plans()["kv_update_unicode.plan"]
    assert plan.startswith(MAGIC) and len(MAGIC) == 16
    text = plan[len(MAGIC) :].decode("utf-8")
    assert "кэш" in text and "\\u" not in text, "names are written as UTF-8, not escaped"
    assert ": " not in text and ", " not in text
    doc = json.loads(text)
    assert list(doc) == ["op", "tensors", "aliases", "fail", "spin_us"]
    assert [t["name"] for t in doc["tensors"]] == ["кэш_out", "кэш", "x😀", "y"]
    assert list(doc["tensors"][1]) == ["name", "is_input", "dtype", "profiles"]
    assert doc["tensors"][1]["profiles"] == [{"min": [2, 3], "opt": [2, 3], "max": [2, 3]}]
    assert doc["aliases"] == {"кэш_out": "кэш"}


def test_optional_keys_are_left_out():
    doc = parse_test_engine(make_test_engine("null", [PlanInput("x", "uint8", shape=[1])]))
    assert list(doc) == ["op", "tensors"]


def test_dataclasses_and_dicts_write_the_same_bytes():
    from_classes = make_test_engine(
        "add",
        [PlanInput("a", "int32", shape=[(1, 2, 4)]), PlanInput("b", "int32", shape=[(1, 2, 4)]),
         PlanOutput("y", "int32", shape_of="a")],
    )
    profile = [{"min": [1], "opt": [2], "max": [4]}]
    from_dicts = make_test_engine(
        "add",
        [{"name": "a", "is_input": True, "dtype": "int32", "profiles": profile},
         {"name": "b", "is_input": True, "dtype": "int32", "profiles": profile},
         {"name": "y", "is_input": False, "dtype": "int32", "shape_of": "a"}],
    )
    assert from_classes == from_dicts


def test_shape_shorthand_mixes_static_and_dynamic_dims():
    doc = parse_test_engine(make_test_engine("null", [PlanInput("x", "float32", shape=[3, (1, 4, 9), 2])]))
    assert doc["tensors"][0]["profiles"] == [{"min": [3, 1, 2], "opt": [3, 4, 2], "max": [3, 9, 2]}]


def test_every_dtype_is_written():
    for dtype in DTYPES:
        doc = parse_test_engine(make_test_engine("null", [PlanInput("x", dtype, shape=[1])]))
        assert doc["tensors"][0]["dtype"] == dtype


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"op": "add_two"}, ValueError, "unknown op 'add_two'"),
        ({"tensors": []}, ValueError, "non-empty list"),
        ({"tensors": [PlanInput("x", "float", shape=[1])]}, ValueError, "unknown dtype 'float'"),
        ({"tensors": [PlanInput("", "float32", shape=[1])]}, ValueError, "non-empty string"),
        ({"tensors": [PlanInput("x", "float32", shape=[1]), PlanOutput("x", "float32", shape_of="x")]},
         ValueError, "also used by tensors\\[0\\]"),
        ({"tensors": [PlanInput("x", "float32")]}, ValueError, "exactly one of shape or profiles"),
        ({"tensors": [PlanInput("x", "float32", shape=[1], profiles=[Profile([1], [1], [1])])]},
         ValueError, "exactly one of shape or profiles"),
        ({"tensors": [PlanInput("x", "float32", shape=[-1])]}, ValueError, "dims are >= 0"),
        ({"tensors": [PlanInput("x", "float32", shape=[True])]}, TypeError, "integer dim"),
        ({"tensors": [PlanInput("x", "float32", shape=[2.0])]}, TypeError, "integer dim"),
        ({"tensors": [PlanInput("x", "float32", shape=[(4, 2, 8)])]}, ValueError, "min <= opt <= max"),
        ({"tensors": [PlanInput("x", "float32", shape=[(1, 2)])]}, ValueError, "\\(min, opt, max\\)"),
        ({"tensors": [PlanInput("x", "float32", profiles=[Profile([1], [1, 2], [1])])]}, ValueError, "one rank"),
        ({"tensors": [PlanInput("x", "float32", profiles=[{"min": [1], "max": [1]}])]}, ValueError, "min, opt and max"),
        ({"tensors": [PlanOutput("y", "float32")]}, ValueError, "exactly one of shape_of"),
        ({"tensors": [PlanOutput("y", "float32", shape_of="x", shape=[1])]}, ValueError, "exactly one of shape_of"),
        ({"tensors": [{"name": "x", "is_input": 1, "dtype": "float32"}]}, TypeError, "True or False"),
        ({"tensors": [{"name": "x", "is_input": True, "dtype": "float32", "profiles": [], }]},
         ValueError, "non-empty list"),
        ({"tensors": [{"name": "x", "is_input": True, "dtype": "float32", "shape": [1]}]}, ValueError, "unknown keys"),
        ({"tensors": [{"name": "y", "is_input": False, "dtype": "float32", "shape": [1], "profiles": []}]},
         ValueError, "unknown keys"),
        ({"aliases": [("y", "x")]}, TypeError, "mapping"),
        ({"aliases": {"y": 1}}, TypeError, "names"),
        ({"fail": {"execute": "x"}}, ValueError, "unknown hook 'execute'"),
        ({"fail": {"enqueue": 3}}, TypeError, "message string"),
        ({"spin_us": -1}, ValueError, "spin_us"),
        ({"spin_us": 10_000_001}, ValueError, "spin_us"),
    ],
)
def test_writer_rejects_malformed_plans(kwargs, error, match):
    args = {"op": "add_one",
            "tensors": [PlanInput("x", "float32", shape=[1]), PlanOutput("y", "float32", shape_of="x")]}
    args.update(kwargs)
    with pytest.raises(error, match=match):
        make_test_engine(**args)


def test_parse_rejects_other_bytes():
    with pytest.raises(ValueError, match="not a test-engine plan"):
        parse_test_engine(b"ftrt\x00\x00")
    with pytest.raises(ValueError, match="invalid test-engine plan"):
        parse_test_engine(MAGIC + b"{not json")
    with pytest.raises(ValueError, match="not an object"):
        parse_test_engine(MAGIC + b"[1]")


# ---- The host test provider deserializes what the writer makes --------------

TTE_OK, TTE_ERROR_NOT_ACCEPTED, TTE_ERROR_INVALID_PROGRAM = 0, 2, 8


class _Error(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int32), ("message", ctypes.c_char * 1024)]


class _Desc(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("is_input", ctypes.c_int32), ("scalar_type", ctypes.c_int32),
                ("rank", ctypes.c_int32), ("aliased_input", ctypes.c_int32), ("is_shape_tensor", ctypes.c_int32)]


_fn = ctypes.CFUNCTYPE
_p = ctypes.c_void_p
_status = ctypes.c_int32


_i32p = ctypes.POINTER(ctypes.c_int32)
_i64p = ctypes.POINTER(ctypes.c_int64)
_errp = ctypes.POINTER(_Error)


class _Provider(ctypes.Structure):
    """TteEngineProvider of engine_provider.h."""

    _fields_ = [
        ("abi_version", ctypes.c_uint32), ("struct_size", ctypes.c_uint32), ("name", ctypes.c_char_p),
        ("memory_kind", ctypes.c_int32), ("enqueue_capturable", ctypes.c_int32), ("user_data", _p),
        ("release", _fn(None, _p)),
        ("deserialize", _fn(_status, _p, ctypes.c_char_p, ctypes.c_uint64, _p, ctypes.POINTER(_p), _errp)),
        ("num_io_tensors", _fn(_status, _p, _i32p, _errp)),
        ("describe_io_tensor", _fn(_status, _p, ctypes.c_int32, ctypes.POINTER(_Desc), _errp)),
        ("num_profiles", _fn(_status, _p, _i32p, _errp)),
        ("profile_shape", _fn(_status, _p, ctypes.c_int32, ctypes.c_int32, _i64p, _i64p, _i64p, _errp)),
        ("select_profile", _fn(_status, _p, ctypes.c_int32, _p, _errp)),
        ("set_input_shape", _fn(_status, _p, ctypes.c_int32, _i64p, ctypes.c_int32, _errp)),
        ("get_output_shape", _fn(_status, _p, ctypes.c_int32, _i64p, ctypes.c_int32, _i32p, _errp)),
        ("set_tensor_address", _fn(_status, _p, ctypes.c_int32, _p, _errp)),
        ("enqueue", _fn(_status, _p, _p, _errp)),
        ("destroy", _fn(None, _p)),
    ]


@pytest.fixture(scope="module")
def host_provider():
    folder = os.environ.get("TTE_TEST_PROVIDER_DIR")
    if not folder:
        pytest.skip("TTE_TEST_PROVIDER_DIR is not set: it names the build folder with libtte_test_provider_host.so")
    path = Path(folder) / "libtte_test_provider_host.so"
    if not path.exists():
        pytest.skip(f"{path} is not built")
    lib = ctypes.CDLL(str(path))
    lib.tte_engine_provider_entry.restype = ctypes.POINTER(_Provider)
    lib.tte_engine_provider_entry.argtypes = [ctypes.c_uint32]
    from torch_tensorrt_executorch_runtime._native import abi

    provider = lib.tte_engine_provider_entry(abi.TTE_ENGINE_PROVIDER_ABI_VERSION).contents
    assert provider.name == b"test-host"
    lib.tte_test_provider_reset_stats()
    return lib, provider


def _deserialize(provider, plan: bytes):
    engine = _p()
    error = _Error()
    status = provider.deserialize(None, plan, len(plan), None, ctypes.byref(engine), ctypes.byref(error))
    return status, engine, error.message.decode("utf-8")


@pytest.mark.parametrize("name", sorted(golden_plans()))
def test_host_provider_accepts_writer_output(host_provider, name):
    _, provider = host_provider
    status, engine, message = _deserialize(provider, golden_plans()[name])
    assert status == TTE_OK, message
    count = ctypes.c_int32()
    assert provider.num_io_tensors(engine, ctypes.byref(count), None) == TTE_OK
    doc = parse_test_engine(golden_plans()[name])
    names = []
    for i in range(count.value):
        desc = _Desc()
        assert provider.describe_io_tensor(engine, i, ctypes.byref(desc), None) == TTE_OK
        names.append(desc.name.decode("utf-8"))
    assert names == [t["name"] for t in doc["tensors"]]
    provider.destroy(engine)


def test_host_provider_rejects_what_the_writer_cannot_check(host_provider):
    _, provider = host_provider
    # Structurally fine, but add_one takes one input: the provider says so.
    plan = make_test_engine("add_one", [PlanInput("a", "float32", shape=[1]), PlanInput("b", "float32", shape=[1]),
                                        PlanOutput("y", "float32", shape_of="a")])
    status, _, message = _deserialize(provider, plan)
    assert status == TTE_ERROR_INVALID_PROGRAM
    assert "op 'add_one' takes 1 input and 1 output, the plan has 2 inputs and 1 output" in message
    status, _, _ = _deserialize(provider, b"not a test plan")
    assert status == TTE_ERROR_NOT_ACCEPTED
