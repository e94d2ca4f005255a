"""GPU benchmarks: each figure is a ratio against a baseline measured in the same run.

Runs on a machine with an NVIDIA GPU (scripts/gpu-check.sh calls it), with the
CUDA test provider (its "engine" is real CUDA work) because no TensorRT engine
can run there. Prints one JSON document and a table; never asserts.

  python bench/bench_gpu.py --programs DIR --providers DIR --bin DIR --tte-run FILE [--out FILE]

Baselines, all measured here: a null kernel launch + stream sync from Python
(cupy), a cudaGraphLaunch of it + sync from Python (cupy), torch eager ops,
and pinned cudaMemcpy of 64 MB (tte-cuda-baselines, C++). Goals:

- Program.run, device-resident I/O, null kernel, views / bare launch     <= 1.5
- Program.forward (owned outputs) / bare launch                          <= 2.0
- Program.run with cuda_graphs=True / bare cudaGraphLaunch               <= 1.3
- add_one over 1M floats, Program.forward / torch eager x + 1            <= 1.5
- through a Python-protocol provider (cupy null kernel) / bare launch    <= 2.5
- 64 MB in and out through a host-I/O program, page-locked caller,
  throughput / pinned cudaMemcpy                                          >= 0.85
- host copies made on the device-resident path                            == 0
- device memory of a method of four delegates (scratch 64/256/128/32 MiB)
  with shared scratch / the largest delegate's scratch                   <= 1.1
- device memory a second load of a program adds / the first load's       < 0.1
- 4 threads calling one program (200 us spin kernel), throughput / one
  thread                                                                  >= 3.0
  (4 threads each with its own load of the program, engine shared, for
  reference)
and, with no goal yet, an LLM-shaped loop: 1000 decode steps of a program
whose KV cache is an aliased input (TR02, kv_update), per step, against the
same step in torch eager ops. The C path (tte-run) is kept as a reference.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from _timing import p50_us

MB64 = 64 << 20


def run_json(cmd: list[str]) -> dict:
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr[-4000:]}")
    return json.loads(done.stdout)


# Untimed calls before each p50_us measurement.
WARMUP = 50


def tte_run_p50_us(binary: Path, program: Path, provider: Path, runs: int, *extra: str) -> dict:
    doc = run_json([str(binary), str(program), "--provider", str(provider), "--num-runs", str(runs),
                    "--warmup", "50", "--json", *extra])
    return {k: v * 1000.0 for k, v in doc["latency_ms"].items()}


# ---- baselines from Python --------------------------------------------------------------


class PythonBaselines:
    """A null kernel launched from Python with cupy, plainly and as a CUDA graph."""

    def __init__(self):
        import cupy

        self.cupy = cupy
        self.kernel = cupy.RawKernel(r'extern "C" __global__ void tte_null() {}', "tte_null")
        self.stream = cupy.cuda.Stream(non_blocking=True)

    def launch_sync_us(self, runs: int) -> float:
        kernel, stream = self.kernel, self.stream

        def call():
            kernel((1,), (1,), (), stream=stream)
            stream.synchronize()

        return p50_us(call, runs, warmup=WARMUP)

    def graph_launch_sync_us(self, runs: int) -> float | None:
        stream = self.stream
        try:
            stream.begin_capture()
            self.kernel((1,), (1,), (), stream=stream)
            graph = stream.end_capture()
        except (AttributeError, RuntimeError, self.cupy.cuda.runtime.CUDARuntimeError):
            return None

        def call():
            graph.launch(stream)
            stream.synchronize()

        return p50_us(call, runs, warmup=WARMUP)


# ---- measurements ------------------------------------------------------------------------


def program_calls(programs: Path, runs: int) -> dict:
    """Program.run / forward / cuda_graphs on the null program, add_one 1M against torch eager."""
    import torch

    import torch_tensorrt_executorch_runtime as tte

    out = {}
    x = torch.zeros(256, device="cuda")
    null = tte.load(programs / "null_resident.pte")
    out["run_views_us"] = p50_us(lambda: null.run([x], copy=False), runs, warmup=WARMUP)
    out["forward_owned_us"] = p50_us(lambda: null.forward(x), runs, warmup=WARMUP)
    graphs = tte.load(programs / "null_resident.pte", options={"cuda_graphs": True})
    out["run_cuda_graphs_us"] = p50_us(lambda: graphs.run([x], copy=False), runs, warmup=WARMUP)

    big = torch.arange(1 << 20, dtype=torch.float32, device="cuda")
    add_one = tte.load(programs / "add_one_device_resident.pte")
    stream = torch.cuda.current_stream()

    def eager():
        y = big + 1
        stream.synchronize()
        return y

    out["add_one_1m_forward_us"] = p50_us(lambda: add_one.forward(big), runs, warmup=WARMUP)
    out["add_one_1m_torch_eager_us"] = p50_us(eager, runs, warmup=WARMUP)
    null_out = torch.empty(256, device="cuda")

    def eager_null():
        torch.add(x, 1, out=null_out)
        stream.synchronize()

    out["torch_add_out_256_us"] = p50_us(eager_null, runs, warmup=WARMUP)
    return out


def python_provider_us(program: Path, runs: int) -> float:
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
    return p50_us(lambda: program_.run([x], copy=False), runs, warmup=WARMUP)


def host_staging(programs: Path, runs: int) -> dict:
    """64 MB in and out through a host-I/O program: page-locked and pageable callers, views."""
    import torch

    import torch_tensorrt_executorch_runtime as tte

    program = tte.load(programs / "identity_64mb_host.pte")
    pinned = torch.ones(MB64 // 4).pin_memory()
    pageable = torch.ones(MB64 // 4)
    return {
        "pinned_caller_us": p50_us(lambda: program.run([pinned], copy=False), runs, warmup=3),
        "pageable_caller_us": p50_us(lambda: program.run([pageable], copy=False), runs, warmup=3),
        "pinned_caller_input_is_pinned": bool(pinned.is_pinned()),
    }


def host_copies_on_device_path(program: Path) -> dict:
    import torch

    import torch_tensorrt_executorch_runtime as tte

    prog = tte.load(program)
    x = torch.zeros(1 << 20, device="cuda")
    prog.forward(x)
    tte.reset_runtime_stats()
    for _ in range(100):
        prog.forward(x)
    s = tte.runtime_stats()
    return {"runs": 100, "h2d_copies": s["h2d_copies"], "d2h_copies": s["d2h_copies"], "d2d_copies": s["d2d_copies"]}


def decode_loop(program: Path, steps: int) -> dict:
    """1000 decode steps of a program whose KV cache is an aliased input, against torch eager."""
    import torch

    import torch_tensorrt_executorch_runtime as tte

    prog = tte.load(program)
    cache = torch.zeros(1024, device="cuda")
    x = torch.ones(1024, device="cuda")
    stream = torch.cuda.current_stream()

    def loop(step) -> float:
        for _ in range(20):
            step()
        start = time.perf_counter_ns()
        for _ in range(steps):
            step()
        return (time.perf_counter_ns() - start) / steps / 1000.0

    def program_step():
        prog.forward(cache, x)  # the cache is updated in place; outputs are owned copies

    def eager_step():
        cache.add_(x)
        y = cache.clone()
        stream.synchronize()  # a decode step reads its token before the next
        return y

    measured = loop(program_step)
    baseline = loop(eager_step)
    return {"steps": steps, "program_step_us": measured, "torch_eager_step_us": baseline,
            "ratio": measured / baseline}


def device_used() -> int:
    import torch

    torch.cuda.synchronize()
    free, total = torch.cuda.mem_get_info()
    return total - free


def shared_scratch(programs: Path) -> dict:
    """Peak device memory of four_scratch_resident.pte, own scratch vs shared."""
    import torch

    import torch_tensorrt_executorch_runtime as tte

    largest = 256 << 20
    x = torch.arange(1 << 16, dtype=torch.float32, device="cuda")
    out = {"largest_scratch_bytes": largest, "sum_scratch_bytes": (64 + 256 + 128 + 32) << 20}
    for share in (False, True):
        before = device_used()
        program = tte.load(programs / "four_scratch_resident.pte", options={"share_device_memory": share})
        peak = 0
        for _ in range(3):
            program.forward(x)
            peak = max(peak, device_used() - before)
        del program
        out["shared_peak_bytes" if share else "own_peak_bytes"] = peak
    return out


def second_load(programs: Path) -> dict:
    """Device memory of a first and a second load of weights_resident.pte (512 MiB weights)."""
    import torch

    import torch_tensorrt_executorch_runtime as tte

    x = torch.arange(1 << 16, dtype=torch.float32, device="cuda")
    before = device_used()
    first = tte.load(programs / "weights_resident.pte")
    first.forward(x)
    first_bytes = device_used() - before
    second = tte.load(programs / "weights_resident.pte")
    second.forward(x)
    second_bytes = device_used() - before - first_bytes
    del first, second
    return {"first_load_bytes": first_bytes, "second_load_bytes": second_bytes}


def concurrent_calls(programs: Path, calls: int = 400) -> dict:
    """Calls per second of spin200_resident.pte (200 us per call) from 1 and 4 threads."""
    import threading

    import torch

    import torch_tensorrt_executorch_runtime as tte

    def rate(loaded: list, threads: int) -> float:
        xs = [torch.arange(1 << 16, dtype=torch.float32, device="cuda") for _ in range(threads)]
        for p, x in zip(loaded, xs):
            p.forward(x)
        barrier = threading.Barrier(threads + 1)

        def work(p, x):
            barrier.wait()
            for _ in range(calls):
                p.forward(x)

        workers = [threading.Thread(target=work, args=(loaded[i % len(loaded)], xs[i])) for i in range(threads)]
        for w in workers:
            w.start()
        barrier.wait()
        start = time.perf_counter()
        for w in workers:
            w.join()
        return threads * calls / (time.perf_counter() - start)

    one = tte.load(programs / "spin200_resident.pte", options={"max_concurrent_runs": 4})
    single = rate([one], 1)
    same_program = rate([one], 4)
    own_loads = [tte.load(programs / "spin200_resident.pte") for _ in range(4)]
    separate = rate(own_loads, 4)
    return {"one_thread_calls_per_s": single, "four_threads_one_program_calls_per_s": same_program,
            "four_threads_own_loads_calls_per_s": separate}


def binding_record() -> dict:
    import torch

    from torch_tensorrt_executorch_runtime._native import methods

    try:
        import cupy

        cupy_version = cupy.__version__
    except ImportError:
        cupy_version = None
    return {
        "torch": torch.__version__,
        "cupy": cupy_version,
        "python": sys.version.split()[0],
        # None: this torch publishes no DLPack C exchange API and torch
        # tensors went through __dlpack__.
        "torch_dlpack_exchange_api": methods.exchange_api_version(torch.Tensor),
        "binding_paths": methods.stats(),
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--programs", type=Path, required=True)
    ap.add_argument("--providers", type=Path, required=True)
    ap.add_argument("--bin", type=Path, required=True, help="folder with tte-cuda-baselines")
    ap.add_argument("--tte-run", type=Path, required=True, help="the tte-run binary")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--runs", type=int, default=5000)
    args = ap.parse_args()

    import torch_tensorrt_executorch_runtime as tte

    cuda_provider = args.providers / "libtte_test_provider_cuda.so"
    if "test-cuda" not in set(tte.providers.providers()):
        tte.providers.register_provider_library(str(cuda_provider))
    native = run_json([str(args.bin / "tte-cuda-baselines")])
    python = PythonBaselines()
    bare_launch = python.launch_sync_us(args.runs)
    bare_graph = python.graph_launch_sync_us(args.runs)
    results: dict = {
        "baselines": {
            "native": native,
            "python_null_kernel_launch_sync_us": bare_launch,
            "python_graph_launch_sync_us": bare_graph,
        },
    }
    rows = []

    def add(name, measured, baseline, goal, direction, what):
        ratio = measured / baseline
        ok = {"<=": ratio <= goal, "<": ratio < goal}.get(direction, ratio >= goal)
        rows.append((name, measured, baseline, ratio, f"{direction} {goal}", "met" if ok else "MISSED"))
        results[name] = {"what": what, "measured": measured, "baseline": baseline, "ratio": ratio,
                         "goal": f"{direction} {goal}", "met": ok}

    calls = program_calls(args.programs, args.runs)
    results["program_calls_us"] = calls
    add("run_views_vs_bare_launch", calls["run_views_us"], bare_launch, 1.5, "<=",
        "Program.run([x], copy=False), null kernel, device-resident / cupy launch + sync")
    add("forward_owned_vs_bare_launch", calls["forward_owned_us"], bare_launch, 2.0, "<=",
        "Program.forward(x), owned outputs / cupy launch + sync")
    graph_baseline = bare_graph if bare_graph is not None else native["graph_launch_sync_us"]["median"]
    results["graph_baseline_from"] = "python (cupy)" if bare_graph is not None else "native (cupy graphs unavailable)"
    add("cuda_graphs_vs_bare_graph_launch", calls["run_cuda_graphs_us"], graph_baseline, 1.3, "<=",
        "Program.run with cuda_graphs=True / cudaGraphLaunch + sync")
    add("add_one_1m_vs_torch_eager", calls["add_one_1m_forward_us"], calls["add_one_1m_torch_eager_us"], 1.5, "<=",
        "Program.forward, add_one over 1M floats / torch eager x + 1 + sync")
    rows.append(("(reference) torch.add(x, 1, out=y) + sync, 256 floats", calls["torch_add_out_256_us"],
                 bare_launch, calls["torch_add_out_256_us"] / bare_launch, "", ""))

    py_path = python_provider_us(args.programs / "null_resident.pte", min(args.runs, 2000))
    add("python_provider_vs_bare_launch", py_path, bare_launch, 2.5, "<=",
        "Program.run through a Python-protocol provider (cupy null kernel) / cupy launch + sync")

    # Bytes moved per call: 64 MB in and 64 MB out, against the pinned peak
    # of the same two copies.
    def copy_us(key):
        return MB64 / (native[key]["median"] * 1e9) * 1e6

    pinned_us = copy_us("pinned_h2d_gbps") + copy_us("pinned_d2h_gbps")
    pageable_us = copy_us("pageable_h2d_gbps") + copy_us("pageable_d2h_gbps")
    staging = host_staging(args.programs, 30)
    results["host_staging"] = staging
    add("host_staging_64mb_pinned_caller_vs_pinned", pinned_us / staging["pinned_caller_us"], 1.0, 0.85, ">=",
        "64 MB in + out through a host-I/O program, page-locked caller, views: throughput / pinned cudaMemcpy")
    for name, value in (
        ("(reference) the same, pageable caller", pinned_us / staging["pageable_caller_us"]),
        ("(reference) pageable cudaMemcpy vs pinned", pinned_us / pageable_us),
    ):
        rows.append((name, value, 1.0, value, "", ""))
    results["host_staging_64mb_pageable_caller_vs_pinned"] = pinned_us / staging["pageable_caller_us"]
    results["pageable_copy_64mb_vs_pinned"] = pinned_us / pageable_us

    copies = host_copies_on_device_path(args.programs / "add_one_device_resident.pte")
    results["host_copies_device_resident"] = copies
    total = copies["h2d_copies"] + copies["d2h_copies"]
    rows.append(("host copies per 100 device-resident runs", total, 0, 0, "== 0", "met" if total == 0 else "MISSED"))

    loop = decode_loop(args.programs / "kv_update_resident.pte", 1000)
    results["decode_loop_kv_update"] = loop
    rows.append(("decode step, kv_update (TR02), Program.forward / torch eager", loop["program_step_us"],
                 loop["torch_eager_step_us"], loop["ratio"], "(no goal yet)", ""))

    # Device memory and concurrency (docs/architecture.md: shared scratch,
    # shared engines, concurrent calls).
    scratch = shared_scratch(args.programs)
    results["shared_scratch"] = scratch
    add("four_delegates_shared_scratch_vs_largest", scratch["shared_peak_bytes"] / (1 << 20),
        scratch["largest_scratch_bytes"] / (1 << 20), 1.1, "<=",
        "peak device MiB of a 4-delegate method, shared scratch / the largest delegate's scratch")
    rows.append(("(reference) the same, each engine its own scratch", scratch["own_peak_bytes"] / (1 << 20),
                 scratch["largest_scratch_bytes"] / (1 << 20),
                 scratch["own_peak_bytes"] / scratch["largest_scratch_bytes"], "", ""))
    loads = second_load(args.programs)
    results["second_load"] = loads
    add("second_load_vs_first_load_device_memory", loads["second_load_bytes"] / (1 << 20),
        loads["first_load_bytes"] / (1 << 20), 0.1, "<",
        "device MiB a second load of a program adds / the first load's")
    threads = concurrent_calls(args.programs)
    results["concurrent_calls"] = threads
    add("four_threads_one_program_vs_one_thread", threads["four_threads_one_program_calls_per_s"],
        threads["one_thread_calls_per_s"], 3.0, ">=",
        "calls/s, 4 threads on one program (200 us spin) / 1 thread")
    rows.append(("(reference) 4 threads, each its own load (engine shared)",
                 threads["four_threads_own_loads_calls_per_s"], threads["one_thread_calls_per_s"],
                 threads["four_threads_own_loads_calls_per_s"] / threads["one_thread_calls_per_s"], "", ""))

    # The C path, for reference: the same delegate call from C++ (tte-run).
    c_path = tte_run_p50_us(args.tte_run, args.programs / "null_resident.pte", cuda_provider, args.runs)
    results["tte_run_null_us"] = c_path["p50"]
    rows.append(("(reference) tte-run null / bare launch from Python", c_path["p50"], bare_launch,
                 c_path["p50"] / bare_launch, "", ""))
    results["binding"] = binding_record()

    print(json.dumps(results, indent=2))
    print(f"\n{'benchmark':62} {'measured':>10} {'baseline':>10} {'ratio':>7}  goal")
    for name, m, b, r, goal, verdict in rows:
        print(f"{name:62} {m:10.2f} {b:10.2f} {r:7.2f}  {goal} {verdict}")
    if args.out:
        args.out.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
