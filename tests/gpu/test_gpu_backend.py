"""The backend and the Python API on a real GPU, through the CUDA test provider
(no TensorRT engine can run on the GPU machine; the provider's "engine" is real
CUDA work on the stream it is given)."""

from __future__ import annotations

import ctypes
import threading

import torch

import torch_tensorrt_executorch_runtime as tte
from torch_tensorrt_executorch_runtime import reset_runtime_stats, runtime_stats

N = 1 << 20


def x_cuda(n=N):
    return torch.arange(n, dtype=torch.float32, device="cuda")


def test_device_resident_io_is_bound_without_host_copies(cuda_provider, programs):
    program = tte.load(programs / "add_one_device_resident.pte")
    x = x_cuda()
    program.forward(x)  # first run initializes the delegate
    reset_runtime_stats()
    (y,) = program.forward(x)
    stats = runtime_stats()
    assert y.is_cuda and y.device == x.device
    assert torch.equal(y, x + 1)
    assert (stats["h2d_copies"], stats["d2h_copies"]) == (0, 0), "device-resident I/O must not touch host memory"


def test_host_io_is_staged_and_correct(cuda_provider, programs):
    program = tte.load(programs / "add_one_host.pte")
    x = torch.arange(N, dtype=torch.float32)
    program.forward(x)
    reset_runtime_stats()
    (y,) = program.forward(x)
    stats = runtime_stats()
    assert y.device.type == "cpu"
    assert torch.equal(y, x + 1)
    assert stats["h2d_copies"] >= 1 and stats["d2h_copies"] >= 1
    assert stats["h2d_bytes"] >= 4 * N and stats["d2h_bytes"] >= 4 * N


def test_cuda_input_to_host_program(cuda_provider, programs):
    program = tte.load(programs / "add_one_host.pte")
    x = x_cuda()
    (y,) = program.forward(x)
    assert torch.equal(y.cpu(), (x + 1).cpu())


def test_device_planned_program_uses_cuda_arenas(cuda_provider, programs):
    program = tte.load(programs / "add_one_device_planned.pte")
    x = torch.arange(N, dtype=torch.float32)
    program.forward(x)
    reset_runtime_stats()
    (y,) = program.forward(x)
    assert torch.equal(y.cpu(), x + 1)
    # The et_copy kernels move data through the registered allocator; the
    # delegate itself sees device pointers and stages nothing.
    stats = runtime_stats()
    assert (stats["h2d_copies"], stats["d2h_copies"]) == (0, 0)


def test_aliased_kv_cache_is_updated_in_place_across_calls(cuda_provider, programs):
    program = tte.load(programs / "kv_update_resident.pte")
    cache = torch.zeros(1024, device="cuda")
    x = torch.ones(1024, device="cuda")
    for step in (1, 2, 3):
        outs = program.forward(cache, x)
        assert torch.all(cache == step), f"caller's cache not updated in place at step {step}"
        assert torch.equal(outs[-1], cache)


def test_caller_stream_is_honoured(cuda_provider, programs, provider_stats):
    program = tte.load(programs / "add_one_device_resident.pte")
    x = x_cuda()
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        (y,) = program.forward(x)
    assert provider_stats(cuda_provider).last_stream == stream.cuda_stream
    other = torch.cuda.Stream()
    (y2,) = program.run([x], stream=other)
    assert provider_stats(cuda_provider).last_stream == other.cuda_stream
    assert torch.equal(y, y2)


def test_per_thread_default_stream_is_never_given_to_the_engine(cuda_provider, programs, provider_stats):
    # cudaStreamPerThread (handle 2) is a default stream: the engine gets a real
    # stream, ordered after the caller's per-thread work (an input written there
    # by a kernel that spins first is read complete).
    per_thread = 2
    program = tte.load(programs / "add_one_device_resident.pte")
    spin = tte.load(programs / "spin_resident.pte")
    x = x_cuda()
    for _ in range(3):
        (h,) = spin.run([x], stream=per_thread)
        assert provider_stats(cuda_provider).last_stream not in (None, 0, 1, per_thread)
        (y,) = program.run([h], stream=per_thread)
        assert provider_stats(cuda_provider).last_stream not in (None, 0, 1, per_thread)
        assert torch.equal(y, x + 2)


def test_work_is_finished_on_return(cuda_provider, programs):
    # The engine spins 20 ms before writing; reading on an unrelated stream
    # right after the call sees the result only if execute synchronized.
    program = tte.load(programs / "spin_resident.pte")
    x = x_cuda()
    side = torch.cuda.Stream()
    for _ in range(3):
        (y,) = program.forward(x)
        with torch.cuda.stream(side):
            host = y.to("cpu", non_blocking=False)
        assert torch.equal(host, (x + 1).cpu())


def test_two_threads_on_two_programs(cuda_provider, programs):
    progs = [tte.load(programs / "spin_resident.pte") for _ in range(2)]
    xs = [x_cuda() + i for i in range(2)]
    results = [None, None]
    errors = []

    def work(i):
        try:
            with torch.cuda.stream(torch.cuda.Stream()):
                for _ in range(3):
                    results[i] = progs[i].forward(xs[i])[0]
        except Exception as e:  # surfaced below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for i in range(2):
        assert torch.equal(results[i], xs[i] + 1)


def test_output_resizes_across_shapes_and_profiles(cuda_provider, programs):
    program = tte.load(programs / "add_one_profiles_resident.pte")
    for rows in (2, 9, 16, 1, 5, 4):
        x = torch.randn(rows, 8, device="cuda")
        (y,) = program.forward(x)
        assert y.shape == (rows, 8)
        assert torch.allclose(y, x + 1)


def test_output_resize_with_host_staging(cuda_provider, programs):
    program = tte.load(programs / "add_one_profiles_host.pte")
    for rows in (3, 12, 1):
        x = torch.randn(rows, 8)
        (y,) = program.forward(x)
        assert y.shape == (rows, 8)
        assert torch.allclose(y, x + 1)


def test_cuda_graph_replay_matches_and_recaptures_on_new_shapes(cuda_provider, programs):
    plain = tte.load(programs / "add_one_profiles_resident.pte")
    graphed = tte.load(programs / "add_one_profiles_resident.pte", options={"cuda_graphs": True})
    x = torch.randn(3, 8, device="cuda")
    # A shape runs plainly the first time, plainly and then captured the
    # second (trtexec's order), and replays from the third.
    graphed.forward(x)
    graphed.forward(x)
    reset_runtime_stats()
    for _ in range(3):
        assert torch.equal(graphed.forward(x)[0], plain.forward(x)[0])
    s = runtime_stats()
    assert s["graph_replays"] >= 3
    x2 = torch.randn(11, 8, device="cuda")
    for _ in range(3):
        assert torch.equal(graphed.forward(x2)[0], plain.forward(x2)[0])
    assert runtime_stats()["graph_captures"] >= 1


def test_cuda_graphs_replay_for_fresh_tensors_every_step(cuda_provider, programs):
    # The usual loop: a new input tensor each step (all kept alive, so no
    # allocator can hand an address back) and a new output each step.
    program = tte.load(programs / "add_one_256_resident.pte", options={"cuda_graphs": True})
    xs = [torch.full((256,), float(i), device="cuda") for i in range(50)]
    reset_runtime_stats()
    outputs = [program.forward(x)[0] for x in xs]
    for x, y in zip(xs, outputs, strict=True):
        assert torch.equal(y, x + 1)
    s = runtime_stats()
    assert len({y.data_ptr() for y in outputs}) == len(outputs), "outputs were not fresh"
    # Plain first, plain + capture second, then every step captures again at
    # its addresses, updates the one graph in place and replays it: no copies.
    assert s["graph_captures"] == 1
    assert s["graph_updates"] == len(xs) - 2
    assert s["graph_replays"] == len(xs) - 2
    assert s["enqueues"] == 2
    assert s["graph_io_copies"] + s["d2d_copies"] + s["h2d_copies"] + s["d2h_copies"] == 0


def test_a_run_on_the_same_tensors_repeats_the_last_graph_launch(cuda_provider, programs):
    # A caller that reuses its buffers: once a run ended with a graph launch,
    # a run on the same device tensors launches that graph again without
    # executing the method (program/repeated_run.h). The graph reads what the
    # memory holds now.
    program = tte.load(programs / "add_one_256_resident.pte", options={"cuda_graphs": True})
    x = torch.zeros(256, device="cuda")
    for _ in range(3):  # plain, plain + capture, replay
        program.run([x], copy=False)
    reset_runtime_stats()
    for step in range(5):
        x.fill_(float(step))
        (y,) = program.run([x], copy=False)
        assert torch.equal(y, torch.full((256,), float(step + 1), device="cuda"))
    s = runtime_stats()
    assert s["run_repeats"] == 5 and s["graph_replays"] == 5
    assert s["enqueues"] == 0 and s["graph_updates"] == 0 and s["graph_captures"] == 0

    # Anything else runs the method: owned outputs (new memory each run),
    # another tensor, the same tensor on another stream.
    reset_runtime_stats()
    assert torch.equal(program.forward(x)[0], x + 1)
    x2 = torch.full((256,), 7.0, device="cuda")
    assert torch.equal(program.run([x2], copy=False)[0], x2 + 1)
    torch.cuda.synchronize()
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        (y,) = program.run([x], copy=False)
        assert torch.equal(y, x + 1)
    assert runtime_stats()["run_repeats"] == 0
    # Back on x on torch's stream: the full run that the stream change
    # caused makes the record again, and the next run repeats it.
    torch.cuda.synchronize()
    x.fill_(40.0)
    assert torch.equal(program.run([x], copy=False)[0], x + 1)
    x.fill_(41.0)
    assert torch.equal(program.run([x], copy=False)[0], x + 1)
    assert runtime_stats()["run_repeats"] == 1


def test_a_repeated_in_place_update_lands_each_time(cuda_provider, programs):
    # The kv_update engine writes its output into its cache input: each
    # repeated launch adds x to the cache again, as a method run would.
    program = tte.load(programs / "kv_update_resident.pte", options={"cuda_graphs": True})
    cache = torch.zeros(1024, device="cuda")
    x = torch.ones(1024, device="cuda")
    reset_runtime_stats()
    for step in range(6):
        program.run([cache, x], copy=False)
        assert torch.equal(cache, torch.full((1024,), float(step + 1), device="cuda"))
    assert runtime_stats()["run_repeats"] == 3


def test_an_etdump_program_never_repeats_a_run(cuda_provider, programs):
    program = tte.load(programs / "add_one_256_resident.pte", options={"cuda_graphs": True},
                       enable_etdump=True)
    x = torch.zeros(256, device="cuda")
    reset_runtime_stats()
    for _ in range(5):
        assert torch.equal(program.run([x], copy=False)[0], x + 1)
    s = runtime_stats()
    assert s["run_repeats"] == 0 and s["graph_replays"] == 3


def test_cuda_graphs_update_an_in_place_cache_where_it_is(cuda_provider, programs):
    # Aliased (in-place) memory: with a new cache tensor each step the graph is
    # updated to it, and the update lands in the caller's tensor.
    program = tte.load(programs / "kv_update_resident.pte", options={"cuda_graphs": True})
    x = torch.ones(1024, device="cuda")
    reset_runtime_stats()
    for step in range(6):
        cache = torch.full((1024,), float(step), device="cuda")
        program.forward(cache, x)
        assert torch.equal(cache, torch.full((1024,), float(step + 1), device="cuda"))
    s = runtime_stats()
    # (d2d_copies counts forward's copy of the output into the caller's tensor, one per step.)
    assert s["graph_updates"] == 4 and s["graph_io_copies"] == 0


def test_uncapturable_provider_falls_back(cuda_provider, programs):
    cuda_provider.tte_test_cuda_provider_uncapturable.restype = ctypes.c_void_p
    if "test-cuda-nocapture" not in set(tte.providers.providers()):
        from torch_tensorrt_executorch_runtime import _native

        plugin = ctypes.CDLL(str(_native.plugin_path()))

        class Error(ctypes.Structure):
            _fields_ = [("code", ctypes.c_int32), ("message", ctypes.c_char * 1024)]

        error = Error()
        status = plugin.tte_register_engine_provider(
            ctypes.c_void_p(cuda_provider.tte_test_cuda_provider_uncapturable()), 2, ctypes.byref(error))
        assert status == 0, error.message
    program = tte.load(programs / "add_one_device_resident.pte",
                       options={"cuda_graphs": True, "provider": "test-cuda-nocapture"})
    x = x_cuda()
    reset_runtime_stats()
    for _ in range(2):
        (y,) = program.forward(x)
        assert torch.equal(y, x + 1)
    s = runtime_stats()
    assert s["graph_captures"] == 0 and s["graph_replays"] == 0
