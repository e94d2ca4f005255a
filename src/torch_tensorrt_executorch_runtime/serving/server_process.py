"""Servers started as local processes on loopback ports, for tests and benchmarks.

`start_tritonserver` runs the `tritonserver` binary and Python backend stub
that the nvidia-pytriton wheel bundles (no container needed); `start_kserve`
runs `kserve_model` in a fresh interpreter. Each waits for readiness with a
bounded timeout, runs in a process group of its own, and `stop()` ends it by
its process id (SIGTERM, then SIGKILL to the group).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import time
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path

STARTUP_TIMEOUT_S = 120
STOP_TIMEOUT_S = 30


class ServerUnavailableError(RuntimeError):
    """What a server needs is not installed (the message says what to install)."""


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ready(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


class ServerProcess:
    """A server process in its own process group, writing to `log`, ready once `ready_url` answers 200."""

    def __init__(self, command: Sequence[str], log: Path, env: Mapping[str, str], ready_url: str, **ports: int):
        self.log = Path(log)
        self.ports = ports
        with open(self.log, "wb") as out:
            self.process = subprocess.Popen(
                list(command), stdout=out, stderr=subprocess.STDOUT, env=dict(env), start_new_session=True
            )
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while not _ready(ready_url):
            if self.process.poll() is not None:
                raise RuntimeError(f"{command[0]} exited with status {self.process.returncode}:\n{self.log_tail()}")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"{command[0]} was not ready in {STARTUP_TIMEOUT_S} s:\n{self.log_tail()}")
            time.sleep(0.2)

    @property
    def pid(self) -> int:
        return self.process.pid

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")

    def log_tail(self, lines: int = 40) -> str:
        return "\n".join(self.log_text().splitlines()[-lines:])

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                pass
        try:
            # Whatever the server left behind (a stub it did not reap) goes with its group.
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        if self.process.poll() is None:
            self.process.wait(timeout=STOP_TIMEOUT_S)

    def __enter__(self) -> ServerProcess:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def pytriton_root() -> Path:
    """The installed nvidia-pytriton package folder (it bundles tritonserver); found, not imported:
    its Python API needs dependencies the binaries do not."""
    spec = importlib.util.find_spec("pytriton")
    if spec is None or not spec.submodule_search_locations:
        raise ServerUnavailableError(
            "nvidia-pytriton is not installed: it bundles the tritonserver binary and Python backend stub "
            "(pip install --no-deps nvidia-pytriton; scripts/setup.sh does)"
        )
    return Path(spec.submodule_search_locations[0])


def stub_environment(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The Python backend stub embeds the first libpython the loader finds and
    the first `python3` on PATH: make those this interpreter's and its venv's."""
    libs = pytriton_root().parent / "nvidia_pytriton.libs"
    env = dict(os.environ if base is None else base)
    env["LD_LIBRARY_PATH"] = os.pathsep.join(
        p for p in (sysconfig.get_config_var("LIBDIR"), str(libs), env.get("LD_LIBRARY_PATH")) if p
    )
    env["PATH"] = os.pathsep.join(p for p in (str(Path(sys.executable).parent), env.get("PATH")) if p)
    return env


def backend_directory(into: Path) -> Path:
    """Triton's backends folder with the Python backend and the stub built for this interpreter."""
    tritonserver = pytriton_root() / "tritonserver"
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    stub = tritonserver / "python_backend_stubs" / version / "triton_python_backend_stub"
    if not stub.exists():
        raise ServerUnavailableError(f"nvidia-pytriton has no Python backend stub for Python {version}")
    shutil.copytree(tritonserver / "backends", into, dirs_exist_ok=True)
    shutil.copy(stub, into / "python" / "triton_python_backend_stub")
    return into


def start_tritonserver(
    repository: str | os.PathLike, workdir: str | os.PathLike, models: Sequence[str], *extra_args: str
) -> ServerProcess:
    """tritonserver on free loopback ports (ports "http", "grpc"), loading `models` (explicit model control)."""
    workdir = Path(workdir)
    binary = pytriton_root() / "tritonserver" / "bin" / "tritonserver"
    backends = backend_directory(workdir / "backends")
    http, grpc = free_port(), free_port()
    command = [
        str(binary),
        f"--model-repository={Path(repository).resolve()}",
        f"--backend-directory={backends}",
        "--http-address=127.0.0.1",
        f"--http-port={http}",
        "--grpc-address=127.0.0.1",
        f"--grpc-port={grpc}",
        "--allow-metrics=false",
        "--model-control-mode=explicit",
        "--exit-timeout-secs=5",
        *(f"--load-model={m}" for m in models),
        *extra_args,
    ]
    return ServerProcess(
        command,
        workdir / "tritonserver.log",
        stub_environment(),
        f"http://127.0.0.1:{http}/v2/health/ready",
        http=http,
        grpc=grpc,
    )


def start_kserve(
    program: str | os.PathLike,
    name: str,
    workdir: str | os.PathLike,
    *,
    provider: str | None = None,
    provider_libraries: Sequence[str | os.PathLike] = (),
) -> ServerProcess:
    """KServe's model server (`kserve_model`) on free loopback ports (ports "http", "grpc")."""
    # Looked for, not imported: kserve and tritonclient.grpc register the same v2 protobuf
    # messages, so one process cannot import both (a client's process, often).
    if importlib.util.find_spec("kserve") is None:
        raise ServerUnavailableError("kserve is not installed (pip install 'torch-tensorrt-executorch-runtime[serve]')")
    http, grpc = free_port(), free_port()
    command = [
        sys.executable, "-m", "torch_tensorrt_executorch_runtime.serving.kserve_model", str(program),
        "--name", name, "--host", "127.0.0.1", "--http-port", str(http), "--grpc-port", str(grpc),
    ]
    if provider:
        command += ["--provider", provider]
    for library in provider_libraries:
        command += ["--provider-library", str(library)]
    return ServerProcess(
        command,
        Path(workdir) / "kserve.log",
        os.environ,
        f"http://127.0.0.1:{http}/v2/models/{name}/ready",
        http=http,
        grpc=grpc,
    )
