"""Runs a program from Python through the package's compiled binding.

Torch-free and GPU-free: the program is tests/fixtures/cpp/add_one_dynamic.pte
(one TensorRTBackend delegate whose plan is a test engine, y = x + 1 for a
float32 x of [1..8, 4]; docs/test-engine-format.md); a host-memory Python
provider registered here runs that plan with numpy. tte.load(...).forward(x)
goes through the compiled binding (_native/_compiled) and the plugin in the
environment's lib/, found with no environment variables; without the
binding it raises PluginLoadError.

Usage: python run_program.py [PROGRAM.pte]
"""

import ctypes
import math
import sys
from pathlib import Path

import numpy as np

import torch_tensorrt_executorch_runtime as tte
from torch_tensorrt_executorch_runtime._native import library, methods
from torch_tensorrt_executorch_runtime.providers import IoTensor
from torch_tensorrt_executorch_runtime.testing import MAGIC, parse_test_engine

PROGRAM = Path("tests/fixtures/cpp/add_one_dynamic.pte")


class AddOneEngine:
    """The test engine's add_one op on host memory: y = x + 1 (float32)."""

    def __init__(self, document):
        self.tensors = document["tensors"]
        (self.x,) = [t for t in self.tensors if t["is_input"]]
        (self.y,) = [t for t in self.tensors if not t["is_input"]]
        assert self.x["dtype"] == self.y["dtype"] == "float32", document
        profile = self.x["profiles"][0]
        self.io_tensors = [IoTensor(t["name"], is_input=t["is_input"], dtype=t["dtype"], rank=len(profile["min"]))
                           for t in self.tensors]
        self.num_profiles = 1
        self.profile = tuple(tuple(profile[k]) for k in ("min", "opt", "max"))
        self.shape = None
        self.addresses = {}

    def profile_shape(self, profile, name):
        return self.profile

    def set_input_shape(self, name, shape):
        self.shape = tuple(shape)

    def get_output_shape(self, name):
        return self.shape

    def set_tensor_address(self, name, address):
        self.addresses[name] = address

    def enqueue(self, stream):
        count = math.prod(self.shape)
        x = np.ctypeslib.as_array((ctypes.c_float * count).from_address(self.addresses[self.x["name"]]))
        y = np.ctypeslib.as_array((ctypes.c_float * count).from_address(self.addresses[self.y["name"]]))
        y[:] = x + 1


class TestEngineProvider:
    def deserialize(self, plan, device_id, options):
        if not bytes(plan[: len(MAGIC)]) == MAGIC:
            return None
        document = parse_test_engine(bytes(plan))
        assert document["op"] == "add_one", document["op"]
        return AddOneEngine(document)


def main(argv) -> int:
    program_path = Path(argv[1]) if len(argv) > 1 else PROGRAM
    compiled = methods.compiled()  # PluginLoadError where the binding cannot be imported
    print(f"compiled binding: {compiled.__file__}")
    assert Path(compiled.__file__).name.endswith(".abi3.so"), compiled.__file__
    print(f"plugin: {library.plugin_path()}")
    name = tte.register_provider(TestEngineProvider(), name="py-test-engine", memory="host")
    try:
        program = tte.load(program_path, options={"provider": name})
        for rows in (2, 5):
            x = np.arange(rows * 4, dtype=np.float32).reshape(rows, 4)
            (y,) = program.forward(x)
            y = np.asarray(y)
            assert y.shape == (rows, 4), y.shape
            np.testing.assert_array_equal(y, x + 1)
        program.close()
    finally:
        tte.unregister_provider(name)
    print(f"ran {program_path.name} from Python: y = x + 1 for [2, 4] and [5, 4] inputs; {methods.stats()}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
