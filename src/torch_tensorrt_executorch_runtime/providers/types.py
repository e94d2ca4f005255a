"""The types of the Python engine-provider protocol (see `providers`).

A provider's `deserialize` returns an `Engine` that lists its `IoTensor`s;
`EngineLoadOptions` is what the backend passes besides the plan. Standard
library only: the binding and the providers both build on these.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Protocol, runtime_checkable


@dataclasses.dataclass(frozen=True)
class IoTensor:
    """One I/O tensor of an engine, in the engine's own order."""

    name: str
    is_input: bool
    dtype: str | int  # an ExecuTorch ScalarType name ("float32") or value
    rank: int
    # For an output the engine writes into one of its inputs in place
    # (TensorRT KV-cache update): that input's name.
    aliased_input: str | None = None
    is_shape_tensor: bool = False


@dataclasses.dataclass(frozen=True)
class EngineLoadOptions:
    """What the backend passes to `deserialize` besides the plan (the load options of docs/python.md)."""

    device_id: int
    # Bytes of weights to keep on the device (load option, else compile spec).
    weight_streaming_budget: int | None = None
    # False: refuse plans that carry host code (version-compatible plans embed
    # the lean runtime); the default allows it, as trtexec and Polygraphy do.
    engine_host_code_allowed: bool = True
    # The DLA core to run the engine on (Jetson), None for the GPU.
    dla_core: int | None = None
    # Plugin libraries to load into the runtime before deserializing.
    plugin_libraries: tuple[str, ...] = ()
    # TensorRT-RTX: a file that keeps compiled kernels between processes.
    runtime_cache_path: str | None = None


@runtime_checkable
class Engine(Protocol):
    io_tensors: Sequence[IoTensor]
    num_profiles: int

    def profile_shape(self, profile: int, name: str) -> tuple[Sequence[int], Sequence[int], Sequence[int]]:
        """(min, opt, max) dims of input `name` in optimization profile `profile`."""

    def set_input_shape(self, name: str, shape: tuple[int, ...]) -> None: ...

    def get_output_shape(self, name: str) -> Sequence[int]:
        """After all input shapes are set."""

    def set_tensor_address(self, name: str, address: int) -> None: ...

    def enqueue(self, stream: int | None) -> None:
        """Launch the engine on `stream` (a cudaStream_t as int; None for host providers)."""

    # Optional: select_profile(profile: int, stream: int | None) -> None,
    # capturable(stream: int) -> bool (asked before a CUDA-graph capture;
    # absent: capturable), and close() -> None (called when the backend
    # destroys the engine).
    #
    # Data-dependent outputs (get_output_shape answers -1 for a dim known only
    # after the run, as TensorRT does for nonzero): both of
    # set_output_capacity(name: str, nbytes: int) -> None, before each
    # enqueue: the address set for the output holds `nbytes` (its upper
    # bound); and output_result(name: str) -> (shape, address), after it: the
    # shape written and where, the address set when it fit, else memory the
    # engine owns (kept until its next enqueue; never a truncated result).
    # Without them such an engine fails at its first run, saying so.


@runtime_checkable
class EngineProvider(Protocol):
    def deserialize(self, plan: memoryview, device_id: int, options: EngineLoadOptions) -> Engine | None:
        """Return an engine, or None / raise NotAcceptedError for a plan in another format."""

    # Optional: describe_runtime() -> str, one line for `doctor` about the
    # runtime it uses; create_execution_context(engine, options) -> Engine,
    # another engine object on what `engine` deserialized (its own execution
    # contexts, profile, shapes and addresses; `options` as for deserialize,
    # whose engine-wide fields of the first load stay in force). With it the
    # backend deserializes a plan once per process and device and gives each
    # further load of it such an engine (load option share_engines); the
    # deserialized engine must live until the last engine object on it is
    # closed, in any order.
