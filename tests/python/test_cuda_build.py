"""Which CUDA runtime this installation looks for: the one its build recorded.

The release wheel and conda's CUDA 13 builds link libcudart.so.13 from the
nvidia-cuda-runtime wheel; the JetPack 6 build (CUDA 12) links JetPack's own
libcudart.so.12, which no pip wheel may stand in for.
"""

from __future__ import annotations

import importlib.metadata

from torch_tensorrt_executorch_runtime import _native
from torch_tensorrt_executorch_runtime._native import library
from torch_tensorrt_executorch_runtime.cli import doctor


def test_the_build_records_the_cuda_major_the_plugin_links():
    from torch_tensorrt_executorch_runtime._generated import build_config

    assert _native.CUDA_MAJOR == build_config.CUDA_MAJOR
    assert _native.CUDA_RUNTIME_FILE == f"libcudart.so.{build_config.CUDA_MAJOR}"
    # The wheel built here (scripts/build.sh, no TTE_JETPACK) is the CUDA 13 one.
    if "+cu126" not in importlib.metadata.version("torch-tensorrt-executorch-runtime"):
        assert build_config.CUDA_MAJOR == 13


def test_the_cuda_13_build_finds_the_wheels_runtime():
    found = _native.cuda_runtime_candidates()
    assert found and all(p.name == "libcudart.so.13" for p in found)
    assert doctor._cuda_runtime_hint() == "pip install 'nvidia-cuda-runtime>=13.0,<14'"


def test_the_jetpack6_build_never_takes_a_pip_cuda_runtime(monkeypatch, tmp_path):
    """With the CUDA 12 build's values, a pip CUDA 12 runtime that is installed is not looked
    for, and doctor sends the user to JetPack for it."""
    import importlib.machinery

    wheel = tmp_path / "nvidia" / "cuda_runtime" / "lib"
    wheel.mkdir(parents=True)
    (wheel / "libcudart.so.12").write_bytes(b"")
    spec = importlib.machinery.ModuleSpec("nvidia", None, is_package=True)
    spec.submodule_search_locations = [str(tmp_path / "nvidia")]
    monkeypatch.setattr(library.importlib.util, "find_spec", lambda name: spec if name == "nvidia" else None)
    monkeypatch.setattr(library, "CUDA_MAJOR", 12)
    monkeypatch.setattr(library, "CUDA_RUNTIME_FILE", "libcudart.so.12")
    # The stand-in wheel is visible to the search...
    monkeypatch.setattr(library, "CUDA_RUNTIME_FROM_WHEELS", True)
    assert library.cuda_runtime_candidates() == [wheel / "libcudart.so.12"]
    # ...and the JetPack 6 build does not take it.
    monkeypatch.setattr(library, "CUDA_RUNTIME_FROM_WHEELS", False)
    monkeypatch.setattr(_native, "CUDA_RUNTIME_FROM_WHEELS", False)
    assert library.cuda_runtime_candidates() == []
    assert "JetPack 6" in doctor._cuda_runtime_hint() and "nvidia-jetpack" in doctor._cuda_runtime_hint()
