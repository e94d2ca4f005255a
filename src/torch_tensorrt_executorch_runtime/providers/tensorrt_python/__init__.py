"""The Python TensorRT provider: runs engines through TensorRT's Python API.

Registered at import as `tensorrt-python`: beside the native provider
(`tensorrt-native`, which the backend asks first) when one of the modules
below is installed, for TensorRT-RTX and plans the native provider does not
take; and always when the wheel has no native provider, where without a
module it answers with what to install. It needs no TensorRT headers at build
time and works with whichever TensorRT runtime is installed. Modules are
tried in this order:

1. `tensorrt`          (pip install tensorrt-cu13): every engine built by its minor version;
2. `tensorrt_lean`     (pip install tensorrt-lean-cu13): version-compatible engines only;
3. `tensorrt_dispatch` (pip install tensorrt-dispatch-cu13): version-compatible engines only;
4. `tensorrt_rtx`      (pip install tensorrt-rtx-cu13): TensorRT-RTX engines.

A plan is given to each installed module in turn until one deserializes it.
Pass `modules=[...]` or set TORCH_TENSORRT_EXECUTORCH_TENSORRT_MODULE (one
name, or several separated by commas) to use other modules or another order.

No TensorRT runtime is ever created without a usable CUDA device: on a machine
without one, creating a runtime and deserializing can crash the process, so
the provider answers "no CUDA device" first.

Set TORCH_TENSORRT_EXECUTORCH_NVTX=1 (or call `set_nvtx_enabled(True)`) for an
NVTX range around every enqueue (through the `nvtx` package, else
`torch.cuda.nvtx`).

Its parts, one concern each (as the native provider's files are split):
`modules` (which TensorRT modules, importing them), `provider` (the provider
and `register`), `runtime_pool` (a runtime per module and device, its
settings), `plugin_libraries`, `tensorrt_logger` (TensorRT's log and the
errors a failed call names), `engine` (an engine and its contexts),
`io_tensors` (an engine's I/O and what is refused), `output_allocator`
(data-dependent outputs), `weight_streaming`, `runtime_cache` (TensorRT-RTX)
and `nvtx_ranges`.
"""

from __future__ import annotations

from .engine import TensorRTEngine
from .modules import DEFAULT_MODULES, INSTALL_HINT, MODULE_ENV, PIP_PACKAGES, configured_modules, installed_modules
from .nvtx_ranges import NVTX_ENV, set_nvtx_enabled
from .provider import PROVIDER_NAME, TensorRTProvider, register

__all__ = [
    "DEFAULT_MODULES",
    "INSTALL_HINT",
    "MODULE_ENV",
    "NVTX_ENV",
    "PIP_PACKAGES",
    "PROVIDER_NAME",
    "TensorRTEngine",
    "TensorRTProvider",
    "configured_modules",
    "installed_modules",
    "register",
    "set_nvtx_enabled",
]
