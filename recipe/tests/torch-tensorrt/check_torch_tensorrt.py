"""The torch-tensorrt package's test: the package imports, its runtime library
registers with torch, every library it ships is for this machine and links
only what the package declares, and its ExecuTorch serialization writes a blob
the plugin's reader accepts.

`import torch_tensorrt` asks torch for the GPU's compute capability and the
current device (torch_tensorrt._utils.is_tegra_platform and
dynamo._defaults.default_device). On a machine without an NVIDIA driver this
test answers those two queries itself, as a GPU of compute capability 9.0
would; with a driver it leaves torch alone.

Usage: check_torch_tensorrt.py [VERSION]
       check_torch_tensorrt.py --links-only PACKAGE_DIR --machine aarch64
The second form runs the library checks alone on an installed torch_tensorrt
folder, importing nothing: the offline build checks its cross-built
linux-aarch64 package with it, whose torch cannot be imported there.
"""

from __future__ import annotations

import argparse
import importlib.util
import pathlib
import platform
import struct
import sys

# ELF e_machine of each platform.machine() the package is built for.
ELF_MACHINES = {"x86_64": 62, "aarch64": 183}

# Every shared library links only the package's declared run requirements
# (pytorch, libnvinfer, libnvinfer-plugin, the CUDA runtime) and the C/C++
# runtime (glibc's loader too: on aarch64 the stack protector's guard is its).
DECLARED = {
    "libc10.so", "libc10_cuda.so", "libtorch.so", "libtorch_cpu.so", "libtorch_cuda.so",
    "libnvinfer.so.11", "libnvinfer_plugin.so.11", "libcudart.so.13", "libcudart.so.12",
    "libstdc++.so.6", "libgcc_s.so.1", "libc.so.6", "libm.so.6",
    "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1",
}


def elf_machine_and_needed(path: pathlib.Path) -> tuple[int, set[str]]:
    """e_machine and DT_NEEDED of a little-endian ELF64 shared library (no binutils in the test environment)."""
    data = path.read_bytes()
    if not (data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1):
        raise SystemExit(f"{path}: not a little-endian ELF64 file")
    machine, = struct.unpack_from("<H", data, 0x12)
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    SHT_DYNAMIC, DT_NEEDED = 6, 1
    needed = set()
    for _name, kind, _flags, _addr, offset, size, link, _info, _align, _entsize in sections:
        if kind != SHT_DYNAMIC:
            continue
        strtab = sections[link][4]
        for entry in range(offset, offset + size, 16):
            tag, value = struct.unpack_from("<qQ", data, entry)
            if tag == DT_NEEDED:
                needed.add(data[strtab + value:data.index(b"\0", strtab + value)].decode())
    return machine, needed


def check_libraries(package: pathlib.Path, machine: str) -> None:
    """Every shared library under `package` is an ELF file for `machine` and links only DECLARED."""
    if machine not in ELF_MACHINES:
        raise SystemExit(f"no ELF machine known for {machine!r}; expected one of {sorted(ELF_MACHINES)}")
    runtime = package / "lib" / "libtorchtrt_runtime.so"
    if not runtime.is_file():
        raise SystemExit(f"{runtime} is missing")
    for so in sorted(package.rglob("*.so*")):
        found, needed = elf_machine_and_needed(so)
        assert found == ELF_MACHINES[machine], \
            f"{so.name} is for ELF machine {found}, expected {ELF_MACHINES[machine]} ({machine})"
        undeclared = needed - DECLARED
        assert not undeclared, f"{so.name} links what the package does not declare: {sorted(undeclared)}"
        print(f"{so.relative_to(package)} ({machine}): links {sorted(needed)}")


def check_package(expected_version: str | None) -> None:
    import torch

    if not torch.cuda.is_available():
        torch.cuda.get_device_capability = lambda device=None: (9, 0)
        torch.cuda.current_device = lambda: 0
        print("no CUDA device: torch's device queries answer as a compute capability 9.0 GPU")

    import torch_tensorrt
    from torch_tensorrt._features import ENABLED_FEATURES

    if expected_version:
        assert torch_tensorrt.__version__ == expected_version, torch_tensorrt.__version__
    print(f"torch_tensorrt {torch_tensorrt.__version__} on torch {torch.__version__}")

    # The runtime library: present, registered, and what _save_as_executorch requires.
    package = pathlib.Path(importlib.util.find_spec("torch_tensorrt").submodule_search_locations[0])
    runtime = package / "lib" / "libtorchtrt_runtime.so"
    assert runtime.is_file(), f"{runtime} is missing"
    assert ENABLED_FEATURES.torch_tensorrt_runtime, "torch_tensorrt does not see its runtime library"
    assert hasattr(torch.ops.tensorrt, "execute_engine"), "libtorchtrt_runtime.so did not register its operators"
    print(f"{runtime.name}: loaded, torch.ops.tensorrt.execute_engine registered")

    check_libraries(package, platform.machine())

    # Torch-TensorRT's ExecuTorch serialization, read back by the plugin's blob reader.
    # torch_tensorrt.executorch gives access to its modules only with ExecuTorch's
    # Python package (executorch.exir, PyPI's; not a conda package) installed; its
    # serialization module needs nothing of it, so it is loaded from its file.
    spec = importlib.util.spec_from_file_location("torch_tensorrt_blob_serialization",
                                                  package / "executorch" / "serialization.py")
    serialization = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = serialization
    spec.loader.exec_module(serialization)
    from torch_tensorrt_executorch_runtime._native.plugin import describe_blob

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("version", nargs="?", help="the torch_tensorrt version the package must report")
    parser.add_argument("--links-only", metavar="PACKAGE_DIR", type=pathlib.Path,
                        help="only check the libraries of this installed torch_tensorrt folder; import nothing")
    parser.add_argument("--machine", choices=sorted(ELF_MACHINES),
                        help="the machine the libraries are for (with --links-only; default: this one)")
    args = parser.parse_args()
    if args.links_only is None:
        if args.machine is not None:
            parser.error("--machine goes with --links-only: the full test checks this machine's libraries")
        check_package(args.version)
        return
    if not args.links_only.is_dir():
        parser.error(f"{args.links_only} is not a folder (expected an installed torch_tensorrt package)")
    check_libraries(args.links_only, args.machine or platform.machine())


if __name__ == "__main__":
    main()
