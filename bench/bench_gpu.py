"""GPU benchmarks: each figure is a ratio against a baseline measured in the same run.

Runs on a machine with an NVIDIA GPU (scripts/gpu-check.sh calls it), with the
CUDA test provider (its "engine" is real CUDA work) because no TensorRT engine
can run there. Prints one JSON document and a table; never asserts.

  python bench/bench_gpu.py --programs DIR --providers DIR --bin DIR --tte-run FILE [--out FILE]

Baselines, all measured here: a null kernel launch + stream sync from Python
(cupy), a cudaGraphLaunch of it + sync from Python (cupy), torch eager ops,
pinned cudaMemcpy of 64 MB and the ways a graph can serve moving tensors
(tte-cuda-baselines, C++). Every comparison runs in interleaved rounds
(bench/_timing.py): each figure is the median round, with the lowest and
highest round beside it. Goals:

- Program.run, device-resident I/O, null kernel, views / bare launch     <= 1.5
- Program.forward (owned outputs) / bare launch                          <= 2.0
- Program.run with cuda_graphs=True, the caller reusing its buffers
  / bare cudaGraphLaunch + sync on a stream of the same kind              <= 1.2
  (torch's default stream: the engine runs on a blocking stream of the
  delegate's, against a launch on a blocking stream; the caller's own
  non-blocking stream, against a launch on a non-blocking one)
- a 1000-step loop of Program.forward with cuda_graphs=True and a fresh
  input tensor (and a fresh output) each step: graph replays per step
  after warm-up                                                           >= 0.99
  time per step / (bare cudaGraphLaunch + sync + the bandwidth-bound
  time of the copies it needs)                                            <= 1.2
  time per step / the same loop without graphs (reported; a graph
  should not cost more than it saves)                                     <= 1.0
- load_host_memory (bench/load_memory.py) with the CUDA test provider:
  kept / file <= 0.05, peak / file <= 1.1, load / reading the file once   <= 1.3
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
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _timing import interleaved_rounds, p50_us, per_call_us, ratio, report, summary
from load_memory import load_host_memory, pack_large_program

MB64 = 64 << 20


def run_json(cmd: list[str]) -> dict:
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr[-4000:]}")
    return json.loads(done.stdout)


# Untimed calls of each path before its first round.
WARMUP = 50


def tte_run_p50_us(binary: Path, program: Path, provider: Path, runs: int, *extra: str) -> dict:
    doc = run_json([str(binary), str(program), "--provider", str(provider), "--num-runs", str(runs),
                    "--warmup", "50", "--json", *extra])
    return {k: v * 1000.0 for k, v in doc["latency_ms"].items()}


def warmed(call, warmup: int = WARMUP):
    for _ in range(warmup):
        call()
    return call


# ---- baselines from Python --------------------------------------------------------------


class PythonBaselines:
    """A null kernel launched from Python with cupy, plainly and as a CUDA graph.

    The graph is launched on a non-blocking stream, or on a blocking one: a program called on torch's
    default (legacy) stream runs its engine on a blocking stream of its own (so that it follows the
    caller's default-stream work), and a launch there is compared with a bare launch on a stream of
    the same kind."""

    def __init__(self):
        import cupy

        self.cupy = cupy
        self.kernel = cupy.RawKernel(r'extern "C" __global__ void tte_null() {}', "tte_null")
        self.stream = cupy.cuda.Stream(non_blocking=True)
        self.blocking_stream = cupy.cuda.Stream(non_blocking=False)

    def launch_sync(self):
        kernel, stream = self.kernel, self.stream

        def call():
            kernel((1,), (1,), (), stream=stream)
            stream.synchronize()

        return call

    def graph_launch_sync(self, blocking: bool = False):
        """A call launching a captured null kernel + sync, or None where cupy cannot capture."""
        stream = self.blocking_stream if blocking else self.stream
        try:
            stream.begin_capture()
            self.kernel((1,), (1,), (), stream=stream)
            graph = stream.end_capture()
        except (AttributeError, RuntimeError, self.cupy.cuda.runtime.CUDARuntimeError):
            return None

        def call():
            graph.launch(stream)
            stream.synchronize()

        return call


# ---- measurements ------------------------------------------------------------------------


def python_provider_program(program: Path):
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
    return lambda: program_.run([x], copy=False)


def call_rounds(programs: Path, baselines: PythonBaselines, calls: int, rounds: int) -> dict[str, list[float]]:
    """Per-call p50s of every path that has a per-call goal, interleaved in rounds with their baselines."""
    import torch

    import torch_tensorrt_executorch_runtime as tte

    x = torch.zeros(256, device="cuda")
    null = tte.load(programs / "null_resident.pte")
    graphs = tte.load(programs / "null_resident.pte", options={"cuda_graphs": True})
    big = torch.arange(1 << 20, dtype=torch.float32, device="cuda")
    add_one = tte.load(programs / "add_one_device_resident.pte")
    stream = torch.cuda.current_stream()
    null_out = torch.empty(256, device="cuda")

    def eager():
        y = big + 1
        stream.synchronize()
        return y

    def eager_null():
        torch.add(x, 1, out=null_out)
        stream.synchronize()

    paths = {
        "bare_launch": baselines.launch_sync(),
        "run_views": lambda: null.run([x], copy=False),
        "forward_owned": lambda: null.forward(x),
        # The caller reuses its buffers: the graph replays on them as they are.
        "run_cuda_graphs": lambda: graphs.run([x], copy=False),
        "add_one_1m_forward": lambda: add_one.forward(big),
        "add_one_1m_torch_eager": eager,
        "torch_add_out_256": eager_null,
        "python_provider": python_provider_program(programs / "null_resident.pte"),
    }
    bare_graph = baselines.graph_launch_sync()
    if bare_graph is not None:
        paths["bare_graph_launch"] = bare_graph
        blocking = baselines.graph_launch_sync(blocking=True)
        if blocking is not None:
            paths["bare_graph_launch_blocking_stream"] = blocking
    for call in paths.values():
        warmed(call)
    measures = {name: (lambda call=call: p50_us(call, calls, warmup=0)) for name, call in paths.items()}
    if bare_graph is not None:
        # The same call with torch's current stream set to a non-blocking stream: the engine runs on
        # the caller's stream itself, of the kind the bare launch above uses.
        caller_stream = torch.cuda.Stream()  # torch's streams are non-blocking

        def on_caller_stream() -> float:
            default = torch.cuda.current_stream()
            torch.cuda.set_stream(caller_stream)
            try:
                return p50_us(paths["run_cuda_graphs"], calls, warmup=WARMUP)
            finally:
                torch.cuda.set_stream(default)

        measures["run_cuda_graphs_caller_stream"] = on_caller_stream
    return interleaved_rounds(measures, rounds)


def fresh_tensor_loop(programs: Path, baselines: PythonBaselines, steps: int, rounds: int) -> dict:
    """A loop of `steps` Program.forward calls, a fresh input tensor each step (and a fresh output each step,
    all kept until the loop ends), with cuda_graphs on and off, interleaved in rounds with a loop of
    bare cudaGraphLaunch + sync, and with the caller copying each input into one buffer it reuses."""
    import torch

    import torch_tensorrt_executorch_runtime as tte

    program = programs / "add_one_256_resident.pte"
    graphed = tte.load(program, options={"cuda_graphs": True})
    plain = tte.load(program)
    # Distinct memory for every step: no allocator can hand an address back.
    xs = [torch.full((256,), float(i), device="cuda") for i in range(steps)]
    for i in (0, 1, 2, steps - 1):
        for p in (graphed, plain):
            (y,) = p.forward(xs[i])
            assert torch.equal(y, xs[i] + 1), "add_one gave a wrong result"
    reused = torch.empty(256, device="cuda")
    replays: list[float] = []
    updates: list[float] = []
    d2d_bytes: list[float] = []

    def loop_of(p, counted: bool = False, copy_into_reused: bool = False):
        def measure() -> float:
            before = tte.runtime_stats()
            outputs = []
            start = time.perf_counter_ns()
            if copy_into_reused:
                for x in xs:
                    reused.copy_(x)
                    outputs.append(p.forward(reused)[0])
            else:
                for x in xs:
                    outputs.append(p.forward(x)[0])
            elapsed = (time.perf_counter_ns() - start) / steps / 1000.0
            if counted:
                after = tte.runtime_stats()
                replays.append((after["graph_replays"] - before["graph_replays"]) / steps)
                updates.append((after["graph_updates"] - before["graph_updates"]) / steps)
                d2d_bytes.append((after["d2d_bytes"] - before["d2d_bytes"]) / steps)
            assert torch.equal(outputs[-1], xs[-1] + 1), "add_one gave a wrong result in the loop"
            return elapsed

        return measure

    # Like for like: the loop runs on torch's default stream, so the engine on a blocking stream.
    bare_graph = (baselines.graph_launch_sync(blocking=True) or baselines.graph_launch_sync()
                  or baselines.launch_sync())
    measures = {
        "graphs_fresh": loop_of(graphed, counted=True),
        "plain_fresh": loop_of(plain),
        "graphs_caller_copies_into_reused": loop_of(graphed, copy_into_reused=True),
        "bare_graph_launch": lambda: per_call_us(bare_graph, steps),
    }
    for measure in measures.values():  # warm-up: the captures happen here
        measure()
    replays.clear()
    updates.clear()
    d2d_bytes.clear()
    figures = interleaved_rounds(measures, rounds)
    return {"steps": steps, "figures_us": figures, "replays_per_step": replays,
            "graph_updates_per_step": updates, "d2d_bytes_per_step": d2d_bytes}


def host_staging(programs: Path, calls: int, rounds: int) -> dict:
    """64 MB in and out through a host-I/O program: page-locked and pageable callers, views, in rounds."""
    import torch

    import torch_tensorrt_executorch_runtime as tte

    program = tte.load(programs / "identity_64mb_host.pte")
    pinned = torch.ones(MB64 // 4).pin_memory()
    pageable = torch.ones(MB64 // 4)
    pinned_call = warmed(lambda: program.run([pinned], copy=False), 3)
    pageable_call = warmed(lambda: program.run([pageable], copy=False), 3)
    figures = interleaved_rounds({"pinned_caller": lambda: p50_us(pinned_call, calls, warmup=0),
                                  "pageable_caller": lambda: p50_us(pageable_call, calls, warmup=0)}, rounds)
    return {"figures_us": figures, "pinned_caller_input_is_pinned": bool(pinned.is_pinned())}


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


def decode_loop(program: Path, steps: int, rounds: int) -> dict[str, list[float]]:
    """Loops of `steps` decode steps of a program whose KV cache is an aliased input, against torch eager,
    interleaved in rounds."""
    import torch

    import torch_tensorrt_executorch_runtime as tte

    prog = tte.load(program)
    cache = torch.zeros(1024, device="cuda")
    x = torch.ones(1024, device="cuda")
    stream = torch.cuda.current_stream()

    def program_step():
        prog.forward(cache, x)  # the cache is updated in place; outputs are owned copies

    def eager_step():
        cache.add_(x)
        y = cache.clone()
        stream.synchronize()  # a decode step reads its token before the next
        return y

    for step in (program_step, eager_step):
        warmed(step, 20)
    return interleaved_rounds({"program_step": lambda: per_call_us(program_step, steps),
                               "torch_eager_step": lambda: per_call_us(eager_step, steps)}, rounds)


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


def concurrent_calls(programs: Path, rounds: int, calls: int = 400) -> dict[str, list[float]]:
    """Calls per second of spin200_resident.pte (200 us per call) from 1 and 4 threads, in rounds."""
    import threading

    import torch

    import torch_tensorrt_executorch_runtime as tte

    def rate(loaded: list, threads: int) -> float:
        xs = [torch.arange(1 << 16, dtype=torch.float32, device="cuda") for _ in range(threads)]
        for p, x in zip(loaded, xs, strict=False):
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
    own_loads = [tte.load(programs / "spin200_resident.pte") for _ in range(4)]
    return interleaved_rounds({"one_thread": lambda: rate([one], 1),
                               "four_threads_one_program": lambda: rate([one], 4),
                               "four_threads_own_loads": lambda: rate(own_loads, 4)}, rounds)


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
    ap.add_argument("--runs", type=int, default=1000, help="timed calls per path in each round")
    ap.add_argument("--rounds", type=int, default=7, help="interleaved rounds of every comparison")
    ap.add_argument("--load-memory-mb", type=int, default=64, help="engine size of the load-memory measurement")
    ap.add_argument("--load-memory-program", type=Path,
                    help="the load-memory program, packed beforehand by load_memory.pack_large_program with its "
                    "-warm twin beside it (the GPU machine has no exir); packed here when not given")
    args = ap.parse_args()

    import torch_tensorrt_executorch_runtime as tte

    cuda_provider = args.providers / "libtte_test_provider_cuda.so"
    if "test-cuda" not in set(tte.providers.providers()):
        tte.providers.register_provider_library(str(cuda_provider))
    native = run_json([str(args.bin / "tte-cuda-baselines")])
    python = PythonBaselines()
    before = tte.runtime_stats()
    calls = call_rounds(args.programs, python, args.runs, args.rounds)
    after = tte.runtime_stats()
    # Only the cuda_graphs program replays graphs in those rounds: the share of its
    # replays that repeated the last run without executing the method.
    replays = after["graph_replays"] - before["graph_replays"]
    repeats = after["run_repeats"] - before["run_repeats"]
    bare_launch = statistics.median(calls["bare_launch"])
    graph_key = "bare_graph_launch" if "bare_graph_launch" in calls else None
    results: dict = {
        "rounds": args.rounds,
        "baselines": {
            "native": native,
            "python_null_kernel_launch_sync_us": summary(calls["bare_launch"]),
            "python_graph_launch_sync_us": summary(calls[graph_key]) if graph_key else None,
        },
        "program_calls_us": {name: summary(values) for name, values in calls.items()},
        "cuda_graphs_reused_buffers": {"graph_replays": replays, "run_repeats": repeats,
                                       "repeats_over_replays": repeats / replays if replays else None},
    }
    rows = []

    def add(name, measured, baseline, goal, direction, what, spread=None):
        r = measured / baseline
        ok = {"<=": r <= goal, "<": r < goal}.get(direction, r >= goal)
        span = f"{spread['min']:.2f}..{spread['max']:.2f}" if spread else ""
        rows.append((name, measured, baseline, r, span, f"{direction} {goal}", "met" if ok else "MISSED"))
        results[name] = {"what": what, "measured": measured, "baseline": baseline, "ratio": r,
                         "goal": f"{direction} {goal}", "met": ok}
        if spread:
            results[name]["ratio_rounds"] = spread

    def reference(name, measured, baseline, spread=None):
        span = f"{spread['min']:.2f}..{spread['max']:.2f}" if spread else ""
        rows.append((name, measured, baseline, measured / baseline if baseline else 0, span, "", ""))

    def add_rounds(name, figures, measured, base, goal, direction, what):
        # The median of the per-round ratios, not the ratio of the medians.
        r = ratio(figures, measured, base)
        count = len(figures[measured])

        def median(side):
            return statistics.median(figures[side] if isinstance(side, str) else [side(i) for i in range(count)])

        add(name, median(measured), median(base), goal, direction, what, r)
        ok = {"<=": r["median"] <= goal, "<": r["median"] < goal}.get(direction, r["median"] >= goal)
        results[name].update(ratio=r["median"], met=ok)
        rows[-1] = rows[-1][:3] + (r["median"],) + rows[-1][4:6] + ("met" if ok else "MISSED",)

    add_rounds("run_views_vs_bare_launch", calls, "run_views", "bare_launch", 1.5, "<=",
               "Program.run([x], copy=False), null kernel, device-resident / cupy launch + sync")
    add_rounds("forward_owned_vs_bare_launch", calls, "forward_owned", "bare_launch", 2.0, "<=",
               "Program.forward(x), owned outputs / cupy launch + sync")
    if graph_key:
        results["graph_baseline_from"] = "python (cupy)"
        blocking_key = next(k for k in ("bare_graph_launch_blocking_stream", graph_key) if k in calls)
        add_rounds("cuda_graphs_vs_bare_graph_launch", calls, "run_cuda_graphs", blocking_key, 1.2, "<=",
                   "Program.run with cuda_graphs=True, buffers reused, torch's default stream (the engine "
                   "runs on a blocking stream of the delegate's) / cudaGraphLaunch + sync on a blocking stream")
        add_rounds("cuda_graphs_caller_stream_vs_bare_graph_launch", calls, "run_cuda_graphs_caller_stream",
                   graph_key, 1.2, "<=",
                   "the same on the caller's non-blocking stream (torch.cuda.set_stream) / cudaGraphLaunch "
                   "+ sync on a non-blocking stream")
        r = ratio(calls, "run_cuda_graphs", graph_key)
        reference("(reference) cuda_graphs, default stream / bare launch on a non-blocking stream",
                  statistics.median(calls["run_cuda_graphs"]), statistics.median(calls[graph_key]), r)
    else:
        results["graph_baseline_from"] = "native (cupy graphs unavailable)"
        add("cuda_graphs_vs_bare_graph_launch", statistics.median(calls["run_cuda_graphs"]),
            native["graph_launch_sync_us"]["median"], 1.2, "<=",
            "Program.run with cuda_graphs=True, buffers reused / cudaGraphLaunch + sync (native)")
    add_rounds("add_one_1m_vs_torch_eager", calls, "add_one_1m_forward", "add_one_1m_torch_eager", 1.5, "<=",
               "Program.forward, add_one over 1M floats / torch eager x + 1 + sync")
    r = ratio(calls, "torch_add_out_256", "bare_launch")
    reference("(reference) torch.add(x, 1, out=y) + sync, 256 floats", statistics.median(calls["torch_add_out_256"]),
              bare_launch, r)
    add_rounds("python_provider_vs_bare_launch", calls, "python_provider", "bare_launch", 2.5, "<=",
               "Program.run through a Python-protocol provider (cupy null kernel) / cupy launch + sync")

    # Fresh tensors every step, with CUDA graphs.
    fresh = fresh_tensor_loop(args.programs, python, 1000, args.rounds)
    figures = fresh["figures_us"]
    d2d_gbps = native["d2d_gbps"]["median"]
    copy_us = [b / (d2d_gbps * 1e9) * 1e6 for b in fresh["d2d_bytes_per_step"]]
    results["fresh_tensor_loop"] = {
        "steps": fresh["steps"],
        "per_step_us": {name: summary(values) for name, values in figures.items()},
        "replays_per_step": summary(fresh["replays_per_step"]),
        "graph_updates_per_step": summary(fresh["graph_updates_per_step"]),
        "d2d_bytes_per_step": summary(fresh["d2d_bytes_per_step"]),
        "copy_time_us_at_d2d_bandwidth": summary(copy_us),
    }
    replay_rate = statistics.median(fresh["replays_per_step"])
    add("fresh_tensors_graph_replay_rate", replay_rate, 1.0, 0.99, ">=",
        "graph replays per step, 1000-step Program.forward loop, a fresh input and output each step",
        summary(fresh["replays_per_step"]))
    add_rounds("fresh_tensors_vs_bare_graph_launch_and_copies", figures, "graphs_fresh",
               lambda r: figures["bare_graph_launch"][r] + copy_us[r], 1.2, "<=",
               "per step, fresh tensors, cuda_graphs=True / (cudaGraphLaunch + sync + its copies at D2D bandwidth)")
    add_rounds("fresh_tensors_graphs_vs_no_graphs", figures, "graphs_fresh", "plain_fresh", 1.0, "<=",
               "per step, fresh tensors, cuda_graphs=True / the same loop without graphs")
    r = ratio(figures, "graphs_caller_copies_into_reused", "graphs_fresh")
    reference("(reference) the caller copies each input into one reused buffer / fresh",
              statistics.median(figures["graphs_caller_copies_into_reused"]),
              statistics.median(figures["graphs_fresh"]), r)
    # The alternatives for moving tensors, natively (tte-cuda-baselines), against a fixed-buffer graph.
    fixed = native["fixed_graph_launch_us"]["median"]
    for key, label in (("fresh_stream_copies_us", "copies around a graph launch"),
                       ("fresh_memcpy_nodes_us", "memcpy nodes re-pointed in the graph"),
                       ("fresh_exec_update_us", "re-capture + cudaGraphExecUpdate (what the cache does)"),
                       ("fresh_plain_launch_us", "no graph, kernel on the new addresses")):
        reference(f"(native) moving tensors: {label} / fixed graph", native[key]["median"], fixed)

    # Bytes moved per call: 64 MB in and 64 MB out, against the pinned peak
    # of the same two copies (native, measured before the rounds).
    def native_copy_us(key):
        return MB64 / (native[key]["median"] * 1e9) * 1e6

    pinned_us = native_copy_us("pinned_h2d_gbps") + native_copy_us("pinned_d2h_gbps")
    pageable_us = native_copy_us("pageable_h2d_gbps") + native_copy_us("pageable_d2h_gbps")
    staging = host_staging(args.programs, 10, min(args.rounds, 3))
    staged = staging["figures_us"]
    results["host_staging"] = {"per_call_us": {k: summary(v) for k, v in staged.items()},
                               "pinned_caller_input_is_pinned": staging["pinned_caller_input_is_pinned"]}
    throughput = {"pinned": [pinned_us / v for v in staged["pinned_caller"]],
                  "pageable": [pinned_us / v for v in staged["pageable_caller"]]}
    add("host_staging_64mb_pinned_caller_vs_pinned", statistics.median(throughput["pinned"]), 1.0, 0.85, ">=",
        "64 MB in + out through a host-I/O program, page-locked caller, views: throughput / pinned cudaMemcpy",
        summary(throughput["pinned"]))
    reference("(reference) the same, pageable caller", statistics.median(throughput["pageable"]), 1.0,
              summary(throughput["pageable"]))
    reference("(reference) pageable cudaMemcpy vs pinned", pinned_us / pageable_us, 1.0)
    results["host_staging_64mb_pageable_caller_vs_pinned"] = statistics.median(throughput["pageable"])
    results["pageable_copy_64mb_vs_pinned"] = pinned_us / pageable_us

    copies = host_copies_on_device_path(args.programs / "add_one_device_resident.pte")
    results["host_copies_device_resident"] = copies
    total = copies["h2d_copies"] + copies["d2h_copies"]
    rows.append(("host copies per 100 device-resident runs", total, 0, 0, "", "== 0",
                 "met" if total == 0 else "MISSED"))

    loop = decode_loop(args.programs / "kv_update_resident.pte", 1000, args.rounds)
    r = ratio(loop, "program_step", "torch_eager_step")
    results["decode_loop_kv_update"] = {"steps": 1000, "per_step_us": {k: summary(v) for k, v in loop.items()},
                                        "ratio": r["median"], "ratio_rounds": r}
    rows.append(("decode step, kv_update (TR02), Program.forward / torch eager",
                 statistics.median(loop["program_step"]),
                 statistics.median(loop["torch_eager_step"]), r["median"], f"{r['min']:.2f}..{r['max']:.2f}",
                 "(no goal yet)", ""))

    # Device memory and concurrency (docs/architecture.md: shared scratch,
    # shared engines, concurrent calls).
    scratch = shared_scratch(args.programs)
    results["shared_scratch"] = scratch
    add("four_delegates_shared_scratch_vs_largest", scratch["shared_peak_bytes"] / (1 << 20),
        scratch["largest_scratch_bytes"] / (1 << 20), 1.1, "<=",
        "peak device MiB of a 4-delegate method, shared scratch / the largest delegate's scratch")
    reference("(reference) the same, each engine its own scratch", scratch["own_peak_bytes"] / (1 << 20),
              scratch["largest_scratch_bytes"] / (1 << 20))
    loads = second_load(args.programs)
    results["second_load"] = loads
    add("second_load_vs_first_load_device_memory", loads["second_load_bytes"] / (1 << 20),
        loads["first_load_bytes"] / (1 << 20), 0.1, "<",
        "device MiB a second load of a program adds / the first load's")
    threads = concurrent_calls(args.programs, min(args.rounds, 3))
    results["concurrent_calls"] = {k: summary(v) for k, v in threads.items()}
    add_rounds("four_threads_one_program_vs_one_thread", threads, "four_threads_one_program", "one_thread", 3.0, ">=",
               "calls/s, 4 threads on one program (200 us spin) / 1 thread")
    r = ratio(threads, "four_threads_own_loads", "one_thread")
    reference("(reference) 4 threads, each its own load (engine shared)",
              statistics.median(threads["four_threads_own_loads"]), statistics.median(threads["one_thread"]), r)

    # Host memory and time of loading a large engine with the CUDA test provider.
    large = args.load_memory_program or pack_large_program(Path(tempfile.mkdtemp()) / "large.pte",
                                                           args.load_memory_mb)
    memory = load_host_memory(large, cuda_provider, "test-cuda")
    results["load_host_memory"] = memory
    for key, goal, direction in (("kept_over_plan", 0.05, "<="), ("peak_over_plan", 1.1, "<="),
                                 ("load_over_read", 1.3, "<=")):
        add(f"load_host_memory_{key}", memory[key], 1.0, goal, direction,
            f"loading a {memory['plan_bytes']}-byte program with the CUDA test provider: {key}",
            memory["spread"][key])

    # The C path, for reference: the same delegate call from C++ (tte-run).
    c_path = tte_run_p50_us(args.tte_run, args.programs / "null_resident.pte", cuda_provider, args.runs * 5)
    results["tte_run_null_us"] = c_path["p50"]
    reference("(reference) tte-run null / bare launch from Python", c_path["p50"], bare_launch)
    results["binding"] = binding_record()

    table = [f"{'benchmark':62} {'measured':>10} {'baseline':>10} {'ratio':>7} {'rounds':>12}  goal"]
    for name, m, b, r, span, goal, verdict in rows:
        table.append(f"{name:62} {m:10.2f} {b:10.2f} {r:7.2f} {span:>12}  {goal} {verdict}")
    report(results, table, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
