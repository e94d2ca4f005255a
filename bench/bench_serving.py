"""Serving benchmark: the add_one program through Triton against the same
program called in-process.

One process packs add_one (x + 1 on 256 float32, one TensorRTBackend
delegate run by a test provider), writes a Triton repository for it
(`triton-repo`), starts tritonserver from the nvidia-pytriton wheel on
loopback ports, and runs closed-loop clients (tritonclient, gRPC by default)
at concurrency 1, 2 and 4; the same number of threads then call
`Program.run` in-process. Requests per second and p50/p99 latency of both are
printed, with the serving path as ratios against in-process (its overhead).
Never asserts.

  python bench/bench_serving.py --provider-library build/wheel/cpp/libtte_test_provider_host.so
  python bench/bench_serving.py --provider test-cuda --placement device_resident \\
      --provider-library PROVIDERS/libtte_test_provider_cuda.so          # on a GPU machine
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from pathlib import Path

from _timing import report

ELEMENTS = 256
CONCURRENCY = (1, 2, 4)


def pack_add_one(folder: Path, placement: str) -> Path:
    from torch_tensorrt_executorch_runtime.pack import TensorSpec, pack_program
    from torch_tensorrt_executorch_runtime.testing import test_engine_spec

    path = folder / "add_one_256.pte"
    spec = test_engine_spec("add_one", [TensorSpec("x", "float32", [ELEMENTS])], [TensorSpec("y", "float32", ["x:0"])])
    pack_program(path, [spec], placement=placement)
    return path


def closed_loop(make_call, threads: int, requests: int) -> dict:
    """`threads` workers, each with its own call (make_call()), `requests` timed calls in all."""
    from torch_tensorrt_executorch_runtime.cli.run import latency_summary

    per_thread = max(1, requests // threads)
    latencies: list[list[float]] = [[] for _ in range(threads)]
    calls = [make_call() for _ in range(threads)]
    for call in calls:  # warm up every worker's connection and the server's instances
        for _ in range(20):
            call()
    start_line = threading.Barrier(threads + 1)

    def worker(i: int) -> None:
        call, out = calls[i], latencies[i]
        start_line.wait()
        for _ in range(per_thread):
            t0 = time.perf_counter()
            call()
            out.append(time.perf_counter() - t0)

    workers = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
    for w in workers:
        w.start()
    start_line.wait()
    t0 = time.perf_counter()
    for w in workers:
        w.join()
    wall = time.perf_counter() - t0
    summary = latency_summary([t for out in latencies for t in out])
    return {"requests_per_s": threads * per_thread / wall, "p50_ms": summary["p50_ms"], "p99_ms": summary["p99_ms"]}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--provider-library", type=Path, required=True, help="the test provider library")
    ap.add_argument("--provider", default="test-host")
    ap.add_argument("--placement", default="host", help="packer placement: host, device_resident, ...")
    ap.add_argument("--protocol", choices=("grpc", "http"), default="grpc")
    ap.add_argument("--requests", type=int, default=2000, help="timed requests per concurrency level and path")
    ap.add_argument("--instances", type=int, default=2, help="Triton model instances")
    ap.add_argument("--program", type=Path,
                    help="the add_one program of 256 float32 to serve, packed beforehand (gpu-bundle.sh does: the "
                    "GPU machine has no exir); packed here when not given")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()

    import numpy

    import torch_tensorrt_executorch_runtime as tte
    from torch_tensorrt_executorch_runtime.serving.server_process import start_tritonserver
    from torch_tensorrt_executorch_runtime.serving.triton_repository import write_triton_repository

    folder = Path(tempfile.mkdtemp(prefix="bench-serving-"))
    program_path = args.program or pack_add_one(folder, args.placement)
    write_triton_repository(
        program_path,
        folder / "repository",
        "add_one",
        instances=args.instances,
        provider=args.provider,
        provider_libraries=[args.provider_library],
    )
    x = numpy.arange(ELEMENTS, dtype=numpy.float32)
    program = tte.load(program_path, options={"provider": args.provider})
    # Host inputs on both paths; a device-resident program answers numpy inputs with cupy arrays.
    (y,) = program.run([x])
    if not numpy.array_equal(y.get() if hasattr(y, "get") else numpy.asarray(y), x + 1):
        sys.exit("add_one gave a wrong answer in-process")

    if args.protocol == "grpc":
        import tritonclient.grpc as client_module
    else:
        import tritonclient.http as client_module

    results: dict = {"protocol": args.protocol, "provider": args.provider, "placement": args.placement, "levels": {}}
    with start_tritonserver(folder / "repository", folder, ["add_one"]) as server:
        port = server.ports[args.protocol]
        clients = []

        def served_call():
            client = client_module.InferenceServerClient(f"127.0.0.1:{port}")
            clients.append(client)
            tensor = client_module.InferInput("x", [ELEMENTS], "FP32")
            tensor.set_data_from_numpy(x)

            def call():
                return client.infer("add_one", [tensor]).as_numpy("y")

            if not numpy.array_equal(call(), x + 1):
                sys.exit("add_one gave a wrong answer through Triton")
            return call

        def in_process_call():
            return lambda: program.run([x])

        for threads in CONCURRENCY:
            served = closed_loop(served_call, threads, args.requests)
            local = closed_loop(in_process_call, threads, args.requests)
            results["levels"][threads] = {
                "triton": served,
                "in_process": local,
                "throughput_ratio": served["requests_per_s"] / local["requests_per_s"],
                "p50_ratio": served["p50_ms"] / local["p50_ms"],
                "p99_ratio": served["p99_ms"] / local["p99_ms"],
            }
        for client in clients:
            client.close()
    program.close()

    table = [
        f"add_one ({ELEMENTS} float32), {args.provider}, Triton over {args.protocol} vs Program.run in-process",
        f"{'conc':>4} {'triton req/s':>13} {'p50 ms':>8} {'p99 ms':>8} | {'local req/s':>12} {'p50 ms':>8} "
        f"{'p99 ms':>8} | {'req/s ratio':>11} {'p50 ratio':>9} {'p99 ratio':>9}",
    ]
    for threads, level in results["levels"].items():
        s, loc = level["triton"], level["in_process"]
        table.append(f"{threads:>4} {s['requests_per_s']:>13.0f} {s['p50_ms']:>8.3f} {s['p99_ms']:>8.3f} | "
                     f"{loc['requests_per_s']:>12.0f} {loc['p50_ms']:>8.3f} {loc['p99_ms']:>8.3f} | "
                     f"{level['throughput_ratio']:>11.3f} {level['p50_ratio']:>9.1f} {level['p99_ratio']:>9.1f}")
    report(results, table, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
