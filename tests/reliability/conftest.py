"""Shared set-up of the reliability tests: hostile inputs, fuzz regressions,
concurrency and leaks, through the Python API and the plugin's C API.

The plugin under test is the installed package's, or the build named by
TORCH_TENSORRT_EXECUTORCH_LIBRARY; the host test provider comes from
TTE_TEST_PROVIDER_DIR (tests that need it skip without it). Programs are
packed from test-engine plans, once per session.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

HOST_PROVIDER = "test-host"
HOST_PROVIDER_FILE = "libtte_test_provider_host.so"


def host_provider_library() -> Path:
    value = os.environ.get("TTE_TEST_PROVIDER_DIR")
    if not value:
        pytest.skip("TTE_TEST_PROVIDER_DIR is not set: it names the build folder with the test providers")
    library = Path(value) / HOST_PROVIDER_FILE
    if not library.exists():
        pytest.skip(f"{library} is not built")
    return library


@pytest.fixture(scope="session")
def tte():
    import torch_tensorrt_executorch_runtime as package

    return package


@pytest.fixture
def host_provider_file() -> Path:
    """The host test provider's library, for tests that run a fresh interpreter."""
    return host_provider_library()


@pytest.fixture(scope="session")
def host_provider(tte) -> str:
    if HOST_PROVIDER not in tte.providers.providers():
        tte.register_provider_library(host_provider_library())
    return HOST_PROVIDER


def add_one_spec(shape=(2, 4), dtype="float32", x="x", y="y", **options):
    from torch_tensorrt_executorch_runtime.pack import TensorSpec
    from torch_tensorrt_executorch_runtime.testing import test_engine_spec

    dims = [f"{x}:{i}" for i in range(len(shape))]
    return test_engine_spec("add_one", [TensorSpec(x, dtype, list(shape))], [TensorSpec(y, dtype, dims)], **options)


@pytest.fixture(scope="session")
def packed(tmp_path_factory):
    """name -> path of a packed program."""
    from torch_tensorrt_executorch_runtime.pack import pack_program

    folder = tmp_path_factory.mktemp("reliability-programs")
    programs = {
        "add_one": ([add_one_spec()], {}),
        "dynamic": ([add_one_spec([(0, 2, 8), 4])], {}),
        "external_a": ([add_one_spec()], {"epilogue": {"y": 2.0}, "epilogue_backend": "portable",
                                          "external_constants": True}),
        "external_b": ([add_one_spec(y="z")], {"epilogue": {"z": [1.0, 2.0, 3.0, 4.0]},
                                               "epilogue_backend": "portable", "external_constants": True}),
    }
    made = {}
    for name, (methods, options) in programs.items():
        path = folder / name / f"{name}.pte"
        path.parent.mkdir()
        pack_program(path, methods, **options)
        made[name] = path
    return made


@pytest.fixture
def assert_usable(tte, host_provider, packed):
    """Checks the process still loads and runs a good program correctly."""

    def check():
        with tte.load(packed["add_one"]) as program:
            x = np.arange(8, dtype=np.float32).reshape(2, 4)
            (y,) = program.forward(x)
            np.testing.assert_array_equal(y, x + 1)

    return check
