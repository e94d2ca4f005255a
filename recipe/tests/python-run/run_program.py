"""Runs a program from Python through the package's compiled binding.

Torch-free and GPU-free: the project's own writer packs a one-engine
program whose plan a host-memory Python provider (registered here) runs as
y = 2 * x + 1 with numpy. The run goes through the compiled binding
(_native/_compiled) and the plugin in the environment's lib/, found with no
environment variables; it fails where the binding is missing.
"""

import ctypes
import json
import math
import sys
import tempfile
from pathlib import Path

import numpy as np

import torch_tensorrt_executorch_runtime as tte
from torch_tensorrt_executorch_runtime._native import library, methods
from torch_tensorrt_executorch_runtime.pack import EngineSpec, TensorSpec, pack_program
from torch_tensorrt_executorch_runtime.providers import IoTensor

MAGIC = b"AFFINE-TEST-ENGINE\n"


class AffineEngine:
    """y = scale * x + shift on host memory; x is float32 [1..8, 3]."""

    def __init__(self, scale, shift):
        self.scale, self.shift = scale, shift
        self.io_tensors = [IoTensor("x", is_input=True, dtype="float32", rank=2),
                           IoTensor("y", is_input=False, dtype="float32", rank=2)]
        self.num_profiles = 1
        self.shape = None
        self.addresses = {}

    def profile_shape(self, profile, name):
        return (1, 3), (2, 3), (8, 3)

    def set_input_shape(self, name, shape):
        self.shape = tuple(shape)

    def get_output_shape(self, name):
        return self.shape

    def set_tensor_address(self, name, address):
        self.addresses[name] = address

    def enqueue(self, stream):
        count = math.prod(self.shape)
        x = np.ctypeslib.as_array((ctypes.c_float * count).from_address(self.addresses["x"]))
        y = np.ctypeslib.as_array((ctypes.c_float * count).from_address(self.addresses["y"]))
        y[:] = x * self.scale + self.shift


class AffineProvider:
    def deserialize(self, plan, device_id, options):
        data = bytes(plan)
        if not data.startswith(MAGIC):
            return None
        document = json.loads(data[len(MAGIC):])
        return AffineEngine(document["scale"], document["shift"])


def main() -> int:
    compiled = methods.compiled()  # PluginLoadError where the binding cannot be imported
    print(f"compiled binding: {compiled.__file__}")
    assert Path(compiled.__file__).name.endswith(".abi3.so"), compiled.__file__
    print(f"plugin: {library.plugin_path()}")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "affine.pte"
        plan = MAGIC + json.dumps({"scale": 2.0, "shift": 1.0}).encode()
        pack_program(path, [EngineSpec(plan, [TensorSpec("x", "float32", [(1, 2, 8), 3])],
                                       [TensorSpec("y", "float32", ["x:0", 3])])])
        name = tte.register_provider(AffineProvider(), name="affine-test", memory="host")
        try:
            program = tte.load(path, options={"provider": name})
            for rows in (2, 5):
                x = np.arange(rows * 3, dtype=np.float32).reshape(rows, 3)
                (y,) = program.forward(x)
                y = np.asarray(y)
                assert y.shape == (rows, 3), y.shape
                np.testing.assert_array_equal(y, 2 * x + 1)
            program.close()
        finally:
            tte.unregister_provider(name)
    print(f"ran a program from Python: y = 2 * x + 1 for [2, 3] and [5, 3] inputs; {methods.stats()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
