"""Which CUDA runtime calls one run makes, and the time each takes: a diagnostic beside the
GPU benchmark (bench_gpu.py), not a benchmark (the counting adds about 30 ns a call).

Run with bench/cuda_call_counter.c's library preloaded (scripts/gpu-bundle.sh builds it into
BUNDLE/bin, scripts/gpu-check.sh runs this):

  LD_PRELOAD=BUNDLE/bin/libcuda_call_counter.so CUDA_CALL_COUNTER=BUNDLE/bin/libcuda_call_counter.so \\
      python bench/cuda_call_counts.py --programs BUNDLE/programs --providers BUNDLE/providers \\
      [--load-memory-program LARGE.pte]

For each path of bench_gpu.py's per-call rows (a null kernel, device-resident tensors; views,
owned outputs, CUDA graphs with reused and with fresh tensors) it prints the wall time per call
(the fastest of three rounds) and, per CUDA function called, the calls and microseconds per
run. With --load-memory-program (the 64 MiB program and its "-warm" twin of
bench/load_memory.py) it prints the time of reading the file once, of tte.load and of the first
forward, with the CUDA calls the load made, for the CUDA and the host test providers.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import time
from pathlib import Path


def counter():
    library = ctypes.CDLL(os.environ["CUDA_CALL_COUNTER"])

    def read() -> dict[str, tuple[int, int]]:
        buffer = ctypes.create_string_buffer(1 << 16)
        library.cuda_calls_dump(buffer, 1 << 16)
        calls = {}
        for line in buffer.value.decode().splitlines():
            name, count, nanoseconds = line.split()
            calls[name] = (int(count), int(nanoseconds))
        return calls

    return library.cuda_calls_reset, read


def per_call(name: str, call, reset, read, calls: int = 2000) -> None:
    for _ in range(200):
        call()
    best = None
    for _ in range(3):
        reset()
        start = time.perf_counter_ns()
        for _ in range(calls):
            call()
        us = (time.perf_counter_ns() - start) / calls / 1000
        if best is None or us < best[0]:
            best = (us, read())
    us, counted = best
    parts = ", ".join(f"{function} {count / calls:.2f}x {ns / calls / 1000:.2f} us"
                      for function, (count, ns) in sorted(counted.items(), key=lambda kv: -kv[1][1]))
    print(f"{name}: {us:.2f} us/call | {parts}", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--programs", type=Path, required=True, help="tests/gpu/make_gpu_programs.py's folder")
    ap.add_argument("--providers", type=Path, required=True, help="the test provider libraries")
    ap.add_argument("--load-memory-program", type=Path, help="bench/load_memory.py's 64 MiB program")
    args = ap.parse_args()

    import cupy
    import numpy as np
    import torch

    import torch_tensorrt_executorch_runtime as tte

    for name in ("cuda", "host"):
        if f"test-{name}" not in tte.providers.providers():
            tte.register_provider_library(str(args.providers / f"libtte_test_provider_{name}.so"))
    reset, read = counter()

    x = torch.zeros(256, device="cuda")
    null = tte.load(args.programs / "null_resident.pte")
    graphs = tte.load(args.programs / "null_resident.pte", options={"cuda_graphs": True})
    per_call("run, views", lambda: null.run([x], copy=False), reset, read)
    per_call("run, views, cuda_graphs (buffers reused)", lambda: graphs.run([x], copy=False), reset, read)
    per_call("forward, owned outputs", lambda: null.forward(x), reset, read)
    per_call("forward, owned outputs, cuda_graphs", lambda: graphs.forward(x), reset, read)

    kernel = cupy.RawKernel(r'extern "C" __global__ void tte_null() {}', "tte_null")
    stream = cupy.cuda.Stream(non_blocking=True)
    stream.begin_capture()
    kernel((1,), (1,), (), stream=stream)
    graph = stream.end_capture()

    def bare_graph():
        graph.launch(stream)
        stream.synchronize()

    def bare_launch():
        kernel((1,), (1,), (), stream=stream)
        stream.synchronize()

    blocking = cupy.cuda.Stream(non_blocking=False)

    def bare_graph_blocking():
        graph.launch(blocking)
        blocking.synchronize()

    caller_stream = torch.cuda.Stream()
    torch.cuda.set_stream(caller_stream)
    per_call("run, views, cuda_graphs (buffers reused), the caller's non-blocking stream",
             lambda: graphs.run([x], copy=False), reset, read)
    torch.cuda.set_stream(torch.cuda.default_stream())
    per_call("bare cudaGraphLaunch + sync (cupy)", bare_graph, reset, read)
    per_call("bare cudaGraphLaunch + sync (cupy), blocking stream", bare_graph_blocking, reset, read)
    per_call("bare kernel launch + sync (cupy)", bare_launch, reset, read)

    program = args.programs / "add_one_256_resident.pte"
    graphed = tte.load(program, options={"cuda_graphs": True})
    plain = tte.load(program)
    xs = [torch.full((256,), float(i), device="cuda") for i in range(1000)]

    def fresh(p):
        step = iter(range(1 << 62))
        return lambda: p.forward(xs[next(step) % len(xs)])

    per_call("forward, a fresh input and output each call, cuda_graphs", fresh(graphed), reset, read, 1000)
    per_call("forward, a fresh input and output each call", fresh(plain), reset, read, 1000)

    if args.load_memory_program is not None:
        large = args.load_memory_program
        warm = large.with_name(large.stem + "-warm.pte")
        host_input = np.ones((2, 4), np.float32)
        for provider in ("test-cuda", "test-host"):
            for path in (warm, large, warm, large, large):
                with open(path, "rb") as f:  # the page cache, as for the load below
                    f.read()
                start = time.perf_counter()
                with open(path, "rb") as f:
                    data = f.read()
                del data
                read_s = time.perf_counter() - start
                reset()
                start = time.perf_counter()
                loaded = tte.load(path, options={"provider": provider})
                load_s = time.perf_counter() - start
                loaded.forward(host_input)
                first_s = time.perf_counter() - start - load_s
                parts = ", ".join(f"{function} {count}x {ns / 1e6:.2f} ms" for function, (count, ns)
                                  in sorted(read().items(), key=lambda kv: -kv[1][1])[:8])
                print(f"load, {provider}, {path.name}: read once {1e3 * read_s:.2f} ms, tte.load "
                      f"{1e3 * load_s:.2f} ms, first forward {1e3 * first_s:.2f} ms | {parts}", flush=True)
                del loaded
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
