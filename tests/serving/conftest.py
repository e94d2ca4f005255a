"""Real servers for the serving tests: tritonserver (bundled by nvidia-pytriton)
and KServe's model server, started by `serving.server_process` on free
loopback ports and stopped by process id at teardown.

Programs are test-engine programs run by the host test provider
(TTE_TEST_PROVIDER_DIR); the GPU check sets TTE_SERVING_PROVIDER=test-cuda
and TTE_SERVING_PLACEMENT=device_resident to serve them with the CUDA test
provider instead, and TTE_SERVING_PROGRAMS to a folder of programs packed
where the project builds (`make_serving_programs.py`).
"""

from __future__ import annotations

import ipaddress
import os
import runpy
from pathlib import Path

import pytest

PROVIDER_FILES = {"test-host": "libtte_test_provider_host.so", "test-cuda": "libtte_test_provider_cuda.so"}


class Serving:
    """What the serving tests use, handed to them as the `serving` fixture."""

    provider = os.environ.get("TTE_SERVING_PROVIDER", "test-host")
    placement = os.environ.get("TTE_SERVING_PLACEMENT", "host")

    @classmethod
    def provider_library(cls) -> Path:
        folder = os.environ.get("TTE_TEST_PROVIDER_DIR")
        if not folder:
            pytest.skip("TTE_TEST_PROVIDER_DIR is not set: it names the build folder with the test providers")
        library = Path(folder) / PROVIDER_FILES[cls.provider]
        if not library.exists():
            pytest.skip(f"{library} is not built")
        return library

    @staticmethod
    def start_triton(repository: Path, workdir: Path, models, *extra: str):
        from torch_tensorrt_executorch_runtime.serving import server_process

        try:
            return server_process.start_tritonserver(repository, workdir, models, *extra)
        except server_process.ServerUnavailableError as exc:
            pytest.skip(str(exc))

    @classmethod
    def start_kserve(cls, program: Path, name: str, workdir: Path):
        from torch_tensorrt_executorch_runtime.serving import server_process

        try:
            return server_process.start_kserve(
                program, name, workdir, provider=cls.provider, provider_libraries=[cls.provider_library()]
            )
        except server_process.ServerUnavailableError as exc:
            pytest.skip(str(exc))

    @staticmethod
    def not_on_loopback(pid: int) -> list[str]:
        """Listening addresses of the process and its children that are not loopback."""
        import psutil

        found = []
        root = psutil.Process(pid)
        for process in [root, *root.children(recursive=True)]:
            try:
                # psutil 6 renamed connections() (kserve pins psutil < 6).
                connections = getattr(process, "net_connections", process.connections)(kind="inet")
            except psutil.Error:
                continue
            for c in connections:
                if c.status == psutil.CONN_LISTEN and not _loopback(c.laddr.ip):
                    found.append(f"{process.name()} {c.laddr.ip}:{c.laddr.port}")
        return found


def _loopback(text: str) -> bool:
    address = ipaddress.ip_address(text.split("%")[0])
    mapped = getattr(address, "ipv4_mapped", None)  # ::ffff:127.0.0.1
    return (mapped or address).is_loopback


@pytest.fixture(scope="session")
def serving() -> type[Serving]:
    return Serving


@pytest.fixture(scope="session")
def serving_programs(tmp_path_factory, serving):
    """add_one (static [2, 3]) and add_one_rows (dim 0 in 1..8, 4 columns), packed for the placement in use,
    or read from TTE_SERVING_PROGRAMS (make_serving_programs.py run where the project builds)."""
    made_elsewhere = os.environ.get("TTE_SERVING_PROGRAMS")
    if made_elsewhere:
        return {name: Path(made_elsewhere) / f"{name}.pte" for name in ("add_one", "add_one_rows")}
    maker = runpy.run_path(str(Path(__file__).with_name("make_serving_programs.py")))["make_programs"]
    return maker(tmp_path_factory.mktemp("serving-programs"), serving.placement)


CLIENT_TIMEOUT_S = 30


@pytest.fixture
def http_client(server):
    """A tritonclient HTTP client of the module's `server` fixture (process, http port, grpc port)."""
    httpclient = pytest.importorskip(
        "tritonclient.http", reason="tritonclient[http] is not installed (scripts/setup.sh)"
    )
    client = httpclient.InferenceServerClient(
        f"127.0.0.1:{server[1]}", network_timeout=CLIENT_TIMEOUT_S, connection_timeout=CLIENT_TIMEOUT_S
    )
    yield client
    client.close()


@pytest.fixture
def grpc_client(server):
    """A tritonclient gRPC client of the module's `server` fixture."""
    grpcclient = pytest.importorskip(
        "tritonclient.grpc", reason="tritonclient[grpc] is not installed (scripts/setup.sh)"
    )
    client = grpcclient.InferenceServerClient(f"127.0.0.1:{server[2]}")
    yield client
    client.close()
