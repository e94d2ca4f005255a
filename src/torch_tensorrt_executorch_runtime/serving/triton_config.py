"""A Triton `config.pbtxt` (protobuf text format) from a method's signature.

The model runs on Triton's Python backend (`model.py`, `triton_model`),
which reads the program's file name, method and provider options from the
config's `parameters`. With `max_batch` > 0, Triton's dims leave out dim 0
(the batch) and its dynamic batcher groups requests; with 0, every dim is
declared and requests run one by one.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from .signature import MethodSignature, ServedTensor

INSTANCE_KINDS = ("KIND_CPU", "KIND_GPU")
# Parameter keys model.py reads (triton_model.py).
PROGRAM_FILE = "tte_program"
METHOD = "tte_method"
PROVIDER = "tte_provider"
PROVIDER_LIBRARIES = "tte_provider_libraries"


def _quoted(text: str) -> str:
    return json.dumps(text)  # protobuf text format takes C-style escapes, which JSON's are a subset of


def _tensor_entry(tensor: ServedTensor, batched: bool) -> str:
    dims = tensor.dims[1:] if batched else tensor.dims
    bound = f"  # program's upper bound: {list(tensor.upper_bound)}" if -1 in tensor.dims else ""
    return (
        f"  {{\n    name: {_quoted(tensor.name)}\n    data_type: TYPE_{tensor.datatype}\n"
        f"    dims: [ {', '.join(str(d) for d in dims)} ]{bound}\n  }}"
    )


def _parameter(key: str, value: str) -> str:
    return f"parameters: {{\n  key: {_quoted(key)}\n  value: {{ string_value: {_quoted(value)} }}\n}}"


def config_pbtxt(
    name: str,
    signature: MethodSignature,
    *,
    program_file: str,
    instances: int = 1,
    kind: str = "KIND_GPU",
    max_batch: int = 0,
    provider: str | None = None,
    provider_libraries: Sequence[str] = (),
    extra_parameters: Mapping[str, str] | None = None,
) -> str:
    if kind not in INSTANCE_KINDS:
        raise ValueError(f"instance kind must be one of {', '.join(INSTANCE_KINDS)}, got {kind!r}")
    if instances < 1:
        raise ValueError(f"instances must be at least 1, got {instances}")
    if max_batch < 0:
        raise ValueError(f"max_batch must be 0 (no batching) or more, got {max_batch}")
    batched = max_batch > 0
    lines = [
        f"# Written by torch-tensorrt-executorch triton-repo from method '{signature.method}'.",
        f"name: {_quoted(name)}",
        'backend: "python"',
        f"max_batch_size: {max_batch}",
        "input [\n" + ",\n".join(_tensor_entry(t, batched) for t in signature.inputs) + "\n]",
        "output [\n" + ",\n".join(_tensor_entry(t, batched) for t in signature.outputs) + "\n]",
        f"instance_group [\n  {{\n    count: {instances}\n    kind: {kind}\n  }}\n]",
    ]
    if batched:
        lines.append("dynamic_batching {\n  max_queue_delay_microseconds: 100\n}")
    parameters = {PROGRAM_FILE: program_file, METHOD: signature.method}
    if provider:
        parameters[PROVIDER] = provider
    if provider_libraries:
        parameters[PROVIDER_LIBRARIES] = json.dumps(list(provider_libraries))
    if kind == "KIND_GPU":
        # The Python backend hands device tensors to model.py only when told to.
        parameters["FORCE_CPU_ONLY_INPUT_TENSORS"] = "no"
    parameters.update(extra_parameters or {})
    lines.extend(_parameter(k, v) for k, v in parameters.items())
    return "\n".join(lines) + "\n"
