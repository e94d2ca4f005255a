"""What Triton's model and KServe's model share: a program loaded with the
provider options, a request's tensors by name checked against its method,
and the run.

Tensors are numpy arrays (host) or anything with `__dlpack__` (torch, on
the device too): the Program API takes either and answers in the inputs'
library, on the device the program produced the outputs on.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..program import load
from ..providers import providers, register_provider_library
from .signature import MethodSignature, method_signature


class RequestError(ValueError):
    """A request the method cannot take (missing or unknown input names); the server answers it with this text."""


def register_provider_libraries(libraries: Sequence[str | os.PathLike], provider: str | None = None) -> None:
    """Load provider libraries, unless `provider` is named and already registered (a process that
    serves or writes several models loads its library once: loading it again is refused)."""
    if provider is not None and provider in providers():
        return
    for library in libraries:
        register_provider_library(library)


class ServedProgram:
    """A `.pte` opened for serving one method."""

    def __init__(
        self,
        path: str | os.PathLike,
        *,
        method: str = "forward",
        provider: str | None = None,
        provider_libraries: Sequence[str | os.PathLike] = (),
    ):
        self.path = Path(path)
        register_provider_libraries(provider_libraries, provider)
        options = {"provider": provider} if provider else None
        self.program = load(self.path, options=options)
        self.signature: MethodSignature = method_signature(self.program, self.path, method)
        # Load the engines now: a program that cannot load fails here, not at the first request.
        self.program.load_method(method)

    @property
    def input_names(self) -> tuple[str, ...]:
        return tuple(t.name for t in self.signature.inputs)

    @property
    def output_names(self) -> tuple[str, ...]:
        return tuple(t.name for t in self.signature.outputs)

    def ordered_inputs(self, named: Mapping[str, object]) -> list:
        """The request's tensors in the method's input order."""
        expected = self.input_names
        missing = [n for n in expected if n not in named]
        unknown = [n for n in named if n not in expected]
        if missing or unknown:
            found = ", ".join(named) or "none"
            raise RequestError(
                f"method '{self.signature.method}' takes the inputs {', '.join(expected)}; the request has {found}"
                + (f" (missing: {', '.join(missing)})" if missing else "")
                + (f" (unknown: {', '.join(unknown)})" if unknown else "")
            )
        return [named[n] for n in expected]

    def run(self, inputs: Sequence) -> dict[str, Any]:
        """Run the method on inputs in its order; outputs (in the inputs' library) by name."""
        outputs = self.program.run(list(inputs), self.signature.method)
        return dict(zip(self.output_names, outputs, strict=False))

    def close(self) -> None:
        self.program.close()
