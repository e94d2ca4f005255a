"""Activation, the upstream 0.1.0 names, the stock runtime in both import orders, clean exits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_upstream_names(tte):
    assert tte.BACKEND_NAME == "TensorRTBackend"
    assert issubclass(tte.DelegateCompatibilityError, ImportError)
    assert tte.activate() is None
    assert tte.activate() is None  # idempotent
    runtime = tte.get_runtime()
    from executorch.runtime import Runtime

    assert runtime is Runtime.get()
    assert "TensorRTBackend" in runtime.backend_registry.registered_backend_names


def test_public_names_are_the_documented_ones(tte):
    # Everything the package shows (submodules aside) is in __all__: no stray
    # names such as `annotations` from a `from __future__` import.
    import inspect

    shown = {n for n in dir(tte) if not n.startswith("_") and not inspect.ismodule(getattr(tte, n))}
    assert shown == {n for n in tte.__all__ if not inspect.ismodule(getattr(tte, n))}


def test_version_matches_versions_json(tte):
    versions = json.loads((ROOT / "versions.json").read_text())
    assert tte.__version__ == versions["project"]
    from torch_tensorrt_executorch_runtime import _native

    assert _native.version() == versions["project"]
    assert _native.executorch_version() == versions["executorch"]


def test_plugin_owns_the_registration(tte):
    from torch_tensorrt_executorch_runtime import _native

    assert _native.owns_registration()
    assert Path(_native.registration_owner()).resolve() == Path(_native.library_path()).resolve()


def test_cuda_device_count_is_an_int(tte):
    assert isinstance(tte.cuda_device_count(), int) and tte.cuda_device_count() >= 0


def test_log_level_switch(tte, monkeypatch):
    from torch_tensorrt_executorch_runtime._native import library

    lib = library.load_plugin()
    before = tte.get_log_level()
    try:
        tte.set_log_level("debug")
        assert tte.get_log_level() == "debug" and lib.tte_get_log_level() == 0
        tte.set_log_level("error")
        assert tte.get_log_level() == "error" and lib.tte_get_log_level() == 3
        with pytest.raises(ValueError, match="unknown log level"):
            tte.set_log_level("chatty")
    finally:
        tte.set_log_level(before)


def test_log_level_from_environment(run_python):
    result = run_python(
        """
        import torch_tensorrt_executorch_runtime as tte
        from torch_tensorrt_executorch_runtime._native import library
        print(tte.get_log_level(), library.load_plugin().tte_get_log_level())
        """,
        env={"TORCH_TENSORRT_EXECUTORCH_LOG_LEVEL": "info"},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["info", "1"]


STOCK_RUN = """
import torch
from executorch.runtime import Runtime
program = Runtime.get().load_program({pte!r})
method = program.load_method("forward")
(y,) = method.execute([torch.zeros(2, 3)])
print(y.tolist())
"""


@pytest.mark.parametrize("order", ["ours_first", "executorch_first"])
def test_stock_runtime_in_either_import_order(run_python, programs, host_library, order):
    ours = f"import torch_tensorrt_executorch_runtime as tte\ntte.register_provider_library({str(host_library)!r})\n"
    stock = "from executorch.runtime import Runtime\nRuntime.get()\n"
    first, second = (ours, stock) if order == "ours_first" else (stock, ours)
    result = run_python(first + second + STOCK_RUN.format(pte=str(programs["add_one"])))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "[[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]"


def test_get_runtime_after_stock_import(run_python):
    result = run_python(
        """
        from executorch.runtime import Runtime
        import torch_tensorrt_executorch_runtime as tte
        print(tte.get_runtime() is Runtime.get())
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "True"


def test_exit_with_programs_alive(run_python, programs, host_library):
    """Programs and engines alive at exit, from a C provider, a Python provider and the stock runtime."""
    result = run_python(
        f"""
        import ctypes, numpy as np, torch
        import torch_tensorrt_executorch_runtime as tte
        from executorch.runtime import Runtime
        from torch_tensorrt_executorch_runtime.providers import IoTensor

        tte.register_provider_library({str(host_library)!r})

        class Engine:
            io_tensors = [IoTensor("x", True, "float32", 2), IoTensor("y", False, "float32", 2)]
            num_profiles = 1
            def profile_shape(self, profile, name): return (2, 3), (2, 3), (2, 3)
            def set_input_shape(self, name, shape): pass
            def get_output_shape(self, name): return (2, 3)
            def set_tensor_address(self, name, address): setattr(self, name, address)
            def enqueue(self, stream): ctypes.memmove(self.y, self.x, 24)

        class Provider:
            def deserialize(self, plan, device_id, options):
                return Engine()

        tte.register_provider(Provider(), name="py-exit", memory="host")
        kept = [tte.load({str(programs["add_one"])!r}), \
tte.load({str(programs["add_one"])!r}, options={{"provider": "py-exit"}})]
        for program in kept:
            program.forward(torch.zeros(2, 3))
        stock = Runtime.get().load_program({str(programs["add_one"])!r}).load_method("forward")
        stock.execute([torch.zeros(2, 3)])
        cycle = [kept]
        cycle.append(cycle)
        print("done")
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "done"
    assert "Exception ignored" not in result.stderr and "Traceback" not in result.stderr, result.stderr


def test_import_failure_is_an_import_error(run_python, tmp_path):
    result = run_python(
        """
        try:
            import torch_tensorrt_executorch_runtime
        except ImportError as exc:
            print(type(exc).__name__, "|", exc)
        """,
        env={"TORCH_TENSORRT_EXECUTORCH_LIBRARY": str(tmp_path / "missing.so")},
    )
    assert result.returncode == 0, result.stderr
    name, _, message = result.stdout.partition("|")
    assert name.strip() == "PluginLoadError"
    assert "missing.so" in message and "pip install" in message


def test_registration_taken_by_another_library(run_python, tmp_path):
    """A second copy of the plugin cannot own the name: importing says which library does."""
    from torch_tensorrt_executorch_runtime import _native

    original = _native.library_path()
    copy = tmp_path / "libexecutorch_backend_tensorrt_copy.so"
    copy.write_bytes(Path(original).read_bytes())
    result = run_python(
        f"""
        import ctypes
        ctypes.CDLL({original!r})  # registers TensorRTBackend first
        try:
            import torch_tensorrt_executorch_runtime
        except ImportError as exc:
            print(type(exc).__name__, "|", exc)
        """,
        env={"TORCH_TENSORRT_EXECUTORCH_LIBRARY": str(copy)},
    )
    assert result.returncode == 0, result.stderr
    name, _, message = result.stdout.partition("|")
    assert name.strip() == "RegistrationError"
    assert Path(original).name in message


def test_numpy_only_without_torch(run_python, programs, host_library):
    """torch is optional: with it unimportable, the package loads and runs numpy programs."""
    result = run_python(
        f"""
        import sys
        sys.modules["torch"] = None  # any `import torch` now raises ImportError
        import numpy as np
        import torch_tensorrt_executorch_runtime as tte
        tte.register_provider_library({str(host_library)!r})
        program = tte.load({str(programs["add"])!r})
        (y,) = program.run([np.arange(4, dtype=np.int32), np.ones(4, dtype=np.int32)])
        print(type(y).__name__, y.tolist())
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ndarray [1, 2, 3, 4]"
