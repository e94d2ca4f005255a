"""An engine's I/O tensors in the provider protocol's terms, and what this provider refuses.

What the native provider refuses too: memory the backend does not give
(kHOST tensors other than shape tensors, NvInferRuntime.h:3105) and layouts it
does not write (anything but linear, NvInferRuntime.h:1428 kLINEAR).
"""

from __future__ import annotations

from typing import Any

from ... import _dtypes
from ...errors import NotSupportedError
from ..types import IoTensor


def describe_io_tensors(trt: Any, engine: Any) -> list[IoTensor]:
    """Every I/O tensor of `engine` (module `trt`'s ICudaEngine), in the engine's order."""
    aliased_of = getattr(engine, "get_aliased_input_tensor", None)
    shape_io = getattr(engine, "is_shape_inference_io", None)
    profiles = max(1, int(engine.num_optimization_profiles))
    tensors = []
    for index in range(engine.num_io_tensors):
        name = engine.get_tensor_name(index)
        is_input = engine.get_tensor_mode(name) == trt.TensorIOMode.INPUT
        dtype_name = getattr(engine.get_tensor_dtype(name), "name", str(engine.get_tensor_dtype(name)))
        dtype = _dtypes.from_tensorrt(dtype_name)
        if dtype is None:
            raise NotSupportedError(
                f"tensor '{name}' has TensorRT dtype {dtype_name}, which ExecuTorch cannot hold "
                f"(supported: {', '.join(_dtypes.tensorrt_names())})"
            )
        is_shape_tensor = bool(shape_io(name)) if shape_io is not None else False
        if not is_shape_tensor and _is_host_location(trt, engine, name):
            raise NotSupportedError(
                f"tensor '{name}' lives in host memory (TensorLocation.HOST); this provider binds device memory only"
            )
        for profile in range(profiles):
            problem = _format_problem(trt, engine, name, profile)
            if problem is not None:
                raise NotSupportedError(
                    f"tensor '{name}' uses TensorRT format '{problem}' in profile {profile}; only linear "
                    "(contiguous row-major) I/O is supported: build the engine with linear I/O formats"
                )
        aliased = None
        if not is_input and aliased_of is not None:
            aliased = aliased_of(name) or None
        tensors.append(
            IoTensor(
                name=name,
                is_input=is_input,
                dtype=dtype,
                rank=len(engine.get_tensor_shape(name)),
                aliased_input=aliased,
                is_shape_tensor=is_shape_tensor,
            )
        )
    return tensors


def _is_host_location(trt: Any, engine: Any, name: str) -> bool:
    location = getattr(trt, "TensorLocation", None)
    get = getattr(engine, "get_tensor_location", None)
    return location is not None and get is not None and get(name) == location.HOST


def _format_problem(trt: Any, engine: Any, name: str, profile: int) -> str | None:
    """Why tensor `name` is not linear in `profile`, or None."""
    tensor_format = getattr(trt, "TensorFormat", None)
    describe = getattr(engine, "get_tensor_format_desc", None)
    desc = describe(name, profile) if describe is not None else ""
    if tensor_format is not None and hasattr(engine, "get_tensor_format"):
        if engine.get_tensor_format(name, profile) != tensor_format.LINEAR:
            return desc or str(engine.get_tensor_format(name, profile))
        return None
    # The lean and dispatch modules have no TensorFormat enum: ask whether the
    # format packs components (vectorized formats) and what TensorRT calls it.
    vectorized = getattr(engine, "get_tensor_vectorized_dim", None)
    components = getattr(engine, "get_tensor_components_per_element", None)
    if vectorized is not None and vectorized(name, profile) != -1:
        return desc or "a vectorized format"
    if components is not None and components(name, profile) not in (-1, 1):
        return desc or "a vectorized format"
    if desc and "linear" not in desc.lower():
        return desc
    return None
