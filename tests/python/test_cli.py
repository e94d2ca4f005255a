"""The torch-tensorrt-executorch command: run, inspect, doctor, pack."""

from __future__ import annotations

import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import numpy as np
import pytest


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
    assert "tensorrt-python" in report["providers"] or "tensorrt-native-11" in report["providers"]
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


def _doctor_in_process(setup: str, tmp_path) -> dict:
    """doctor --json in a fresh interpreter after `setup` ran (before the package is imported)."""
    script = setup + textwrap.dedent(
        """
        from torch_tensorrt_executorch_runtime.cli import main
        raise SystemExit(main(["doctor", "--json"]))
        """
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads(result.stdout)


def test_doctor_names_the_cuda_runtime_the_plugin_loaded():
    report = json.loads(cli("doctor", "--json").stdout)
    loaded = report["cuda_runtime_loaded"]
    assert loaded and Path(loaded).name.startswith("libcudart.so.13"), report
    assert f"CUDA runtime:  {loaded} (loaded)" in cli("doctor").stdout


def test_doctor_in_a_conda_like_prefix_finds_the_cuda_runtime_in_lib(tmp_path):
    # A conda environment: libcudart in <prefix>/targets/x86_64-linux/lib, linked from <prefix>/lib,
    # loaded from there (the plugin's RUNPATH is $ORIGIN there), and no nvidia wheels.
    from torch_tensorrt_executorch_runtime import _native

    (wheel_cudart,) = _native.cuda_runtime_candidates()[:1]
    prefix = tmp_path / "env"
    target = prefix / "targets" / "x86_64-linux" / "lib"
    target.mkdir(parents=True)
    shutil.copy(wheel_cudart, target / "libcudart.so.13")
    (prefix / "lib").mkdir()
    (prefix / "lib" / "libcudart.so.13").symlink_to("../targets/x86_64-linux/lib/libcudart.so.13")
    setup = textwrap.dedent(
        f"""
        import ctypes
        ctypes.CDLL({str(prefix / "lib" / "libcudart.so.13")!r})
        from torch_tensorrt_executorch_runtime import _native
        _native.cuda_runtime_candidates = lambda: []
        """
    )
    report = _doctor_in_process(setup, tmp_path)
    assert report["cuda_runtime"] == []
    assert report["cuda_runtime_loaded"] == str(target / "libcudart.so.13")
    assert not [m for m in report["missing"] if "CUDA 13 runtime" in m["missing"]]


def test_doctor_loaded_libraries_reads_the_maps_format():
    from torch_tensorrt_executorch_runtime.cli.doctor import loaded_libraries

    maps = (
        "7f00-7f01 r--p 00000000 fd:01 12 /env/targets/x86_64-linux/lib/libcudart.so.13.0.96\n"
        "7f01-7f02 r-xp 00001000 fd:01 12 /env/targets/x86_64-linux/lib/libcudart.so.13.0.96\n"
        "7f02-7f03 rw-p 00000000 00:00 0 \n"
        "7f03-7f04 r--p 00000000 fd:01 13 /old/libcudart.so.12 (deleted)\n"
        "7f04-7f05 r--p 00000000 00:00 0 [vdso]\n"
    )
    assert loaded_libraries("libcudart.so", maps) == [
        "/env/targets/x86_64-linux/lib/libcudart.so.13.0.96",
        "/old/libcudart.so.12",
    ]
    assert loaded_libraries("libnvinfer", maps) == []


def test_doctor_says_the_stock_api_needs_torch(tmp_path):
    # Without torch (the base install), executorch.runtime cannot be imported: doctor says so.
    report = _doctor_in_process("import sys\nsys.modules['torch'] = None\n", tmp_path)
    assert report["torch"] is None
    assert report["stock_api"] == {"module": "executorch.runtime", "missing": ["torch"]}
    (item,) = [m for m in report["missing"] if m["missing"].startswith("torch")]
    assert "executorch.runtime" in item["missing"] and "[torch]" in item["fix"]
    text = cli("doctor").stdout
    assert "stock API:     executorch.runtime (torch " in text


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
    # The blob's flag, named as TensorRT's, not read as a verdict on this machine.
    assert "TensorRT hardware-compatibility flag: off" in result.stdout
    assert "hardware compatible: no" not in result.stdout


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
    reason = report["runnable"]["reason"]
    # The plugin's reason as it is, naming the method once (nothing prefixed).
    assert reason.startswith("cannot load method 'forward': TensorRTBackend delegate: "), reason
    assert reason.count("forward") == 1 and reason.count("TensorRTBackend") == 1, reason


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


def test_run_latency_percentiles_are_numpys():
    """`run` and tte-run print the same percentiles: numpy's linear interpolation
    (cpp/tests/test_percentile.cpp checks tte-run's side)."""
    from torch_tensorrt_executorch_runtime.cli.run import latency_summary

    seconds = [0.004, 0.001, 0.008, 0.002, 0.0035, 0.0011, 0.009]
    summary = latency_summary(seconds)
    expected = np.percentile(np.array(seconds) * 1e3, [50, 90, 99])
    assert [summary["p50_ms"], summary["p90_ms"], summary["p99_ms"]] == pytest.approx(list(expected), rel=1e-12)


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


def test_run_json_failure_prints_a_json_document(programs):
    # No provider accepts the test plan in a fresh process: the run fails.
    result = cli("run", programs["add_one"], "--json")
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert report["ok"] is False and report["command"] == "run" and report["exit_status"] == 1
    assert report["error"]["message"] and report["error"]["message"] in result.stderr
    assert report["error"]["type"]


def test_usage_error_with_json_prints_a_json_document(programs):
    result = cli("run", programs["add_one"], "--json", "--method", "nope")
    assert result.returncode == 2
    report = json.loads(result.stdout)
    assert report["ok"] is False and report["exit_status"] == 2
    assert "no method 'nope'" in report["error"]["message"]


def test_inspect_json_failure_prints_a_json_document(tmp_path):
    path = tmp_path / "bad.pte"
    path.write_bytes(b"\0" * 64)
    result = cli("inspect", path, "--json")
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert report["ok"] is False and "not an ExecuTorch program" in report["error"]["message"]


def _tte_run_command() -> str:
    """tte-run on PATH, else where pip put the installed wheel's console script (a failure if it is not there)."""
    command = shutil.which("tte-run")
    if command is not None:
        return command
    try:
        declared = importlib.metadata.distribution("torch-tensorrt-executorch-runtime").entry_points
    except importlib.metadata.PackageNotFoundError:
        declared = ()
    if not any(ep.group == "console_scripts" and ep.name == "tte-run" for ep in declared):
        pytest.skip("the package is not installed from the wheel (no tte-run console script): run scripts/build.sh")
    script = Path(sysconfig.get_path("scripts")) / "tte-run"
    assert script.is_file(), f"the installed wheel declares tte-run, but pip put no {script}"
    return str(script)


def test_tte_run_is_on_path_and_passes_arguments_and_exit_status(programs, host_library):
    command = _tte_run_command()
    help_text = subprocess.run([command, "--help"], capture_output=True, text=True)
    assert help_text.returncode == 0, help_text.stderr
    assert help_text.stdout.startswith("usage: tte-run")
    assert subprocess.run([command, "--no-such-option"], capture_output=True).returncode == 2
    assert subprocess.run([command, "missing.pte"], capture_output=True).returncode == 1
    ran = subprocess.run(
        [command, programs["add_one"], "--provider", host_library, "--num-runs", "2"],
        capture_output=True,
        text=True,
    )
    assert ran.returncode == 0, ran.stderr


def test_tte_run_does_not_load_the_plugin_into_python(tmp_path):
    # A plugin that cannot load would fail `import torch_tensorrt_executorch_runtime`;
    # the launcher imports the package without loading it and execs the runner.
    command = _tte_run_command()
    env = dict(os.environ, TORCH_TENSORRT_EXECUTORCH_LIBRARY=str(tmp_path / "gone.so"))
    result = subprocess.run([command, "--help"], capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: tte-run")


def test_tte_run_says_what_is_missing_without_the_runner(tmp_path, capsys):
    from torch_tensorrt_executorch_runtime import _tte_run

    assert _tte_run.main(["--help"], runner=tmp_path / "bin" / "tte-run") == 127
    message = capsys.readouterr().err
    assert str(tmp_path / "bin" / "tte-run") in message
    assert "pip install --force-reinstall torch-tensorrt-executorch-runtime" in message
    assert "torch-tensorrt-executorch run" in message


def test_run_progress_bar(programs, host_library):
    result = cli(
        "run", programs["add_one"], "--provider-library", host_library, "--num-runs", "50", "--numpy",
        "--progress", "on"
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
            {"name": "x", "is_input": True, "dtype": "float32",
             "profiles": [{"min": [1, 4], "opt": [2, 4], "max": [8, 4]}]},
            {"name": "y", "is_input": False, "dtype": "float32", "shape_of": "x"},
        ],
    )
    (tmp_path / "add_one.plan").write_bytes(plan)
    out = tmp_path / "packed.pte"
    result = cli(
        "pack", out, "--engine", tmp_path / "add_one.plan", "--input", "x:float32:1-2-8,4",
        "--output", "y:float32:x:0,4"
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


def test_pack_a_data_dependent_output_then_run(tmp_path, host_library):
    # "<=N" declares a dim known only after the engine ran; `run` reports the
    # shape the engine produced (all ones: every element kept; zeros: none).
    from torch_tensorrt_executorch_runtime.testing import PlanInput, PlanOutput, make_test_engine

    plan = make_test_engine("keep_positive",
                            [PlanInput("x", "float32", shape=[(1, 8, 64)]), PlanOutput("y", "float32", shape=[-1])])
    (tmp_path / "keep_positive.plan").write_bytes(plan)
    out = tmp_path / "keep_positive.pte"
    result = cli(
        "pack", out, "--engine", tmp_path / "keep_positive.plan", "--input", "x:float32:1-8-64",
        "--output", "y:float32:<=64"
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(cli("inspect", out, "--json", "--no-load").stdout)
    assert report["methods"][0]["outputs"][0]["shape"] == [64]
    for kind, expected in (("ones:5", [5]), ("zeros:5", [0])):
        run = cli("run", out, "--provider-library", host_library, "--input", kind, "--json", "--numpy")
        assert run.returncode == 0, run.stderr
        assert json.loads(run.stdout)["outputs"][0]["shape"] == expected
    bad = cli("pack", out, "--engine", tmp_path / "keep_positive.plan", "--input", "x:float32:1-8-64",
              "--output", "y:float32:<=a")
    assert bad.returncode != 0 and "'<=N'" in bad.stderr


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


def test_doctor_says_the_driver_is_too_old_for_the_plugins_cuda(tte, monkeypatch):
    """A driver that lists GPUs but is older than the CUDA runtime the plugin links (a CUDA 13 build on
    JetPack 6's CUDA 12.6 driver): the plugin sees no device, and doctor says why instead of passing."""
    from torch_tensorrt_executorch_runtime import _native
    from torch_tensorrt_executorch_runtime.cli import doctor

    gpu = {"index": 0, "name": "Orin", "compute_capability": "8.7", "memory_bytes": 2**34}
    monkeypatch.setattr(_native, "driver_report",
                        lambda: {"found": True, "version": "12.6", "gpus": [gpu], "detail": ""})
    monkeypatch.setattr(_native, "cuda_device_count", lambda: 0)
    reason = "the NVIDIA driver is too old: it supports CUDA 12.6, and this build of the plugin runs on CUDA 13.0"
    monkeypatch.setattr(_native, "cuda_unavailable_reason", lambda: reason)
    report = doctor.collect()
    assert report["cuda_unavailable"] == reason
    assert {"missing": "a CUDA device the plugin can use", "fix": reason} in report["missing"]
    assert f"CUDA devices:  none usable by the plugin: {reason}" in doctor.format_text(report)


def test_the_plugin_says_why_it_sees_no_device(tte):
    from torch_tensorrt_executorch_runtime import _native

    reason = _native.cuda_unavailable_reason()
    assert (tte.cuda_device_count() == 0) == bool(reason), reason
