"""KServe's model server (Open Inference Protocol v2) serving a .pte in a
subprocess on 127.0.0.1, with the same tritonclient calls as Triton: REST
(binary and JSON outputs) and gRPC, bad requests, concurrent clients."""

from __future__ import annotations

import concurrent.futures
import json
import urllib.request

import numpy as np
import pytest

httpclient = pytest.importorskip("tritonclient.http", reason="tritonclient[http] is not installed (scripts/setup.sh)")
grpcclient = pytest.importorskip("tritonclient.grpc", reason="tritonclient[grpc] is not installed (scripts/setup.sh)")
from tritonclient.utils import InferenceServerException  # noqa: E402

CLIENT_TIMEOUT_S = 30


@pytest.fixture(scope="module")
def kserve(serving_programs, tmp_path_factory, serving):
    server = serving.start_kserve(serving_programs["add_one_rows"], "rows", tmp_path_factory.mktemp("kserve"))
    yield server, server.ports["http"], server.ports["grpc"]
    server.stop()


@pytest.fixture(scope="module")
def server(kserve):
    """What the shared client fixtures (conftest.py) connect to."""
    return kserve


def infer_http(client, x: np.ndarray, *, binary: bool = True, datatype: str = "FP32", name: str = "x"):
    # Inputs binary either way: tritonclient sends a JSON-only body without a JSON content
    # type, which KServe refuses ("received byte inputs, but the
    # 'inference-header-content-length' header is missing").
    tensor = httpclient.InferInput(name, list(x.shape), datatype)
    tensor.set_data_from_numpy(x, binary_data=True)
    return client.infer("rows", [tensor], outputs=[httpclient.InferRequestedOutput("y", binary_data=binary)])


def infer_grpc(client, x: np.ndarray) -> np.ndarray:
    tensor = grpcclient.InferInput("x", list(x.shape), "FP32")
    tensor.set_data_from_numpy(x)
    return client.infer("rows", [tensor], client_timeout=CLIENT_TIMEOUT_S).as_numpy("y")


def test_listens_on_loopback_only(kserve, serving):
    assert serving.not_on_loopback(kserve[0].pid) == []


@pytest.mark.parametrize("binary", [True, False])
def test_right_answers_over_rest(http_client, binary):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    result = infer_http(http_client, x, binary=binary)
    np.testing.assert_array_equal(result.as_numpy("y"), x + 1)
    output = result.get_output("y")
    # Binary outputs carry their size and no JSON data; JSON outputs carry the data.
    assert ("binary_data_size" in (output.get("parameters") or {})) == binary
    assert ("data" in output) != binary


def test_a_request_without_an_id_gets_one(kserve):
    body = {"inputs": [{"name": "x", "shape": [1, 4], "datatype": "FP32", "data": [1, 2, 3, 4]}]}
    request = urllib.request.Request(
        f"http://127.0.0.1:{kserve[1]}/v2/models/rows/infer",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=CLIENT_TIMEOUT_S) as response:
        answer = json.loads(response.read())
    assert answer["id"]
    assert answer["outputs"][0]["data"] == [2, 3, 4, 5]


def test_right_answers_over_grpc(grpc_client):
    x = np.linspace(-2, 2, 8, dtype=np.float32).reshape(2, 4)
    np.testing.assert_array_equal(infer_grpc(grpc_client, x), x + 1)


def test_bad_requests_get_errors_and_the_model_keeps_serving(http_client, grpc_client):
    with pytest.raises(InferenceServerException, match=r"9") as too_many:
        infer_http(http_client, np.ones((9, 4), dtype=np.float32))
    assert "Error" in str(too_many.value)
    with pytest.raises(InferenceServerException, match="(?i)int32|dtype|float32"):
        infer_http(http_client, np.ones((2, 4), dtype=np.int32), datatype="INT32")
    with pytest.raises(InferenceServerException, match="takes the inputs x"):
        infer_http(http_client, np.ones((2, 4), dtype=np.float32), name="z")
    good = np.ones((2, 4), dtype=np.float32)
    np.testing.assert_array_equal(infer_http(http_client, good).as_numpy("y"), good + 1)
    np.testing.assert_array_equal(infer_grpc(grpc_client, good), good + 1)


def test_concurrent_clients(kserve):
    def client_work(worker: int) -> int:
        client = httpclient.InferenceServerClient(f"127.0.0.1:{kserve[1]}", network_timeout=CLIENT_TIMEOUT_S)
        try:
            for i in range(20):
                x = np.full((1 + i % 4, 4), worker * 100 + i, dtype=np.float32)
                np.testing.assert_array_equal(infer_http(client, x).as_numpy("y"), x + 1)
            return worker
        finally:
            client.close()

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        assert list(pool.map(client_work, range(4), timeout=120)) == [0, 1, 2, 3]
