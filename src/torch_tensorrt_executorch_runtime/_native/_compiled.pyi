"""Types of the compiled extension (built from cpp/python/, an abi3 module).

Kept by hand: each name below mirrors the C definition named beside it.
"""

from collections.abc import Callable
from typing import Any, final

from typing_extensions import CapsuleType

C_API_VERSION: int  # module.c

@final
class Method:  # method.c
    """A loaded method of an open program."""

    def __new__(cls, program: int, name: str) -> Method: ...
    @property
    def name(self) -> str: ...
    @property
    def num_inputs(self) -> int: ...
    @property
    def num_outputs(self) -> int: ...
    # inputs: a tuple or list of tensors and scalars, or one tensor; stream: a
    # cudaStream_t as int or None. The outputs: tensors of the inputs' library,
    # ints, floats, bools and None.
    def run(self, inputs: object, stream: int | None, copy: bool, /) -> list[Any]: ...

@final
class Output:  # output.c
    """One tensor output of a run, consumable once through `from_dlpack`."""

    @property
    def device(self) -> tuple[int, int]: ...
    @property
    def shape(self) -> tuple[int, ...]: ...
    def __dlpack__(
        self,
        *,
        stream: object = None,
        max_version: tuple[int, int] | None = None,
        dl_device: tuple[int, int] | None = None,
        copy: bool | None = None,
    ) -> CapsuleType: ...
    def __dlpack_device__(self) -> tuple[int, int]: ...
    def release(self) -> None: ...

# module.c
def bind(
    plugin_path: str,
    error_for_status: Callable[[int, str], BaseException],
    stream_of: Callable[[Any], int | None],
    convert_outputs: Callable[[Any, list[Any], str], list[Any]],
    /,
) -> None: ...
def stats() -> dict[str, int]: ...
def exchange_api_version(tensor_type: type, /) -> tuple[int, int] | None: ...

# provider_bridge.c
def engine_new(adapter: object, /) -> int: ...
def engine_free(handle: int, /) -> None: ...
def provider_execute(failure_of: Callable[..., Any], /) -> int: ...
