"""The torch-tensorrt-executorch command: run, inspect, doctor, pack."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np


def cli(*args, env=None, timeout=300):
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    return subprocess.run(
        [sys.executable, "-m", "torch_tensorrt_executorch_runtime", *map(str, args)],
        capture_output=True,
        text=True,
        env=full_env,
        timeout=timeout,
    )


def test_help():
    result = cli("--help")
    assert result.returncode == 0
    for command in ("run", "inspect", "doctor", "pack"):
        assert command in result.stdout


def test_cli_package_runs_as_a_module():
    result = subprocess.run(
        [sys.executable, "-m", "torch_tensorrt_executorch_runtime.cli", "--help"], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert "inspect" in result.stdout


def test_usage_error_exits_2():
    assert cli("frobnicate").returncode == 2


def test_doctor_json_is_sound(tte):
    result = cli("doctor", "--json")
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout)
    assert report["sound"] is True
    assert report["plugin"]["loaded"] and report["plugin"]["owns_registration"]
    assert report["executorch"]["version"] == "1.5.1"
    assert "tensorrt-python" in report["providers"] or "tensorrt-native" in report["providers"]
    if tte.cuda_device_count() == 0:
        assert any("GPU" in item["missing"] or "driver" in item["missing"] for item in report["missing"])


def test_doctor_text(tte):
    result = cli("doctor")
    assert result.returncode == 0, result.stderr
    assert "installation is sound" in result.stdout
    assert "TensorRTBackend owned by this plugin" in result.stdout


def test_doctor_fails_when_the_plugin_cannot_load(tmp_path):
    result = cli("doctor", "--json", env={"TORCH_TENSORRT_EXECUTORCH_LIBRARY": str(tmp_path / "gone.so")})
    assert result.returncode == 1, result.stdout + result.stderr
    report = json.loads(result.stdout)
    assert report["sound"] is False
    assert report["plugin"]["loaded"] is False
    assert "gone.so" in report["plugin"]["error"]
    assert any("pip install" in item["fix"] for item in report["problems"])


def test_inspect_json(programs, tte):
    result = cli("inspect", programs["two_methods"], "--json", "--no-load")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    methods = {m["name"]: m for m in report["methods"]}
    assert set(methods) == {"forward", "double_input"}
    forward = methods["forward"]
    assert forward["placement"] == "host"
    assert forward["inputs"][0]["dtype"] == "float32" and forward["inputs"][0]["shape"] == [2, 3]
    (delegate,) = forward["delegates"]
    assert delegate["backend"] == "TensorRTBackend"
    assert delegate["engine_kind"] == "test"
    assert delegate["blob"]["magic"] == "TR01"
    assert [b["name"] for b in delegate["blob"]["io_bindings"]] == ["x", "y"]
    assert delegate["engine_size"] > 0


def test_inspect_placements_and_text(programs):
    result = cli("inspect", programs["resident"], "--no-load")
    assert result.returncode == 0, result.stderr
    assert "device_resident" in result.stdout
    assert "can run here" in result.stdout


def test_inspect_mixed_program_lists_both_backends(programs):
    report = json.loads(cli("inspect", programs["mixed"], "--json", "--no-load").stdout)
    backends = [d["backend"] for d in report["methods"][0]["delegates"]]
    assert backends == ["TensorRTBackend", "XnnpackBackend"]


def test_inspect_external_constants(programs):
    report = json.loads(cli("inspect", programs["external"], "--json", "--no-load").stdout)
    assert report["external_constants"] == ["epilogue_0"]


def test_inspect_corrupt_file(tmp_path):
    path = tmp_path / "bad.pte"
    path.write_bytes(b"\0" * 64)
    result = cli("inspect", path)
    assert result.returncode == 1
    assert "not an ExecuTorch program" in result.stderr


def test_inspect_cannot_run_without_provider(programs):
    # A fresh process with no test provider: loading the methods fails, the report says why.
    report = json.loads(cli("inspect", programs["add_one"], "--json").stdout)
    assert report["runnable"]["can_run"] is False
    assert report["runnable"]["reason"]


def test_run_with_provider_library(programs, host_library):
    result = cli(
        "run", programs["add_one"], "--provider-library", host_library, "--num-runs", "5", "--json", "--numpy"
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    (output,) = report["outputs"]
    assert output["shape"] == [2, 3] and output["checksum"] == 12.0
    assert report["latency"]["runs"] == 5
    assert report["latency"]["p50_ms"] <= report["latency"]["p99_ms"]


def test_run_with_npy_inputs_text_output(programs, host_library, tmp_path):
    a = np.arange(4, dtype=np.int32)
    np.save(tmp_path / "a.npy", a)
    result = cli(
        "run",
        programs["add"],
        "--provider-library",
        host_library,
        "--input",
        tmp_path / "a.npy",
        "--input",
        "ones",
        "--num-runs",
        "3",
    )
    assert result.returncode == 0, result.stderr
    assert "checksum 10" in result.stdout
    assert "p99" in result.stdout


def test_run_failure_exits_1_with_the_reason(programs):
    result = cli("run", programs["add_one"])
    assert result.returncode == 1
    assert "error:" in result.stderr.strip().splitlines()[-1]


def test_run_progress_bar(programs, host_library):
    result = cli(
        "run", programs["add_one"], "--provider-library", host_library, "--num-runs", "50", "--numpy", "--progress", "on"
    )
    assert result.returncode == 0, result.stderr
    lines = result.stderr.strip().splitlines()
    assert lines[-1] == "running 'forward': 50/50"  # not a terminal: a line per tenth
    assert len(lines) == 10
    quiet = cli("run", programs["add_one"], "--provider-library", host_library, "--num-runs", "50", "--progress", "off")
    assert quiet.stderr == ""


def test_pack_then_inspect_and_run(tmp_path, host_library):
    from torch_tensorrt_executorch_runtime.testing import make_test_engine

    plan = make_test_engine(
        "add_one",
        [
            {"name": "x", "is_input": True, "dtype": "float32", "profiles": [{"min": [1, 4], "opt": [2, 4], "max": [8, 4]}]},
            {"name": "y", "is_input": False, "dtype": "float32", "shape_of": "x"},
        ],
    )
    (tmp_path / "add_one.plan").write_bytes(plan)
    out = tmp_path / "packed.pte"
    result = cli(
        "pack", out, "--engine", tmp_path / "add_one.plan", "--input", "x:float32:1-2-8,4", "--output", "y:float32:x:0,4"
    )
    assert result.returncode == 0, result.stderr
    assert out.exists()
    report = json.loads(cli("inspect", out, "--json", "--no-load").stdout)
    assert report["methods"][0]["inputs"][0]["shape"] == [8, 4]
    run = cli("run", out, "--provider-library", host_library, "--input", "zeros:3x4", "--json", "--numpy")
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["outputs"][0] == {
        "kind": "tensor",
        "device": "cpu",
        "dtype": "float32",
        "shape": [3, 4],
        "checksum": 12.0,
        "first": [1.0, 1.0, 1.0, 1.0],
    }


def test_pack_spec_file(tmp_path):
    from torch_tensorrt_executorch_runtime.testing import make_test_engine

    plan = make_test_engine(
        "identity",
        [
            {"name": "p", "is_input": True, "dtype": "int32", "profiles": [{"min": [3], "opt": [3], "max": [3]}]},
            {"name": "q", "is_input": False, "dtype": "int32", "shape_of": "p"},
        ],
    )
    (tmp_path / "id.plan").write_bytes(plan)
    spec = {
        "methods": {
            "first": [{"engine": "id.plan", "inputs": ["p:int32:3"], "outputs": ["q:int32:p:0"]}],
            "second": [{"engine": "id.plan", "inputs": [{"name": "p", "dtype": "int32", "shape": [3]}],
                        "outputs": [{"name": "q", "dtype": "int32", "shape": ["p:0"]}]}],
        }
    }
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    result = cli("pack", tmp_path / "two.pte", "--spec", tmp_path / "spec.json")
    assert result.returncode == 0, result.stderr
    report = json.loads(cli("inspect", tmp_path / "two.pte", "--json", "--no-load").stdout)
    assert [m["name"] for m in report["methods"]] == ["first", "second"]


def test_pack_bad_tensor_is_a_usage_error(tmp_path):
    (tmp_path / "e.plan").write_bytes(b"x")
    result = cli("pack", tmp_path / "o.pte", "--engine", tmp_path / "e.plan", "--input", "x", "--output", "y:float32:2")
    assert result.returncode == 2
    assert "NAME:DTYPE:DIMS" in result.stderr
