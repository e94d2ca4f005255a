"""Write the .pte programs the GPU checks run (packed here, run on the GPU machine).

The GPU machine has no network and a torch that ExecuTorch's exporter does not
support, so programs are packed where the project builds and travel as files.
Every plan is a test-engine plan (docs/test-engine-format.md) run by the CUDA
test provider, because no TensorRT engine can run on that machine.

Usage: python tests/gpu/make_gpu_programs.py OUT_DIR
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from torch_tensorrt_executorch_runtime.pack import EngineSpec, TensorSpec, pack_program
from torch_tensorrt_executorch_runtime.testing import make_test_engine

N = 1 << 20  # elements of the 4 MB tensors
BIG = 16 << 20  # 64 MB of float32, for the staging benchmark


def _tensor(name, is_input, dtype="float32", profiles=None, shape_of=None, shape=None):
    t = {"name": name, "is_input": is_input, "dtype": dtype}
    if profiles is not None:
        t["profiles"] = [{"min": list(a), "opt": list(b), "max": list(c)} for a, b, c in profiles]
    if shape_of is not None:
        t["shape_of"] = shape_of
    if shape is not None:
        t["shape"] = list(shape)
    return t


def static(n):
    return [((n,), (n,), (n,))]


def add_one(out: Path, name: str, n: int, placement: str, spin_us: int = 0, **extra) -> None:
    plan = make_test_engine(
        "add_one",
        [_tensor("x", True, profiles=static(n)), _tensor("y", False, shape_of="x")],
        **({"spin_us": spin_us} if spin_us else {}),
    )
    spec = EngineSpec(plan, [TensorSpec("x", "float32", (n,))], [TensorSpec("y", "float32", (n,))], **extra)
    pack_program(out / f"{name}.pte", [spec], placement=placement)


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for placement in ("device_resident", "host", "device_planned"):
        add_one(out, f"add_one_{placement}", N, placement)
    add_one(out, "spin_resident", N, "device_resident", spin_us=20000)
    # Small tensors, for the CUDA-graph loops where the launch, not the copy, is what costs.
    add_one(out, "add_one_256_resident", 256, "device_resident")

    null_plan = make_test_engine("null", [_tensor("x", True, profiles=static(256)), _tensor("y", False, shape_of="x")])
    pack_program(
        out / "null_resident.pte",
        [EngineSpec(null_plan, [TensorSpec("x", "float32", (256,))], [TensorSpec("y", "float32", (256,))])],
        placement="device_resident",
    )

    ident_plan = make_test_engine("identity",
                                  [_tensor("x", True, profiles=static(BIG)), _tensor("y", False, shape_of="x")])
    pack_program(
        out / "identity_64mb_host.pte",
        [EngineSpec(ident_plan, [TensorSpec("x", "float32", (BIG,))], [TensorSpec("y", "float32", (BIG,))])],
        placement="host",
    )

    # Two optimization profiles: rows 1..4 and 5..16; ExecuTorch plans the upper bound.
    dyn_plan = make_test_engine(
        "add_one",
        [_tensor("x", True, profiles=[((1, 8), (2, 8), (4, 8)), ((5, 8), (8, 8), (16, 8))]),
         _tensor("y", False, shape_of="x")],
    )
    pack_program(
        out / "add_one_profiles_resident.pte",
        [EngineSpec(dyn_plan, [TensorSpec("x", "float32", ((1, 8, 16), 8))], [TensorSpec("y", "float32", ("x:0", 8))])],
        placement="device_resident",
    )
    pack_program(
        out / "add_one_profiles_host.pte",
        [EngineSpec(dyn_plan, [TensorSpec("x", "float32", ((1, 8, 16), 8))], [TensorSpec("y", "float32", ("x:0", 8))])],
        placement="host",
    )

    kv_plan = make_test_engine(
        "kv_update",
        [_tensor("cache", True, profiles=static(1024)), _tensor("x", True, profiles=static(1024)),
         _tensor("cache_out", False, shape_of="cache"), _tensor("y", False, shape_of="cache")],
        aliases={"cache_out": "cache"},
    )
    # Resident: the caller's device cache is updated in place; host: the
    # engine updates a staged copy of the caller's host cache, written back.
    for placement in ("device_resident", "host"):
        pack_program(
            out / f"kv_update_{placement.split('_')[-1]}.pte",
            [EngineSpec(
                kv_plan,
                [TensorSpec("cache", "float32", (1024,)), TensorSpec("x", "float32", (1024,))],
                [TensorSpec("cache_out", "float32", (1024,)), TensorSpec("y", "float32", (1024,))],
                aliased_io=[("cache_out", "cache", "kv_cache_update")],
            )],
            placement=placement,
            alias_mode="input",  # the caller owns the cache buffer
        )

    # For the multi-GPU checks: one delegate on device 1, and one method with
    # delegates on devices 0 and 1 wired x -> (dev0) h -> (dev1) y.
    add_one(out, "add_one_dev1_resident", N, "device_resident", device_id=1)
    add_one(out, "add_one_dev9_resident", N, "device_resident", device_id=9)
    p0 = make_test_engine("add_one", [_tensor("x", True, profiles=static(N)), _tensor("h", False, shape_of="x")])
    p1 = make_test_engine("add_one", [_tensor("h", True, profiles=static(N)), _tensor("y", False, shape_of="h")])
    pack_program(
        out / "two_devices_host.pte",
        [EngineSpec(p0, [TensorSpec("x", "float32", (N,))], [TensorSpec("h", "float32", (N,))], device_id=0),
         EngineSpec(p1, [TensorSpec("h", "float32", (N,))], [TensorSpec("y", "float32", (N,))], device_id=1)],
        placement="host",
    )
    shared_memory_programs(out)
    data_dependent_programs(out)
    print(json.dumps(sorted(p.name for p in out.glob("*.pte"))))


MIB = 1 << 20
# Scratch of the four delegates of four_scratch_resident.pte (the largest: 256 MiB).
FOUR_SCRATCH = (64 * MIB, 256 * MIB, 128 * MIB, 32 * MIB)
WEIGHTS = 512 * MIB
SMALL = 1 << 16


def shared_memory_programs(out: Path) -> None:
    """Programs of the shared-memory and shared-engine checks (docs/benchmarks.md)."""
    names = ["x", "h1", "h2", "h3", "y"]
    specs = []
    for d, scratch in enumerate(FOUR_SCRATCH):
        plan = make_test_engine(
            "add_one",
            [_tensor(names[d], True, profiles=static(SMALL)), _tensor(names[d + 1], False, shape_of=names[d])],
            scratch_bytes=scratch,
        )
        specs.append(EngineSpec(plan, [TensorSpec(names[d], "float32", (SMALL,))],
                                [TensorSpec(names[d + 1], "float32", (SMALL,))]))
    pack_program(out / "four_scratch_resident.pte", specs, placement="device_resident")
    weights_plan = make_test_engine(
        "add_one", [_tensor("x", True, profiles=static(SMALL)), _tensor("y", False, shape_of="x")],
        scratch_bytes=64 * MIB, weight_bytes=WEIGHTS,
    )
    pack_program(
        out / "weights_resident.pte",
        [EngineSpec(weights_plan, [TensorSpec("x", "float32", (SMALL,))], [TensorSpec("y", "float32", (SMALL,))])],
        placement="device_resident",
    )
    # 200 us of spin per call, for the concurrency benchmark.
    add_one(out, "spin200_resident", SMALL, "device_resident", spin_us=200)


def data_dependent_programs(out: Path) -> None:
    """keep_positive (y = x[x > 0]) with room for all of x, and for 16 of up to 64 elements,
    device-planned and host-placed (staged). Not device-resident: exir cannot return a data-dependent
    output there (the packer refuses it)."""
    from torch_tensorrt_executorch_runtime.testing import test_engine_spec

    for bound in (64, 16):
        spec = test_engine_spec(
            "keep_positive", [TensorSpec("x", "float32", [(1, 8, 64)])], [TensorSpec("y", "float32", [f"<={bound}"])]
        )
        for placement in ("device_planned", "host"):
            pack_program(out / f"keep_positive{bound}_{placement.split('_')[-1]}.pte", [spec], placement=placement)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
