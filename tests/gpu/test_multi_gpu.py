"""Delegates run on the GPU their blob's device_id names (needs two GPUs)."""

from __future__ import annotations

import threading

import pytest
import torch

import torch_tensorrt_executorch_runtime as tte

N = 1 << 20

two_gpus = pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two CUDA devices")


@two_gpus
def test_delegate_runs_on_device_one_and_restores_current_device(cuda_provider, programs):
    torch.cuda.set_device(0)
    program = tte.load(programs / "add_one_dev1_resident.pte")
    x = torch.arange(N, dtype=torch.float32, device="cuda:1")
    (y,) = program.forward(x)
    assert y.device == torch.device("cuda:1")
    assert torch.equal(y, x + 1)
    assert torch.cuda.current_device() == 0


@two_gpus
def test_two_programs_on_two_gpus_from_two_threads(cuda_provider, programs):
    progs = [tte.load(programs / "add_one_device_resident.pte"), tte.load(programs / "add_one_dev1_resident.pte")]
    xs = [torch.arange(N, dtype=torch.float32, device=f"cuda:{i}") + i for i in range(2)]
    out = [None, None]

    def work(i):
        with torch.cuda.device(i):
            for _ in range(5):
                out[i] = progs[i].forward(xs[i])[0]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    for i in range(2):
        assert torch.equal(out[i], xs[i] + 1)


@two_gpus
def test_method_with_delegates_on_both_devices(cuda_provider, programs):
    program = tte.load(programs / "two_devices_host.pte")
    x = torch.arange(N, dtype=torch.float32)
    (y,) = program.forward(x)
    assert torch.equal(y.cpu(), x + 2)


def test_device_id_past_the_device_count_is_a_clear_error(cuda_provider, programs, tmp_path):
    if torch.cuda.device_count() > 9:
        pytest.skip("this check packs device_id 9")
    program = tte.load(programs / "add_one_dev9_resident.pte")
    with pytest.raises(Exception, match=r"device.*9"):
        program.forward(torch.zeros(N, device="cuda"))
    # The process stays usable.
    ok = tte.load(programs / "add_one_device_resident.pte")
    x = torch.zeros(N, device="cuda")
    assert torch.equal(ok.forward(x)[0], x + 1)
