"""A real TensorRT-RTX engine, built on the CPU, packed, inspected, and refused cleanly here.

TensorRT-RTX builds engines ahead of time without a GPU (for a chosen compute
capability), so this is a real engine file, not a test plan. No machine here
can run it: without a GPU the provider must say "no CUDA device" before it
creates any TensorRT runtime; on a GPU TensorRT-RTX does not support (the
H200, compute capability 9.0) it must fail with TensorRT's reason. Either way
a named error, never a crash.

Runs when `tensorrt_rtx` is importable, or with TTE_SLOW_TESTS=1, which
installs tensorrt-rtx-cu13 (about 100 MB) into a scratch folder.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PIP_REFETCH = str(ROOT / "scripts" / "pip-refetch.py")  # a download cut short is fetched again
VERSIONS = json.loads((ROOT / "versions.json").read_text())
RTX_REQUIREMENT = f"tensorrt-rtx-cu13>={VERSIONS['tensorrt_rtx_min']},<{VERSIONS['tensorrt_rtx_max_exclusive']}"

BUILD = """
import sys
import numpy as np
import tensorrt_rtx as trt

logger = trt.Logger(trt.Logger.WARNING)
builder = trt.Builder(logger)
network = builder.create_network(0)
x = network.add_input("x", trt.float32, (2, 3))
one = network.add_constant((1, 1), trt.Weights(np.ones((1, 1), dtype=np.float32)))
y = network.add_elementwise(x, one.get_output(0), trt.ElementWiseOperation.SUM).get_output(0)
y.name = "y"
network.mark_output(y)
config = builder.create_builder_config()
config.num_compute_capabilities = 1
config.set_compute_capability(trt.ComputeCapability.SM89, 0)
plan = builder.build_serialized_network(network, config)
assert plan is not None, "TensorRT-RTX failed to build the engine"
open(sys.argv[1], "wb").write(bytes(plan))
print(trt.__version__)
"""


@pytest.fixture(scope="module")
def rtx_env(tmp_path_factory) -> dict:
    env = dict(os.environ)
    if importlib.util.find_spec("tensorrt_rtx") is not None:
        return env
    if os.environ.get("TTE_SLOW_TESTS") != "1":
        pytest.skip(f"tensorrt_rtx is not installed; TTE_SLOW_TESTS=1 installs {RTX_REQUIREMENT} (about 100 MB)")
    site = tmp_path_factory.mktemp("rtx")
    install = subprocess.run(
        [PIP_REFETCH, sys.executable, "-m", "pip", "install", "-q", "--target", str(site), RTX_REQUIREMENT],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    if install.returncode != 0:
        pytest.skip(f"cannot install {RTX_REQUIREMENT}: {install.stderr.strip().splitlines()[-1:]}")
    env["PYTHONPATH"] = os.pathsep.join([str(site)] + [p for p in [env.get("PYTHONPATH")] if p])
    return env


@pytest.fixture(scope="module")
def rtx_program(rtx_env, tmp_path_factory) -> Path:
    from torch_tensorrt_executorch_runtime.pack import EngineSpec, TensorSpec, pack_program

    folder = tmp_path_factory.mktemp("rtx_program")
    plan_path = folder / "add_one.plan"
    build = subprocess.run(
        [sys.executable, "-c", BUILD, str(plan_path)], capture_output=True, text=True, env=rtx_env, timeout=900
    )
    assert build.returncode == 0, build.stderr
    plan = plan_path.read_bytes()
    assert len(plan) > 1000
    pte = folder / "rtx_add_one.pte"
    pack_program(pte, [EngineSpec(plan, [TensorSpec("x", "float32", [2, 3])], [TensorSpec("y", "float32", [2, 3])])])
    return pte


def _cli(env, *args):
    return subprocess.run(
        [sys.executable, "-m", "torch_tensorrt_executorch_runtime", *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )


def test_inspect_reads_the_real_engine(rtx_env, rtx_program):
    result = _cli(rtx_env, "inspect", rtx_program, "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    (delegate,) = report["methods"][0]["delegates"]
    assert delegate["engine_kind"] == "tensorrt"
    assert delegate["blob"]["magic"] == "TR01"
    assert delegate["engine_size"] > 1000
    runnable = report["runnable"]
    checks = {c["check"].split(" ", 3)[-1]: c for c in runnable["checks"]}
    assert checks["TensorRT runtime"]["ok"], checks
    if runnable["cuda_devices"] == 0:
        assert runnable["can_run"] is False
        assert "no CUDA device" in runnable["reason"] or "CUDA device" in runnable["reason"]


def test_run_is_refused_with_a_named_error(rtx_env, rtx_program):
    code = textwrap.dedent(
        f"""
        import torch, torch_tensorrt_executorch_runtime as tte
        program = tte.load({str(rtx_program)!r})
        try:
            program.forward(torch.zeros(2, 3))
            print("RAN")
        except tte.errors.Error as exc:
            print(type(exc).__name__, "|", exc)
        print("devices", tte.cuda_device_count())
        """
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=rtx_env, timeout=600)
    assert result.returncode == 0, result.stderr  # no crash
    lines = result.stdout.strip().splitlines()
    devices = int(lines[-1].split()[-1])
    if devices == 0:
        name, _, message = lines[0].partition("|")
        assert name.strip() == "NoDeviceError", lines
        assert "no CUDA device" in message
    else:
        assert lines[0] == "RAN" or "|" in lines[0], lines


def test_cli_run_exit_status(rtx_env, rtx_program, tte):
    result = _cli(rtx_env, "run", rtx_program)
    if tte.cuda_device_count() == 0:
        assert result.returncode == 1, result.stdout
        assert "no CUDA device" in result.stderr.strip().splitlines()[-1]
    else:
        assert result.returncode in (0, 1), result.stderr
