"""`TritonPythonModel`: a program served by Triton's Python backend.

The repository's `model.py` (`triton_repository`) imports this class; the
Python backend's stub runs it, with `triton_python_backend_utils` importable
there only, so that module is imported in `initialize`. Tensors cross through
DLPack: host tensors as numpy arrays, device tensors (the config asks for them
on KIND_GPU) as torch tensors, so they stay on the device; outputs go back
through `Tensor.from_dlpack`, on the device they are on. A bad request gets a
`TritonError` with the package's text and the instance keeps serving; a
program that cannot load fails `initialize`.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys
from pathlib import Path

from . import request_batching
from .served_program import ServedProgram
from .triton_config import METHOD, PROGRAM_FILE, PROVIDER, PROVIDER_LIBRARIES

_KDL_CPU = 1
_KDL_CUDA = 2


def _placement(value) -> str:
    kind, index = value.__dlpack_device__()
    return {_KDL_CPU: "cpu", _KDL_CUDA: f"cuda:{index}"}.get(int(kind), f"DLPack device ({int(kind)}, {index})")


_CONSUMED = ctypes.c_char_p(b"used_dltensor")  # kept for the process: capsules point at it
_capsule_api = ctypes.pythonapi
_capsule_api.PyCapsule_GetName.restype = ctypes.c_char_p
_capsule_api.PyCapsule_GetName.argtypes = [ctypes.py_object]
_capsule_api.PyCapsule_SetName.restype = ctypes.c_int
_capsule_api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]


def _mark_consumed(capsule) -> None:
    """Give a DLPack capsule a consumer took (renamed away from "dltensor") the standard consumed name."""
    name = _capsule_api.PyCapsule_GetName(capsule)
    if name not in (b"dltensor", b"used_dltensor"):
        _capsule_api.PyCapsule_SetName(capsule, _CONSUMED)


def _use_device(device: int) -> None:
    """Make the instance's GPU current, where delegates that record no device (-1) load."""
    try:
        import torch
    except ImportError:
        return
    if torch.cuda.is_available():
        torch.cuda.set_device(device)


def _end_stub_after_device_outputs() -> None:
    """End this instance's stub process now that the model is finalized.

    The first device output an instance returns makes the server share its CUDA memory pool
    with the stub (python_backend's `ShareCUDAMemoryPool`); in the Python backend releases
    before r26.07, the stub thread that waits for that handshake can miss its wake-up and wait
    forever (removed upstream by python_backend PR #439, whose description names occasional
    hangs when a model first returns GPU tensors; first in r26.07). The stub then never exits
    after `finalize`: its main thread joins that thread, the server waits for the process,
    and an unloaded model keeps its memory until the stub is killed. By the time `finalize`
    runs the stub has answered the server's finalize request and the server only waits for
    the process to end, so ending it here loses nothing but the stub's own clean-up, which
    the process exit does.
    """
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # a closed or broken stream: nothing left to keep
            pass
    os._exit(0)


class TritonPythonModel:
    def initialize(self, args):
        import triton_python_backend_utils as pb_utils

        self._pb = pb_utils
        config = json.loads(args["model_config"])
        parameters = {k: v.get("string_value", "") for k, v in config.get("parameters", {}).items()}
        self._max_batch = int(config.get("max_batch_size", 0))
        self._placements_logged: set[str] = set()
        self._device_outputs = False
        folder = Path(args["model_repository"]) / args["model_version"]
        name = args["model_name"]
        if PROGRAM_FILE not in parameters:
            raise pb_utils.TritonModelException(
                f"model '{name}': its config.pbtxt has no parameter '{PROGRAM_FILE}' naming the program; "
                "write the repository with torch-tensorrt-executorch triton-repo"
            )
        if args.get("model_instance_kind") == "GPU":
            _use_device(int(args.get("model_instance_device_id", 0)))
        try:
            self._served = ServedProgram(
                folder / parameters[PROGRAM_FILE],
                method=parameters.get(METHOD, "forward"),
                provider=parameters.get(PROVIDER) or None,
                provider_libraries=json.loads(parameters.get(PROVIDER_LIBRARIES) or "[]"),
            )
        except Exception as exc:
            raise pb_utils.TritonModelException(
                f"model '{name}': cannot serve {folder / parameters[PROGRAM_FILE]}: {exc}"
            ) from exc

    # -- tensors across the Python backend

    def _from_triton(self, tensor):
        # DLPack both ways: the stubs nvidia-pytriton ships were built for numpy 1, and with
        # numpy 2 Tensor.as_numpy() reads every element as the first one (seen), while the
        # DLPack path reads the same memory right.
        if tensor.is_cpu():
            import numpy

            return numpy.from_dlpack(tensor)
        import torch

        return torch.from_dlpack(tensor)

    def _to_triton(self, name: str, value):
        if type(value).__module__ == "numpy":
            import numpy

            return self._numpy_to_triton(name, numpy.ascontiguousarray(value))
        if type(value).__module__.startswith("torch"):
            value = value.contiguous()
        if int(value.__dlpack_device__()[0]) == _KDL_CUDA:
            self._device_outputs = True
        return self._pb.Tensor.from_dlpack(name, value)

    def _numpy_to_triton(self, name: str, array):
        # The stub takes ownership of a DLPack capsule by renaming it, but not to the name the
        # DLPack protocol gives consumed capsules ("used_dltensor"); numpy's capsule destructor
        # then takes the capsule for an unconsumed one, fails to read it and prints a traceback
        # for every output of every response (the stub frees the tensor itself, so nothing
        # leaks). Marking the capsule consumed the standard way keeps the server's log clean.
        capsule = array.__dlpack__()
        tensor = self._pb.Tensor.from_dlpack(name, capsule)
        _mark_consumed(capsule)
        return tensor

    def _request_inputs(self, request) -> list:
        named = {}
        for name in self._served.input_names:
            tensor = self._pb.get_input_tensor_by_name(request, name)
            if tensor is not None:
                named[name] = self._from_triton(tensor)
        return self._served.ordered_inputs(named)

    # -- requests

    def _response(self, outputs: dict):
        return self._pb.InferenceResponse(output_tensors=[self._to_triton(n, v) for n, v in outputs.items()])

    def _error(self, exc: BaseException):
        return self._pb.InferenceResponse(error=self._pb.TritonError(f"{type(exc).__name__}: {exc}"))

    def _run_one(self, inputs: list):
        try:
            outputs = self._served.run(inputs)
            self._log_placement(inputs, outputs)
            return self._response(outputs)
        except Exception as exc:
            return self._error(exc)

    def _log_placement(self, inputs, outputs) -> None:
        # Each placement once per instance: where tensors were, for operators (and the GPU check).
        text = (
            "torch-tensorrt-executorch: inputs on "
            + ", ".join(_placement(v) for v in inputs)
            + "; outputs on "
            + ", ".join(_placement(v) for v in outputs.values())
        )
        if text not in self._placements_logged:
            self._placements_logged.add(text)
            self._pb.Logger.log_info(text)

    def _run_batched(self, indexed: list[tuple[int, list]], responses: list) -> None:
        sizes = [request_batching.rows(inputs[0]) for _, inputs in indexed]
        try:
            outputs = self._served.run(request_batching.concatenate([inputs for _, inputs in indexed]))
            names = list(outputs)
            per_request = request_batching.split(list(outputs.values()), sizes)
        except Exception:
            # One request may be at fault: run each alone, so each gets its own answer.
            for i, inputs in indexed:
                responses[i] = self._run_one(inputs)
            return
        self._log_placement(indexed[0][1], outputs)
        for (i, _), parts in zip(indexed, per_request, strict=True):
            responses[i] = self._response(dict(zip(names, parts, strict=True)))

    def execute(self, requests):
        responses = [None] * len(requests)
        ready = []
        for i, request in enumerate(requests):
            try:
                ready.append((i, self._request_inputs(request)))
            except Exception as exc:
                responses[i] = self._error(exc)
        if self._max_batch > 0 and len(ready) > 1:
            self._run_batched(ready, responses)
        else:
            for i, inputs in ready:
                responses[i] = self._run_one(inputs)
        return responses

    def finalize(self):
        served = getattr(self, "_served", None)
        if served is not None:
            served.close()
        if getattr(self, "_device_outputs", False):
            _end_stub_after_device_outputs()
