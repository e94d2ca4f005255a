"""Data-dependent outputs: TensorRT's IOutputAllocator and what it saw during one enqueue.

An output whose shape is known only once the engine ran (nonzero, masking,
NMS) gets its memory from an output allocator: TensorRT asks it for memory
and tells it the shape. The bound buffer is used when the request fits;
past it, memory comes from the provider's device memory (grown, never shrunk,
freed when the engine closes).
"""

from __future__ import annotations

from typing import Any

from ...errors import ExecutionError


class OutputResult:
    """What the output allocator of one data-dependent output saw during one enqueue."""

    def __init__(self, own_memory: Any):
        self.own_memory = own_memory  # grown past the bound, never shrunk; freed at close
        self.capacity = 0
        self.address = 0
        self.shape: tuple[int, ...] | None = None
        self.failure = ""

    def reset(self, capacity: int) -> None:
        self.capacity, self.address, self.shape, self.failure = int(capacity), 0, None, ""

    def memory_for(self, name: str, current: int, size: int, alignment: int) -> int:
        """reallocateOutputAsync's answer: the bound buffer when the request fits ("If currentMemory
        is known to be big enough, one option is to return currentMemory", NvInferRuntime.h 11.1
        :3855-3882), else memory of our own; 0 (TensorRT's nullptr: the enqueue fails) with the
        reason kept when none can be had. Never raises: TensorRT calls it from C++ (noexcept)."""
        try:
            alignment = max(int(alignment), 1)
            if current and size <= self.capacity and current % alignment == 0:
                self.address = int(current)
            else:
                address = int(self.own_memory.reserve(int(size)))
                if address % alignment:
                    raise ExecutionError(f"memory at {address:#x} is not aligned to {alignment} bytes")
                self.address = address
            return self.address
        except BaseException as exc:  # noqa: BLE001 (TensorRT's C++ caller cannot take an exception)
            self.failure = f"no memory for output '{name}' ({size} bytes): {exc}"
            self.address = 0
            return 0

    def notify(self, shape: Any) -> None:
        try:
            self.shape = tuple(int(d) for d in shape)
        except BaseException as exc:  # noqa: BLE001 (called from C++)
            self.failure = f"TensorRT reported an unreadable shape: {exc}"


def make_output_allocator(trt: Any, result: OutputResult) -> Any:
    """Module `trt`'s IOutputAllocator over `result`."""

    class _OutputAllocator(trt.IOutputAllocator):
        def __init__(self) -> None:
            trt.IOutputAllocator.__init__(self)

        def reallocate_output_async(self, tensor_name: str, memory: Any, size: int, alignment: int, stream: Any) -> int:
            return result.memory_for(tensor_name, int(memory or 0), int(size), int(alignment))

        # TensorRT 9's name, which the 10.x bindings call when the async one is not overridden.
        def reallocate_output(self, tensor_name: str, memory: Any, size: int, alignment: int) -> int:
            return result.memory_for(tensor_name, int(memory or 0), int(size), int(alignment))

        def notify_shape(self, tensor_name: str, shape: Any) -> None:
            result.notify(shape)

    return _OutputAllocator()
