"""The torch-tensorrt package's test: the package imports, its runtime library
registers with torch and links only what the package declares, and its
ExecuTorch serialization writes a blob the plugin's reader accepts.

`import torch_tensorrt` asks torch for the GPU's compute capability and the
current device (torch_tensorrt._utils.is_tegra_platform and
dynamo._defaults.default_device). On a machine without an NVIDIA driver this
test answers those two queries itself, as a GPU of compute capability 9.0
would; with a driver it leaves torch alone.
"""

from __future__ import annotations

import importlib.util
import pathlib
import struct
import sys

import torch

if not torch.cuda.is_available():
    torch.cuda.get_device_capability = lambda device=None: (9, 0)
    torch.cuda.current_device = lambda: 0
    print("no CUDA device: torch's device queries answer as a compute capability 9.0 GPU")

import torch_tensorrt  # noqa: E402
from torch_tensorrt._features import ENABLED_FEATURES  # noqa: E402

EXPECTED_VERSION = sys.argv[1] if len(sys.argv) > 1 else None
if EXPECTED_VERSION:
    assert torch_tensorrt.__version__ == EXPECTED_VERSION, torch_tensorrt.__version__
print(f"torch_tensorrt {torch_tensorrt.__version__} on torch {torch.__version__}")

# The runtime library: present, registered, and what _save_as_executorch requires.
package = pathlib.Path(importlib.util.find_spec("torch_tensorrt").submodule_search_locations[0])
runtime = package / "lib" / "libtorchtrt_runtime.so"
assert runtime.is_file(), f"{runtime} is missing"
assert ENABLED_FEATURES.torch_tensorrt_runtime, "torch_tensorrt does not see its runtime library"
assert hasattr(torch.ops.tensorrt, "execute_engine"), "libtorchtrt_runtime.so did not register its operators"
print(f"{runtime.name}: loaded, torch.ops.tensorrt.execute_engine registered")


def needed_libraries(path: pathlib.Path) -> set[str]:
    """DT_NEEDED of a little-endian ELF64 shared library (no binutils in the test environment)."""
    data = path.read_bytes()
    assert data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1, f"{path}: not a little-endian ELF64 file"
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    SHT_DYNAMIC, DT_NEEDED = 6, 1
    out = set()
    for _name, kind, _flags, _addr, offset, size, link, _info, _align, _entsize in sections:
        if kind != SHT_DYNAMIC:
            continue
        strtab = sections[link][4]
        for entry in range(offset, offset + size, 16):
            tag, value = struct.unpack_from("<qQ", data, entry)
            if tag == DT_NEEDED:
                out.add(data[strtab + value:data.index(b"\0", strtab + value)].decode())
    return out


# Every shared library links only the package's declared run requirements
# (pytorch, libnvinfer, libnvinfer-plugin, the CUDA runtime) and the C/C++ runtime.
DECLARED = {
    "libc10.so", "libc10_cuda.so", "libtorch.so", "libtorch_cpu.so", "libtorch_cuda.so",
    "libnvinfer.so.11", "libnvinfer_plugin.so.11", "libcudart.so.13", "libcudart.so.12",
    "libstdc++.so.6", "libgcc_s.so.1", "libc.so.6", "libm.so.6",
}
for so in sorted(package.rglob("*.so*")):
    needed = needed_libraries(so)
    undeclared = needed - DECLARED
    assert not undeclared, f"{so.name} links what the package does not declare: {sorted(undeclared)}"
    print(f"{so.relative_to(package)}: links {sorted(needed)}")

# Torch-TensorRT's ExecuTorch serialization, read back by the plugin's blob reader.
# torch_tensorrt.executorch gives access to its modules only with ExecuTorch's
# Python package (executorch.exir, PyPI's; not a conda package) installed; its
# serialization module needs nothing of it, so it is loaded from its file.
spec = importlib.util.spec_from_file_location("torch_tensorrt_blob_serialization",
                                              package / "executorch" / "serialization.py")
serialization = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = serialization
spec.loader.exec_module(serialization)
from torch_tensorrt_executorch_runtime._native.plugin import describe_blob  # noqa: E402

engine = bytes(range(256)) * 4  # engine-shaped: the reader does not deserialize it
metadata = serialization.TensorRTBlobMetadata(
    io_bindings=[serialization.TensorRTIOBinding(name="x", dtype="float32", shape=[2, 3], is_input=True),
                 serialization.TensorRTIOBinding(name="y", dtype="float32", shape=[2, 3], is_input=False)])
blob = serialization.serialize_engine(engine, metadata)
described = describe_blob(blob)
print(f"blob of {len(blob)} bytes ({blob[:4].decode()}), read back: {described}")
assert described["magic"] == "TR01", described
assert described["engine_size"] == len(engine), described
names = [(b["name"], b["is_input"]) for b in described["io_bindings"]]
assert names == [("x", True), ("y", False)], names
