"""Errors that explain, and ExecuTorch's log routed through the package's.

Every refusal is one of this package's exception types and says what was
expected, what was found and what to do; ExecuTorch's own reason (its log
line) reaches the exception, and its raw log lines stay out of stderr unless
the log level asks for them. Cases that could end the interpreter, or that
depend on import order and the log on stderr, run in a fresh one.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import numpy as np
import pytest

# A program given the .ptd of another program: ExecuTorch alone knows why it
# does not fit, and says so only in its log.
WRONG_DATA_FILE = """
import numpy as np
import torch_tensorrt_executorch_runtime as tte
{before}
tte.register_provider_library({provider!r})
try:
    tte.load({pte!r}, data_path=[{ptd!r}]).forward(np.ones((2, 4), np.float32))
except tte.errors.Error as exc:
    print(type(exc).__name__, exc)
"""


@pytest.fixture
def wrong_data_file(packed):
    return str(packed["external_a"]), str(packed["external_b"].with_suffix(".ptd"))


def _wrong_data_file(run_python, provider, files, before="", env=None):
    pte, ptd = files
    result = run_python(WRONG_DATA_FILE.format(before=before, provider=str(provider), pte=pte, ptd=ptd), env=env)
    assert result.returncode == 0, result.stderr
    return result


def test_executorch_reason_reaches_the_exception_and_not_stderr(run_python, host_provider_file, wrong_data_file):
    result = _wrong_data_file(run_python, host_provider_file, wrong_data_file)
    assert result.stdout.startswith("InvalidProgramError cannot load method 'forward': a .ptd given does not fit")
    assert "ExecuTorch: Sizes mismatch" in result.stdout
    assert "pass the .ptd exported with this program" in result.stdout
    # Neither ExecuTorch's own printer ("E 00:00:00.0 executorch:method.cpp:128]")
    # nor the routed line at the default level.
    assert "executorch:" not in result.stderr and "ExecuTorch" not in result.stderr, result.stderr


@pytest.mark.parametrize("how", ["environment", "set_log_level"])
def test_log_level_shows_executorch_lines(run_python, host_provider_file, wrong_data_file, how):
    if how == "environment":
        result = _wrong_data_file(run_python, host_provider_file, wrong_data_file,
                                  env={"TORCH_TENSORRT_EXECUTORCH_LOG_LEVEL": "info"})
    else:
        result = _wrong_data_file(run_python, host_provider_file, wrong_data_file, before="tte.set_log_level('info')")
    assert "ExecuTorch info: Sizes mismatch" in result.stderr, result.stderr
    assert "executorch:" not in result.stderr


def test_route_survives_importing_executorch_runtime_after(run_python, host_provider_file, wrong_data_file):
    # ExecuTorch's Python extension installs its own printer when it loads.
    result = _wrong_data_file(run_python, host_provider_file, wrong_data_file,
                              before="from executorch.runtime import Runtime")
    assert "ExecuTorch: Sizes mismatch" in result.stdout
    assert "Sizes mismatch" not in result.stderr, result.stderr


STOCK_RUNTIME = """
{imports}
program = Runtime.get().load_program({pte!r})
try:
    program.load_method("forward")
except Exception as exc:
    print("stock runtime:", type(exc).__name__)
"""


@pytest.mark.parametrize("imports", [
    "from executorch.runtime import Runtime\nimport torch_tensorrt_executorch_runtime as tte",
    # ExecuTorch's extension, loaded after, installs its printer; setting the
    # level takes the log back.
    "import torch_tensorrt_executorch_runtime as tte\nfrom executorch.runtime import Runtime\n"
    "tte.set_log_level(tte.get_log_level())",
], ids=["executorch-first", "executorch-after"])
def test_stock_runtime_lines_are_routed_at_error(run_python, packed, imports):
    code = STOCK_RUNTIME.format(imports=imports, pte=str(packed["external_a"]))
    result = run_python(code)
    assert result.returncode == 0, result.stderr
    assert "stock runtime:" in result.stdout
    # The stock runtime's exception carries only a code: its log says why, at error.
    assert "ExecuTorch error: external_data_map is null" in result.stderr, result.stderr
    assert "executorch:" not in result.stderr and "] external_data_map" not in result.stderr
    quiet = run_python(code, env={"TORCH_TENSORRT_EXECUTORCH_LOG_LEVEL": "off"})
    assert "external_data_map" not in quiet.stderr, quiet.stderr


# The README's stock-API order, with no call into this package after the
# import: ExecuTorch's extension installs its printer after the plugin routed
# the log, and the backend takes the log back when ExecuTorch initializes a
# delegate. add_one's delegate cannot initialize here (no provider takes its
# plan in a fresh process), so ExecuTorch logs "Init failed for backend".
README_ORDER = """
import torch_tensorrt_executorch_runtime
from executorch.runtime import Runtime
program = Runtime.get().load_program({pte!r})
try:
    program.load_method("forward")
except Exception as exc:
    print("stock runtime:", type(exc).__name__)
"""


def test_stock_runtime_imported_after_this_package_is_routed(run_python, packed):
    code = README_ORDER.format(pte=str(packed["add_one"]))
    result = run_python(code)
    assert result.returncode == 0, result.stderr
    assert "stock runtime:" in result.stdout
    assert "ExecuTorch error: Init failed for backend TensorRTBackend" in result.stderr, result.stderr
    # ExecuTorch's own printer writes "[method.cpp:128] Init failed ...".
    assert "] Init failed" not in result.stderr and "executorch:" not in result.stderr, result.stderr
    quiet = run_python(code, env={"TORCH_TENSORRT_EXECUTORCH_LOG_LEVEL": "off"})
    assert quiet.returncode == 0, quiet.stderr
    assert "stock runtime:" in quiet.stdout
    assert "Init failed" not in quiet.stderr, quiet.stderr


def test_input_errors_name_the_method(tte, host_provider, packed):
    with tte.load(packed["add_one"]) as program:
        with pytest.raises(tte.errors.InvalidArgumentError,
                           match=r"^input 0 of 'forward'[^:]*: expected a tensor, got double$"):
            program.forward(1.0)


@pytest.mark.parametrize("kind", ["directory", "fifo", "character device", "symlink loop"])
def test_paths_that_are_no_files(tte, tmp_path, kind):
    path = tmp_path / "model.pte"
    if kind == "directory":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "character device":
        path = "/dev/zero"
    else:
        path.symlink_to(path)
    expected = {"directory": "it is a directory", "fifo": "it is a FIFO",
                "character device": "it is a character device",
                "symlink loop": "its symbolic links form a loop"}[kind]
    with pytest.raises(tte.errors.InvalidArgumentError, match=f"cannot open program '{path}': {expected}"):
        tte.load(path)
    with pytest.raises(tte.errors.InvalidArgumentError, match=f"cannot open data file '{path}': {expected}"):
        tte.load(b"", data_path=[path])


def test_c_api_names_what_a_path_is(tte, tmp_path):
    """The C API says the same for a path Python did not look at first."""
    import ctypes

    from torch_tensorrt_executorch_runtime._native import abi, library

    error = abi.TteError()
    handle = ctypes.c_void_p()
    status = library.load_plugin().tte_program_open_file(str(tmp_path).encode(), None, ctypes.byref(handle),
                                                         ctypes.byref(error))
    assert status == tte.errors.TTE_ERROR_INVALID_ARGUMENT
    assert error.text() == (f"cannot open program '{tmp_path}': it is a directory, not a file: pass the path of the "
                            "file itself (or read the bytes and open them as a buffer)")


def test_method_name_that_is_not_utf8_is_refused_at_open(tte, packed):
    data = packed["add_one"].read_bytes()
    assert data.count(b"forward") == 1
    with pytest.raises(tte.errors.InvalidProgramError,
                       match=r"the name of method 0 \('forw\\xffrd'\) is not valid UTF-8"):
        tte.load(data.replace(b"forward", b"forw\xffrd"))


def test_describe_survives_names_that_are_not_utf8(tte, host_provider):
    from torch_tensorrt_executorch_runtime.pack import TensorSpec, pack_program
    from torch_tensorrt_executorch_runtime.testing import test_engine_spec

    spec = test_engine_spec("add_one", [TensorSpec("x", "float32", [2])], [TensorSpec("y", "float32", ["x:0"])],
                            weight_streaming_budget=0)
    data = pack_program(None, [spec])
    assert data.count(b"weight_streaming_budget") == 1
    with tte.load(data.replace(b"weight_streaming_budget", b"weight_streaming_budge\xff")) as program:
        program.load_method("forward")
        (delegate,) = program.describe()["methods"][0]["delegates"]
        assert [spec["key"] for spec in delegate["compile_specs"]] == ["weight_streaming_budge\ufffd"]


def _unplanned_inputs_program():
    """A KV-cache program whose cache input is the caller's memory (exported
    with alloc_graph_input=False), which the engine updates in place."""
    from torch_tensorrt_executorch_runtime.pack import TensorSpec, exir, pack_program
    from torch_tensorrt_executorch_runtime.testing import test_engine_spec

    spec = test_engine_spec("add_one", [TensorSpec("cache", "float32", [4])],
                            [TensorSpec("cache_out", "float32", ["cache:0"])],
                            aliased_io=[("cache_out", "cache", "kv_cache_update")])
    planning = exir.MemoryPlanningPass
    exir.MemoryPlanningPass = lambda **kwargs: planning(alloc_graph_input=False)
    try:
        return pack_program(None, [spec], alias_mode="input")
    finally:
        exir.MemoryPlanningPass = planning


def test_read_only_input_written_in_place_is_refused(tte, host_provider):
    with tte.load(_unplanned_inputs_program()) as program:
        assert program.method("forward").inputs[0].memory_planned is False
        cache = np.zeros(4, np.float32)
        program.forward(cache)
        np.testing.assert_array_equal(cache, np.ones(4, np.float32))  # updated in place
        frozen = np.zeros(4, np.float32)
        frozen.flags.writeable = False
        with pytest.raises(tte.errors.InvalidArgumentError,
                           match=r"writes output 'cache_out' in place into its input 'cache', which is input 0 "
                                 r"of 'forward', passed read-only \(DLPack read-only flag\)"):
            program.forward(frozen)
        np.testing.assert_array_equal(frozen, np.zeros(4, np.float32))
        program.forward(cache)  # the program still runs
        np.testing.assert_array_equal(cache, np.full(4, 2, np.float32))


def test_read_only_input_copied_into_the_program_is_fine(tte, host_provider, packed):
    """A planned input is copied in, so a read-only one is never written."""
    with tte.load(packed["add_one"]) as program:
        x = np.ones((2, 4), np.float32)
        x.flags.writeable = False
        (y,) = program.forward(x)
        np.testing.assert_array_equal(y, x + 1)


def test_unreadable_executorch_folder_is_an_import_error(run_python, tmp_path):
    fake = tmp_path / "site" / "executorch"
    (fake / "lib").mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    (fake / "lib" / "libexecutorch.so").write_bytes(b"")
    code = """
        import os, pathlib
        if os.geteuid() == 0:
            # root reads any folder: make this one answer as it would anyone else
            stat = pathlib.Path.stat
            def denied(self, *args, **kwargs):
                if "executorch/lib" in str(self):
                    raise PermissionError(13, "Permission denied", str(self))
                return stat(self, *args, **kwargs)
            pathlib.Path.stat = denied
        try:
            import torch_tensorrt_executorch_runtime
        except ImportError as exc:
            print(type(exc).__name__, exc)
        """
    os.chmod(fake / "lib", 0)
    try:
        result = run_python(code, env={"PYTHONPATH": str(fake.parent)})
    finally:
        os.chmod(fake / "lib", stat.S_IRWXU)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("PluginLoadError cannot read ExecuTorch's runtime library"), result.stdout
    assert "Permission denied" in result.stdout and "chmod" in result.stdout


DENY_UNDER_ROOT = """
    import os, pathlib
    if os.geteuid() == 0:
        # root reads any folder: make this one answer as it would anyone else
        stat = pathlib.Path.stat
        def denied(self, *args, **kwargs):
            if {marker!r} in str(self):
                raise PermissionError(13, "Permission denied", str(self))
            return stat(self, *args, **kwargs)
        pathlib.Path.stat = denied
"""


def test_unreadable_plugin_folder_is_an_import_error(run_python, tmp_path):
    """The package's own lib/ folder (where the wheel ships the plugin) cannot be read."""
    import importlib.util

    installed = Path(importlib.util.find_spec("torch_tensorrt_executorch_runtime").submodule_search_locations[0])
    copy = tmp_path / "site" / installed.name
    shutil.copytree(installed, copy, ignore=shutil.ignore_patterns("__pycache__"))
    code = DENY_UNDER_ROOT.format(marker="torch_tensorrt_executorch_runtime/lib") + """
    try:
        import torch_tensorrt_executorch_runtime
        print("imported from", torch_tensorrt_executorch_runtime.__file__)
    except ImportError as exc:
        print(type(exc).__name__, exc)
    """
    os.chmod(copy / "lib", 0)
    try:
        result = run_python(code, env={"PYTHONPATH": str(copy.parent), "TORCH_TENSORRT_EXECUTORCH_LIBRARY": ""})
    finally:
        os.chmod(copy / "lib", stat.S_IRWXU)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("PluginLoadError cannot read the TensorRTBackend plugin"), result.stdout
    assert "Permission denied" in result.stdout and "chmod" in result.stdout


def test_unreadable_provider_library_folder_is_a_plugin_load_error(run_python, tmp_path):
    folder = tmp_path / "providers"
    folder.mkdir()
    code = DENY_UNDER_ROOT.format(marker=str(folder)) + f"""
    import torch_tensorrt_executorch_runtime as tte
    try:
        tte.register_provider_library({str(folder / "libprovider.so")!r})
    except ImportError as exc:
        print(type(exc).__name__, exc)
    """
    os.chmod(folder, 0)
    try:
        result = run_python(code)
    finally:
        os.chmod(folder, stat.S_IRWXU)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("PluginLoadError cannot read the provider library"), result.stdout
    assert "chmod" in result.stdout
