"""load / run / forward / metadata through the host test provider."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")


class DLPackOnly:
    """A tensor that speaks only DLPack (like a library the package has never heard of)."""

    def __init__(self, array: np.ndarray):
        self._array = array

    def __dlpack__(self, **kwargs):
        return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()


def test_method_names_and_metadata(tte, host_provider, programs):
    program = tte.load(programs["two_methods"])
    assert set(program.method_names) == {"forward", "double_input"}
    forward = program.method("forward")
    assert [v.kind for v in forward.inputs] == ["tensor"]
    assert forward.inputs[0].dtype == "float32"
    assert forward.inputs[0].shape == (2, 3)
    assert forward.inputs[0].device in ("cpu", None)
    assert forward.outputs[0].dtype == "float32"
    other = program.method("double_input")
    assert other.inputs[0].dtype == "float16" and other.inputs[0].shape == (3,)
    assert "TensorRTBackend" in forward.backends


def test_forward_torch_in_torch_out(tte, host_provider, programs):
    program = tte.load(programs["add_one"])
    x = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    (y,) = program.forward(x)
    assert isinstance(y, torch.Tensor)
    assert torch.equal(y, x + 1)
    assert y.data_ptr() != x.data_ptr()


def test_run_numpy_in_numpy_out(tte, host_provider, programs):
    program = tte.load(programs["add"])
    a = np.array([1, 2, 3, 4], dtype=np.int32)
    b = np.array([10, 20, 30, 40], dtype=np.int32)
    (y,) = program.run([a, b])
    assert isinstance(y, np.ndarray)
    assert y.dtype == np.int32
    np.testing.assert_array_equal(y, a + b)


def test_dlpack_only_inputs(tte, host_provider, programs):
    program = tte.load(programs["add_one"])
    x = np.full((2, 3), 4.0, dtype=np.float32)
    (y,) = program.run([DLPackOnly(x)])
    # A producer whose library has no from_dlpack gets numpy for host results.
    assert isinstance(y, np.ndarray)
    np.testing.assert_array_equal(y, x + 1)


def test_requires_grad_and_noncontiguous_view_inputs(tte, host_provider, programs):
    program = tte.load(programs["add_one"])
    x = torch.ones(2, 3, requires_grad=True)
    (y,) = program.forward(x)
    assert torch.equal(y, torch.full((2, 3), 2.0))
    base = torch.arange(12, dtype=torch.float32).reshape(2, 6)
    view = base[:, ::2]
    assert not view.is_contiguous()
    try:
        (y,) = program.forward(view)
    except tte.errors.InvalidArgumentError as exc:
        assert "contiguous" in str(exc) or "stride" in str(exc) or "dim order" in str(exc)
    else:
        assert torch.equal(y, view + 1)


def test_dynamic_shapes_resize_outputs(tte, host_provider, programs):
    program = tte.load(programs["dynamic"])
    assert program.method().inputs[0].shape == (8, 4)
    for rows in (1, 2, 5, 8):
        x = torch.randn(rows, 4)
        (y,) = program.forward(x)
        assert y.shape == (rows, 4)
        assert torch.allclose(y, x + 1)


def test_copy_false_returns_views_valid_until_next_run(tte, host_provider, programs):
    program = tte.load(programs["add_one"])
    x = torch.zeros(2, 3)
    (first,) = program.run([x], copy=False)
    assert torch.equal(first, torch.ones(2, 3))
    (owned,) = program.run([x + 5])
    assert torch.equal(owned, torch.full((2, 3), 6.0))
    (second,) = program.run([x + 1], copy=False)
    assert torch.equal(second, torch.full((2, 3), 2.0))
    # An owned copy does not change when the program runs again.
    assert torch.equal(owned, torch.full((2, 3), 6.0))


def test_outputs_are_owned_copies(tte, host_provider, programs):
    program = tte.load(programs["add_one"])
    (a,) = program.forward(torch.zeros(2, 3))
    (b,) = program.forward(torch.ones(2, 3))
    assert torch.equal(a, torch.ones(2, 3))
    assert torch.equal(b, torch.full((2, 3), 2.0))
    a += 1  # writable
    assert torch.equal(a, torch.full((2, 3), 2.0))


def test_second_method(tte, host_provider, programs):
    program = tte.load(programs["two_methods"])
    p = torch.tensor([1.5, -2.0, 3.25], dtype=torch.float16)
    (q,) = program.run([p], "double_input")
    assert q.dtype == torch.float16
    assert torch.equal(q, p)


def test_delegates(tte, host_provider, programs):
    program = tte.load(programs["add_one"])
    program.load_method()  # the provider is known once the method is loaded
    (delegate,) = program.delegates
    assert delegate.method == "forward"
    assert delegate.provider == host_provider
    assert delegate.backend == "TensorRTBackend"
    names = [(b["name"], b["is_input"]) for b in delegate.bindings]
    assert names == [("x", True), ("y", False)]
    assert delegate.engine_size > 16
    assert delegate.device_id == 0
    assert delegate.hardware_compatible is False
    assert delegate.target_platform


def test_delegates_are_described_without_initializing_them(tte, tmp_path):
    # An engine no provider here can deserialize (and no GPU to run one):
    # loading the method fails, describing its delegates does not.
    from torch_tensorrt_executorch_runtime.pack import EngineSpec, TensorSpec, pack_program

    path = tmp_path / "opaque.pte"
    spec = EngineSpec(b"not an engine any provider here accepts", [TensorSpec("x", "float32", (2, 3))],
                      [TensorSpec("y", "float32", (2, 3))], weight_streaming_budget=1024)
    pack_program(path, [spec])
    for source in (path, path.read_bytes()):
        program = tte.load(source)
        (delegate,) = program.delegates
        assert delegate.method == "forward" and delegate.backend == "TensorRTBackend"
        assert delegate.provider == "" and delegate.error is None
        assert [(b["name"], b["is_input"]) for b in delegate.bindings] == [("x", True), ("y", False)]
        # The packed blob records no dtypes or shapes: said as None, not as an empty dtype and shape.
        assert [(b["dtype"], b["shape"]) for b in delegate.bindings] == [(None, None), (None, None)]
        assert delegate.engine_size == len(b"not an engine any provider here accepts")
        assert delegate.compile_specs == {"weight_streaming_budget": "1024"}
        with pytest.raises(tte.errors.Error):
            program.load_method()
        (failed,) = program.delegates  # a loaded method adds what loading found
        assert failed.error
        program.close()


def test_mixed_tensorrt_and_xnnpack_program(tte, host_provider, programs):
    program = tte.load(programs["mixed"])
    assert "XnnpackBackend" in program.method().backends
    x = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    (y,) = program.forward(x)
    assert torch.allclose(y, (x + 1) * 2.0)


def test_external_constants_found_beside_the_pte(tte, host_provider, programs):
    pte = programs["external"]
    assert (pte.parent / "external.ptd").exists()
    program = tte.load(pte)
    assert [p.name for p in program.data_paths] == ["external.ptd"]
    x = torch.ones(2, 3)
    (y,) = program.forward(x)
    assert torch.allclose(y, (x + 1) * 3.0)


def test_explicit_data_path(tte, host_provider, programs):
    pte = programs["external"]
    program = tte.load(pte, data_path=pte.parent / "external.ptd")
    (y,) = program.forward(torch.zeros(2, 3))
    assert torch.allclose(y, torch.full((2, 3), 3.0))


def test_load_from_bytes(tte, host_provider, programs):
    program = tte.load(programs["add_one"].read_bytes())
    (y,) = program.forward(torch.zeros(2, 3))
    assert torch.equal(y, torch.ones(2, 3))


def test_provider_load_option(tte, host_provider, programs):
    program = tte.load(programs["add_one"], options={"provider": host_provider})
    program.load_method()
    (delegate,) = program.delegates
    assert delegate.provider == host_provider


def test_device_resident_metadata(tte, host_provider, programs):
    program = tte.load(programs["resident"])
    info = program.method()
    assert info.inputs[0].device == "cuda:0"
    assert info.inputs[0].memory_planned is False


def test_close_and_context_manager(tte, host_provider, programs):
    with tte.load(programs["add_one"]) as program:
        program.forward(torch.zeros(2, 3))
    assert program.closed
    with pytest.raises(tte.errors.InvalidStateError, match="closed"):
        program.forward(torch.zeros(2, 3))


def test_etdump(tte, host_provider, programs, tmp_path):
    program = tte.load(programs["add_one"], enable_etdump=True)
    program.forward(torch.zeros(2, 3))
    target = tmp_path / "run.etdp"
    program.write_etdump(target)
    assert target.stat().st_size > 0


def test_runtime_load_is_the_same_program(tte, host_provider, programs):
    from torch_tensorrt_executorch_runtime import runtime

    program = runtime.load(str(programs["add_one"]))
    assert isinstance(program, tte.Program)
    assert "forward" in program.method_names
    (y,) = program.forward(torch.zeros(2, 3))
    assert torch.equal(y, torch.ones(2, 3))


def test_concurrent_runs_of_one_program_overlap(tte, host_provider, tmp_path):
    # Each run holds the host engine 20 ms: four threads on one program
    # borrow instances of the method (max_concurrent_runs), whose delegates
    # share the deserialized engine; results stay per thread.
    import threading

    from torch_tensorrt_executorch_runtime.pack import TensorSpec, pack_program
    from torch_tensorrt_executorch_runtime.testing import test_engine_spec

    path = tmp_path / "spin.pte"
    spec = test_engine_spec("add_one", [TensorSpec("x", "float32", (2, 4))], [TensorSpec("y", "float32", (2, 4))],
                            spin_us=20000)
    pack_program(path, [spec])
    program = tte.load(path, options={"max_concurrent_runs": 4})
    program.forward(np.zeros((2, 4), np.float32))
    results, errors = {}, []
    barrier = threading.Barrier(4)

    def work(t):
        try:
            barrier.wait()
            for i in range(3):
                x = np.full((2, 4), 100.0 * t + i, np.float32)
                (y,) = program.run([x])
                results[(t, i)] = np.asarray(y).copy()
        except Exception as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    for (t, i), y in results.items():
        assert (y == 100.0 * t + i + 1).all()
    stats = tte.runtime_stats()
    assert stats["shared_engine_reuses"] >= 1, "extra instances share the engine"
    program.close()


def _wait_until_settled(*paths) -> None:
    """Until every file last changed more than 2 s ago: only then is a file keyed by its identity."""
    import time

    changed = max(p.stat().st_ctime for p in paths)
    while time.time() <= changed + 2.05:
        time.sleep(0.05)


def test_loads_of_one_file_share_the_engine_without_hashing_it(tte, host_provider, programs, tmp_path):
    """A plan read from a file is keyed by the file's identity and offset, not by a digest of its bytes."""
    import shutil

    path = tmp_path / "add_one.pte"
    shutil.copyfile(programs["add_one"], path)
    other = tmp_path / "copy.pte"
    shutil.copyfile(path, other)
    _wait_until_settled(path, other)
    x = np.full((2, 3), 1.0, np.float32)
    tte.reset_runtime_stats()
    first = tte.load(path, options={"provider": host_provider})
    second = tte.load(path, options={"provider": host_provider})
    for program in (first, second):
        (y,) = program.run([x])
        assert (np.asarray(y) == 2.0).all()
    stats = tte.runtime_stats()
    assert stats["shared_engine_reuses"] == 1, stats
    assert stats["plan_digests"] == 0 and stats["plan_digest_bytes"] == 0, stats

    # The same bytes in another file are another file: a new engine (still no hashing).
    third = tte.load(other, options={"provider": host_provider})
    third.run([x])
    stats = tte.runtime_stats()
    assert stats["shared_engine_reuses"] == 1 and stats["plan_digests"] == 0, stats

    # A program opened from bytes is keyed by a SHA-256 of its plan.
    from_bytes = tte.load(path.read_bytes(), options={"provider": host_provider})
    from_bytes.run([x])
    again = tte.load(path.read_bytes(), options={"provider": host_provider})
    again.run([x])
    stats = tte.runtime_stats()
    (delegate,) = from_bytes.delegates
    assert stats["plan_digests"] == 2, stats
    assert stats["plan_digest_bytes"] == 2 * delegate.engine_size, stats
    assert stats["shared_engine_reuses"] == 2, "the second buffer load shares the first's engine"
    for program in (first, second, third, from_bytes, again):
        program.close()


def _same_size_programs(folder):
    """Two add_one programs of the same file size whose plans differ ([2, 3] and [3, 2] inputs)."""
    from torch_tensorrt_executorch_runtime.pack import TensorSpec, pack_program
    from torch_tensorrt_executorch_runtime.testing import test_engine_spec

    def add_one(rows, cols):
        spec = test_engine_spec("add_one", [TensorSpec("x", "float32", [rows, cols])],
                                [TensorSpec("y", "float32", ["x:0", "x:1"])])
        out = folder / f"add_one_{rows}x{cols}.pte"
        pack_program(out, [spec])
        return out.read_bytes()

    old, new = add_one(2, 3), add_one(3, 2)
    assert len(old) == len(new) and old != new
    return old, new


def test_a_file_rewritten_in_place_is_a_new_plan(tte, host_provider, tmp_path):
    """Same path, inode, size and modification time, other contents: never the old engine."""
    import os

    old, new = _same_size_programs(tmp_path)
    path = tmp_path / "p.pte"
    path.write_bytes(old)
    _wait_until_settled(path)
    first = tte.load(path, options={"provider": host_provider})
    (y,) = first.run([np.ones((2, 3), np.float32)])
    stat = path.stat()
    with open(path, "r+b") as f:
        f.write(new)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert path.stat().st_mtime_ns == stat.st_mtime_ns and path.stat().st_ino == stat.st_ino
    tte.reset_runtime_stats()
    # Just rewritten: not settled, so named by a digest of its plan.
    second = tte.load(path, options={"provider": host_provider})
    (y,) = second.run([np.ones((3, 2), np.float32)])
    assert np.asarray(y).shape == (3, 2) and (np.asarray(y) == 2.0).all()
    stats = tte.runtime_stats()
    assert stats["plan_digests"] == 1 and stats["shared_engine_reuses"] == 0, stats
    # Settled: named by its identity, whose change time differs from the first load's.
    _wait_until_settled(path)
    tte.reset_runtime_stats()
    third = tte.load(path, options={"provider": host_provider})
    (y,) = third.run([np.ones((3, 2), np.float32)])
    assert np.asarray(y).shape == (3, 2) and (np.asarray(y) == 2.0).all()
    stats = tte.runtime_stats()
    assert stats["plan_digests"] == 0 and stats["shared_engine_reuses"] == 0, stats
    third.close()
    first.close()
    second.close()


def test_a_method_loaded_after_an_in_place_rewrite_does_not_take_the_old_engine(tte, host_provider, tmp_path):
    """Opened while settled, rewritten before its method loads (size and mtime kept): the segment read
    then is the new file's, so it is hashed, never keyed by the identity the program was opened with."""
    import os

    old, new = _same_size_programs(tmp_path)
    path = tmp_path / "p.pte"
    path.write_bytes(old)
    _wait_until_settled(path)
    first = tte.load(path, options={"provider": host_provider})
    first.run([np.ones((2, 3), np.float32)])  # the old file's engine, keyed by its identity
    second = tte.load(path, options={"provider": host_provider})  # opened, its method not loaded yet
    stat = path.stat()
    with open(path, "r+b") as f:
        f.write(new)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    tte.reset_runtime_stats()
    try:
        second.run([np.ones((2, 3), np.float32)])
    except Exception:  # the new plan does not fit the method the old file declared: an error is right
        pass
    stats = tte.runtime_stats()
    assert stats["shared_engine_reuses"] == 0, "the old file's engine was reused for the new bytes"
    assert stats["plan_digests"] == 1, stats
    first.close()
    second.close()
