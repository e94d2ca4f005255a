"""A real tritonserver serving a repository written by `triton-repo`, with
tritonclient over HTTP and gRPC: right answers, bad requests answered while
the model keeps serving, two instances, concurrent clients, dynamic
batching, and unload/reload cycles without the stub's memory growing."""

from __future__ import annotations

import concurrent.futures
import json
import time

import numpy as np
import pytest

httpclient = pytest.importorskip("tritonclient.http", reason="tritonclient[http] is not installed (scripts/setup.sh)")
grpcclient = pytest.importorskip("tritonclient.grpc", reason="tritonclient[grpc] is not installed (scripts/setup.sh)")
from tritonclient.utils import InferenceServerException  # noqa: E402

CLIENT_TIMEOUT_S = 30
MODELS = ("add_one", "add_one_pair", "add_one_rows", "add_one_batched")


def triton_repo(*args: str) -> None:
    from torch_tensorrt_executorch_runtime.cli import main

    assert main(["triton-repo", *args]) == 0


@pytest.fixture(scope="module")
def repository(tmp_path_factory, serving_programs, serving):
    repo = tmp_path_factory.mktemp("triton-repository")
    provider = ["--provider", serving.provider, "--provider-library", str(serving.provider_library())]
    triton_repo(str(serving_programs["add_one"]), str(repo), "--name", "add_one", *provider)
    triton_repo(str(serving_programs["add_one"]), str(repo), "--name", "add_one_pair", "--instances", "2", *provider)
    triton_repo(str(serving_programs["add_one_rows"]), str(repo), "--name", "add_one_rows", *provider)
    triton_repo(
        str(serving_programs["add_one_rows"]), str(repo), "--name", "add_one_batched", "--max-batch", "8", *provider
    )
    return repo


@pytest.fixture(scope="module")
def triton(repository, tmp_path_factory, serving):
    server = serving.start_triton(repository, tmp_path_factory.mktemp("triton"), list(MODELS), "--log-info=true")
    yield server, server.ports["http"], server.ports["grpc"]
    server.stop()


@pytest.fixture(scope="module")
def server(triton):
    """What the shared client fixtures (conftest.py) connect to."""
    return triton


def infer_http(client, model: str, x: np.ndarray, *, binary: bool = True, datatype: str = "FP32") -> np.ndarray:
    tensor = httpclient.InferInput("x", list(x.shape), datatype)
    tensor.set_data_from_numpy(x, binary_data=binary)
    result = client.infer(model, [tensor], outputs=[httpclient.InferRequestedOutput("y", binary_data=binary)])
    return result.as_numpy("y")


def infer_grpc(client, model: str, x: np.ndarray) -> np.ndarray:
    tensor = grpcclient.InferInput("x", list(x.shape), "FP32")
    tensor.set_data_from_numpy(x)
    return client.infer(model, [tensor], client_timeout=CLIENT_TIMEOUT_S).as_numpy("y")


def test_the_repository_is_what_triton_expects(repository, serving):
    config = (repository / "add_one" / "config.pbtxt").read_text()
    assert 'backend: "python"' in config and "max_batch_size: 0" in config
    assert "dims: [ 2, 3 ]" in config
    kind = "KIND_CPU" if serving.provider.endswith("-host") else "KIND_GPU"
    assert f"kind: {kind}" in config
    rows = (repository / "add_one_rows" / "config.pbtxt").read_text()
    assert "dims: [ -1, -1 ]" in rows  # dim 0 may vary; ExecuTorch does not say which dims do
    batched = (repository / "add_one_batched" / "config.pbtxt").read_text()
    assert "max_batch_size: 8" in batched and "dims: [ -1 ]" in batched and "dynamic_batching" in batched
    assert (repository / "add_one" / "1" / "model.py").exists()
    assert (repository / "add_one" / "1" / "add_one.pte").exists()


def test_listens_on_loopback_only(triton, serving):
    assert serving.not_on_loopback(triton[0].pid) == []


@pytest.mark.parametrize("binary", [True, False])
def test_right_answers_over_http(http_client, binary):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(infer_http(http_client, "add_one", x, binary=binary), x + 1)
    rows = np.full((5, 4), 2.5, dtype=np.float32)
    np.testing.assert_array_equal(infer_http(http_client, "add_one_rows", rows, binary=binary), rows + 1)


def test_right_answers_over_grpc(grpc_client):
    x = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(infer_grpc(grpc_client, "add_one", x), x + 1)
    metadata = grpc_client.get_model_metadata("add_one", as_json=True)
    assert [(t["name"], t["datatype"]) for t in metadata["inputs"]] == [("x", "FP32")]
    assert [(t["name"], t["datatype"]) for t in metadata["outputs"]] == [("y", "FP32")]


def test_bad_requests_get_errors_and_the_model_keeps_serving(http_client, grpc_client):
    good = np.ones((2, 4), dtype=np.float32)
    # More rows than the program's profile takes: the package's own error text comes back.
    with pytest.raises(InferenceServerException, match=r"shape \[9, 4\] exceeds the upper bounds \[8, 4\]"):
        infer_http(http_client, "add_one_rows", np.ones((9, 4), dtype=np.float32))
    # The wrong dtype and the wrong rank: refused before or inside the model, either way with a reason.
    with pytest.raises(InferenceServerException, match="data-type is .INT32., but model .add_one_rows. expects .FP32."):
        infer_http(http_client, "add_one_rows", np.ones((2, 4), dtype=np.int32), datatype="INT32")
    with pytest.raises(InferenceServerException, match="(?i)shape|dims|rank"):
        infer_grpc(grpc_client, "add_one", np.ones((2, 3, 1), dtype=np.float32))
    np.testing.assert_array_equal(infer_http(http_client, "add_one_rows", good), good + 1)
    np.testing.assert_array_equal(infer_grpc(grpc_client, "add_one_rows", good), good + 1)
    assert http_client.is_model_ready("add_one_rows")


def test_two_instances_serve_concurrent_clients(triton, http_client):
    config = http_client.get_model_config("add_one_pair")
    assert config["instance_group"][0]["count"] == 2
    assert len(_stubs(triton[0].pid, "add_one_pair")) == 2

    def client_work(worker: int) -> int:
        client = httpclient.InferenceServerClient(f"127.0.0.1:{triton[1]}", network_timeout=CLIENT_TIMEOUT_S)
        try:
            for i in range(20):
                x = np.full((2, 3), worker * 100 + i, dtype=np.float32)
                np.testing.assert_array_equal(infer_http(client, "add_one_pair", x), x + 1)
            return worker
        finally:
            client.close()

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        done = list(pool.map(client_work, range(4), timeout=120))
    assert done == [0, 1, 2, 3]


def test_dynamic_batching_splits_answers_back_per_request(triton, grpc_client):
    def one(i: int) -> None:
        x = np.full((1 + i % 3, 4), float(i), dtype=np.float32)
        np.testing.assert_array_equal(infer_grpc(grpc_client, "add_one_batched", x), x + 1)

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        list(pool.map(one, range(40), timeout=120))
    stats = grpc_client.get_inference_statistics("add_one_batched", as_json=True)["model_stats"][0]
    assert int(stats["inference_count"]) >= 40


def test_device_placement_is_logged(triton, http_client, serving):
    infer_http(http_client, "add_one", np.zeros((2, 3), dtype=np.float32))
    log = triton[0].log_text()
    assert "torch-tensorrt-executorch: inputs on" in log
    # Answers leave no Python traceback behind (a DLPack capsule handed over wrongly prints one
    # per output).
    assert "Traceback" not in log, log[log.index("Traceback") - 200:][:2000]
    if serving.placement == "device_resident" and serving.provider == "test-cuda":
        # Device-resident program: outputs stay on the GPU across DLPack.
        assert "outputs on cuda" in log


def _stubs(server_pid: int, model: str) -> list:
    """The Python backend stubs serving `model` (its model.py path is in their command line)."""
    import psutil

    marker = f"/{model}/1/model.py"
    return [
        p
        for p in psutil.Process(server_pid).children(recursive=True)
        if "stub" in p.name() and any(marker in a for a in p.cmdline())
    ]


def _stub_rss(server_pid: int, model: str) -> int:
    """RSS of the model's one stub, once the stubs of earlier loads have exited (Triton may finish
    loading the new instance before the old stub is gone; a stub left behind fails here)."""
    deadline = time.monotonic() + 30
    while len(stubs := _stubs(server_pid, model)) > 1 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert len(stubs) == 1, [p.cmdline() for p in stubs]
    return stubs[0].memory_info().rss


def test_unload_reload_cycles_keep_the_stub_memory_flat(triton, http_client):
    import psutil

    x = np.ones((2, 3), dtype=np.float32)
    rss = []
    server = psutil.Process(triton[0].pid)
    server_rss = []
    for _ in range(20):
        http_client.unload_model("add_one")
        deadline = time.monotonic() + 60
        while http_client.is_model_ready("add_one"):
            assert time.monotonic() < deadline, "add_one still ready 60 s after unload"
            time.sleep(0.1)
        http_client.load_model("add_one")
        for _ in range(5):
            np.testing.assert_array_equal(infer_http(http_client, "add_one", x), x + 1)
        rss.append(_stub_rss(triton[0].pid, "add_one"))
        server_rss.append(server.memory_info().rss)
    growth = (rss[-1] - rss[1]) / rss[1]
    print(json.dumps({"stub_rss_mb": [r >> 20 for r in rss], "server_rss_mb": [r >> 20 for r in server_rss]}))
    assert growth < 0.05, f"stub RSS grew {growth:.1%} over 20 reloads: {[r >> 20 for r in rss]} MiB"


def test_a_program_that_cannot_load_fails_at_load(repository, http_client, tmp_path):
    broken = repository / "broken"
    (broken / "1").mkdir(parents=True)
    (broken / "1" / "model.py").write_text((repository / "add_one" / "1" / "model.py").read_text())
    (broken / "1" / "add_one.pte").write_bytes(b"not a program")
    (broken / "config.pbtxt").write_text(
        (repository / "add_one" / "config.pbtxt").read_text().replace('name: "add_one"', 'name: "broken"')
    )
    with pytest.raises(InferenceServerException, match="cannot serve .*add_one.pte"):
        http_client.load_model("broken")
    assert http_client.is_model_ready("add_one")


def test_device_tensors_reach_the_model_and_stay_on_the_device(triton, serving):
    """GPU machines only: the input in CUDA shared memory, so Triton hands the model a device tensor
    (KIND_GPU asks for them), which reaches the program through DLPack."""
    if serving.provider != "test-cuda":
        pytest.skip("device tensors need the CUDA test provider (TTE_SERVING_PROVIDER=test-cuda, a GPU machine)")
    cudashm = pytest.importorskip("tritonclient.utils.cuda_shared_memory", reason="needs cuda-python (cuda.bindings)")
    client = httpclient.InferenceServerClient(f"127.0.0.1:{triton[1]}", network_timeout=CLIENT_TIMEOUT_S)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    region = cudashm.create_shared_memory_region("tte_x", x.nbytes, 0)
    try:
        cudashm.set_shared_memory_region(region, [x])
        client.register_cuda_shared_memory("tte_x", cudashm.get_raw_handle(region), 0, x.nbytes)
        tensor = httpclient.InferInput("x", [2, 3], "FP32")
        tensor.set_shared_memory("tte_x", x.nbytes)
        y = client.infer("add_one_pair", [tensor]).as_numpy("y")
        np.testing.assert_array_equal(y, x + 1)
        log = triton[0].log_text()
        assert "torch-tensorrt-executorch: inputs on cuda" in log, triton[0].log_tail()
    finally:
        client.unregister_cuda_shared_memory("tte_x")
        cudashm.destroy_shared_memory_region(region)
        client.close()
