"""Shared set-up of the Python API tests.

The package under test is the installed one (scripts/build.sh installs it from
the build tree). The host test provider comes from TTE_TEST_PROVIDER_DIR (the
CMake build's cpp/ folder); tests that need it skip with a message without it.
Programs are packed once per session with the packer and test-engine plans.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

HOST_PROVIDER = "test-host"
HOST_PROVIDER_FILE = "libtte_test_provider_host.so"


def _provider_dir() -> Path | None:
    value = os.environ.get("TTE_TEST_PROVIDER_DIR")
    return Path(value) if value else None


def host_provider_library() -> Path:
    folder = _provider_dir()
    if folder is None:
        pytest.skip("TTE_TEST_PROVIDER_DIR is not set: it names the build folder with the test providers")
    library = folder / HOST_PROVIDER_FILE
    if not library.exists():
        pytest.skip(f"{library} is not built")
    return library


@pytest.fixture(scope="session")
def tte():
    try:
        import torch_tensorrt_executorch_runtime as package
    except ImportError as exc:
        pytest.fail(f"torch_tensorrt_executorch_runtime does not import: {exc}")
    return package


@pytest.fixture(scope="session")
def host_provider(tte) -> str:
    """Registers the host test provider once for the session; returns its name."""
    if HOST_PROVIDER not in tte.providers.providers():
        tte.register_provider_library(host_provider_library())
    return HOST_PROVIDER


@pytest.fixture(scope="session")
def programs(tmp_path_factory):
    """Packed test programs, by name."""
    from torch_tensorrt_executorch_runtime.pack import TensorSpec, pack_program
    from torch_tensorrt_executorch_runtime.testing import test_engine_spec

    folder = tmp_path_factory.mktemp("programs")
    made = {}

    def pack(name, methods, **kwargs):
        path = folder / f"{name}.pte"
        pack_program(path, methods, **kwargs)
        made[name] = path

    add_one = test_engine_spec(
        "add_one", [TensorSpec("x", "float32", [2, 3])], [TensorSpec("y", "float32", ["x:0", "x:1"])]
    )
    pack("add_one", [add_one])
    pack(
        "dynamic",
        [
            test_engine_spec(
                "add_one",
                [TensorSpec("x", "float32", [(1, 2, 8), 4])],
                [TensorSpec("y", "float32", ["x:0", "x:1"])],
            )
        ],
    )
    pack(
        "add",
        [
            test_engine_spec(
                "add",
                [TensorSpec("a", "int32", [4]), TensorSpec("b", "int32", [4])],
                [TensorSpec("y", "int32", ["a:0"])],
            )
        ],
    )
    pack(
        "two_methods",
        {
            "forward": [add_one],
            "double_input": [
                test_engine_spec(
                    "identity", [TensorSpec("p", "float16", [3])], [TensorSpec("q", "float16", ["p:0"])]
                )
            ],
        },
    )
    pack("mixed", [add_one], epilogue={"y": 2.0}, epilogue_backend="xnnpack")
    pack("external", [add_one], epilogue={"y": 3.0}, epilogue_backend="portable", external_constants=True)
    pack("resident", [add_one], placement="device_resident")
    return made


@pytest.fixture
def host_library() -> Path:
    """Path of the host test provider library (skips when it is not built)."""
    return host_provider_library()
