"""GPU benchmarks: each figure is a ratio against a baseline measured in the same run.

Runs on a machine with an NVIDIA GPU (scripts/gpu-check.sh calls it), with the
CUDA test provider (its "engine" is real CUDA work) because no TensorRT engine
can run there. Prints one JSON document and a table; never asserts.

  python bench/bench_gpu.py --programs DIR --providers DIR --bin DIR --tte-run FILE [--out FILE]

- delegate call, device-resident I/O, null kernel, C test provider (through
  tte-run, a C++ process over the C API) / bare kernel launch + sync   goal <= 1.3
- the same through a Python-protocol provider whose enqueue launches the null
  kernel with cupy, driven from Python / bare launch + sync            goal <= 2.5
- CUDA-graph replay of the delegate / bare cudaGraphLaunch + sync      goal <= 1.1
- host-I/O staging of 64 MB in and out / pinned cudaMemcpy peak        goal >= 0.85
  (next to the pageable cudaMemcpy upstream's approach is bound by)
- host copies made on the device-resident path                          goal 0
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

MB64 = 64 << 20


def run_json(cmd: list[str]) -> dict:
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr[-4000:]}")
    return json.loads(done.stdout)


def tte_run_p50_us(binary: Path, program: Path, provider: Path, runs: int, *extra: str) -> dict:
    doc = run_json([str(binary), str(program), "--provider", str(provider), "--num-runs", str(runs),
                    "--warmup", "50", "--json", *extra])
    return {k: v * 1000.0 for k, v in doc["latency_ms"].items()}


def python_provider_p50_us(program: Path, runs: int) -> float:
    """Program.run from Python with a Python-protocol provider launching a cupy null kernel."""
    import cupy
    import torch

    import torch_tensorrt_executorch_runtime as tte
    from torch_tensorrt_executorch_runtime.errors import NotAcceptedError
    from torch_tensorrt_executorch_runtime.providers import IoTensor, register_provider

    kernel = cupy.RawKernel(r'extern "C" __global__ void tte_null() {}', "tte_null")

    class NullEngine:
        io_tensors = [IoTensor("x", True, "float32", 1), IoTensor("y", False, "float32", 1)]
        num_profiles = 1

        def profile_shape(self, profile, name):
            return (256,), (256,), (256,)

        def set_input_shape(self, name, shape):
            self.shape = tuple(shape)

        def get_output_shape(self, name):
            return self.shape

        def set_tensor_address(self, name, address):
            pass

        def enqueue(self, stream):
            kernel((1,), (1,), (), stream=cupy.cuda.ExternalStream(stream or 0))  # None: the legacy default stream

    class NullProvider:
        # Takes only the null test plan, so the other programs keep the C provider.
        def deserialize(self, plan, device_id, options):
            if b'"op":"null"' not in bytes(plan).replace(b" ", b""):
                raise NotAcceptedError("not the null test plan")
            return NullEngine()

    register_provider(NullProvider(), name="bench-python-null", memory="device", capturable=False)
    program_ = tte.load(program, options={"provider": "bench-python-null"})
    x = torch.zeros(256, device="cuda")
    for _ in range(50):
        program_.run([x], copy=False)
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter_ns()
        program_.run([x], copy=False)
        samples.append((time.perf_counter_ns() - t0) / 1000.0)
    return statistics.median(samples)


def host_copies_on_device_path(program: Path, provider_lib: Path) -> dict:
    import torch

    import torch_tensorrt_executorch_runtime as tte

    if "test-cuda" not in set(tte.providers.providers()):
        tte.providers.register_provider_library(str(provider_lib))
    prog = tte.load(program)
    x = torch.zeros(1 << 20, device="cuda")
    prog.forward(x)
    tte.reset_runtime_stats()
    for _ in range(100):
        prog.forward(x)
    s = tte.runtime_stats()
    return {"runs": 100, "h2d_copies": s["h2d_copies"], "d2h_copies": s["d2h_copies"], "d2d_copies": s["d2d_copies"]}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--programs", type=Path, required=True)
    ap.add_argument("--providers", type=Path, required=True)
    ap.add_argument("--bin", type=Path, required=True, help="folder with tte-cuda-baselines")
    ap.add_argument("--tte-run", type=Path, required=True, help="the tte-run binary")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--runs", type=int, default=5000)
    args = ap.parse_args()

    cuda_provider = args.providers / "libtte_test_provider_cuda.so"
    baselines = run_json([str(args.bin / "tte-cuda-baselines")])
    tte_run = args.tte_run
    results: dict = {"baselines": baselines}
    rows = []

    def add(name, measured, baseline, goal, direction):
        ratio = measured / baseline
        ok = ratio <= goal if direction == "<=" else ratio >= goal
        rows.append((name, measured, baseline, ratio, f"{direction} {goal}", "met" if ok else "MISSED"))
        results[name] = {"measured": measured, "baseline": baseline, "ratio": ratio, "goal": f"{direction} {goal}", "met": ok}

    bare_launch = baselines["null_kernel_launch_sync_us"]["median"]
    bare_graph = baselines["graph_launch_sync_us"]["median"]

    c_path = tte_run_p50_us(tte_run, args.programs / "null_resident.pte", cuda_provider, args.runs)
    add("delegate_null_c_provider_us", c_path["p50"], bare_launch, 1.3, "<=")
    graph = tte_run_p50_us(tte_run, args.programs / "null_resident.pte", cuda_provider, args.runs,
                           "--option", "TensorRTBackend.cuda_graphs=1")
    add("delegate_null_cuda_graph_us", graph["p50"], bare_graph, 1.1, "<=")

    staged = tte_run_p50_us(tte_run, args.programs / "identity_64mb_host.pte", cuda_provider, 30)
    # Bytes moved per call: 64 MB in and 64 MB out; throughput against the
    # pinned peak of the same two copies.
    def copy_us(key):  # microseconds for one copy of the baseline's size
        return baselines["copy_bytes"] / (baselines[key]["median"] * 1e9) * 1e6 * (MB64 / baselines["copy_bytes"])

    pinned_us = copy_us("pinned_h2d_gbps") + copy_us("pinned_d2h_gbps")
    pageable_us = copy_us("pageable_h2d_gbps") + copy_us("pageable_d2h_gbps")
    add("host_staging_64mb_throughput_vs_pinned", pinned_us / staged["p50"], 1.0, 0.85, ">=")
    results["pageable_copy_64mb_throughput_vs_pinned"] = pinned_us / pageable_us
    rows.append(("pageable cudaMemcpy (upstream's approach) vs pinned", pinned_us / pageable_us, 1.0,
                 pinned_us / pageable_us, "(reference)", ""))

    copies = host_copies_on_device_path(args.programs / "add_one_device_resident.pte", cuda_provider)
    results["host_copies_device_resident"] = copies
    rows.append(("host copies per 100 device-resident runs", copies["h2d_copies"] + copies["d2h_copies"], 0, 0, "== 0",
                 "met" if copies["h2d_copies"] + copies["d2h_copies"] == 0 else "MISSED"))

    py_path = python_provider_p50_us(args.programs / "null_resident.pte", min(args.runs, 2000))
    add("delegate_null_python_provider_us", py_path, bare_launch, 2.5, "<=")

    print(json.dumps(results, indent=2))
    print(f"\n{'benchmark':58} {'measured':>10} {'baseline':>10} {'ratio':>7}  goal")
    for name, m, b, r, goal, verdict in rows:
        print(f"{name:58} {m:10.2f} {b:10.2f} {r:7.2f}  {goal} {verdict}")
    if args.out:
        args.out.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
