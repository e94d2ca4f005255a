"""Engine providers through the C API, and Python providers behind the
provider C ABI.

A Python provider arrives as an adapter (`providers.adapter`) that speaks in
plain Python values. What the backend asks once per engine (deserialize, the
I/O table, profiles, destroy) arrives through ctypes callbacks here; what it
asks on every execute arrives through the batched entry (`execute`), which
the compiled binding implements in C: one Python call per execute into the
engine's adapter, none when shapes and addresses are unchanged but the
enqueue. The per-tensor calls of the ABI are not used with the batched entry;
they answer that only the batched entry is served. A callback never lets an
exception escape into C (ctypes would report success): it becomes a status
(`errors.status_of`) and the exception's message (`failure_of`).

All callbacks are module-level objects that live as long as the process: the
plugin may call `destroy` or `release` at any time after registration, and a
callback must never be freed while (or before) it runs. `user_data` is a
provider id, a key of a dictionary here; `TteEngine*` is a handle the
compiled binding makes, holding the engine's adapter, and also the key under
which the adapter is found here.
"""

from __future__ import annotations

import ctypes
import itertools
import logging
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import (
    TTE_ERROR_NOT_SUPPORTED,
    Error,
    MissingPackageError,
    NotAcceptedError,
    PluginLoadError,
    status_of,
)
from . import abi, methods
from .abi import TteEngineProvider
from .plugin import call, lib, take_string

if TYPE_CHECKING:
    # The layer above, which makes these objects; only their types are needed here.
    from ..providers.adapter import EngineAdapter, ProviderAdapter

logger = logging.getLogger("torch_tensorrt_executorch_runtime")

PROVIDER_KINDS = {"native": abi.TTE_PROVIDER_NATIVE, "python": abi.TTE_PROVIDER_PYTHON, "other": abi.TTE_PROVIDER_OTHER}
MEMORY_KINDS = {"device": abi.TTE_MEMORY_DEVICE, "host": abi.TTE_MEMORY_HOST}

_lock = threading.RLock()
_providers: dict[int, ProviderAdapter] = {}  # by provider id
_ids_by_name: dict[str, int] = {}
_engines: dict[int, EngineAdapter] = {}  # by engine handle
_ids = itertools.count(1)


def _fill_error(error, status: int, message: str) -> int:
    if error:
        data = message.encode("utf-8")[: abi.TTE_ERROR_MESSAGE_CAPACITY - 1]
        data = data.decode("utf-8", errors="ignore").encode("utf-8")
        target = error.contents
        target.code = status
        ctypes.memmove(ctypes.addressof(target) + abi.TteError.message.offset, data + b"\0", len(data) + 1)
    return status


def failure_of(exc: BaseException, where: str) -> tuple[int, str]:
    """The status and message a failed provider call reports for `exc`."""
    if not isinstance(exc, NotAcceptedError):
        logger.debug("provider callback %s failed", where, exc_info=exc)
    message = str(exc) or type(exc).__name__
    if not isinstance(exc, Error | MissingPackageError):
        message = f"{type(exc).__name__}: {message}"
    return status_of(exc), message


def _fail(error, exc: BaseException, where: str) -> int:
    return _fill_error(error, *failure_of(exc, where))


def _engine(handle):
    engine = _engines.get(handle or 0)
    if engine is None:
        raise LookupError(f"unknown engine handle {handle}")
    return engine


def _write_dims(target, dims) -> None:
    for i, d in enumerate(dims):
        target[i] = d


def _load_options(options) -> dict:
    """The C struct's fields as plain values (those past its struct_size left out)."""
    if not options:
        return {"device_id": 0}
    c = options.contents

    def has(field: str) -> bool:
        descriptor = getattr(abi.TteEngineLoadOptions, field)
        return c.struct_size >= descriptor.offset + descriptor.size

    budget = c.weight_streaming_budget if c.has_weight_streaming_budget else None
    libraries: tuple[str, ...] = ()
    if has("plugin_libraries") and c.num_plugin_libraries > 0 and c.plugin_libraries:
        libraries = tuple(os.fsdecode(c.plugin_libraries[i]) for i in range(c.num_plugin_libraries))
    return {
        "device_id": c.device_id,
        "weight_streaming_budget": budget,
        "engine_host_code_allowed": not (has("refuse_engine_host_code") and c.refuse_engine_host_code),
        "dla_core": c.dla_core if has("dla_core") and c.has_dla_core else None,
        "plugin_libraries": libraries,
        "runtime_cache_path": os.fsdecode(c.runtime_cache_path)
        if has("runtime_cache_path") and c.runtime_cache_path
        else None,
    }


# ---- callbacks ---------------------------------------------------------------


def _hand_out(engine, out_engine) -> int:
    """Give the backend a handle on `engine` (an EngineAdapter) and keep it until destroy."""
    handle = methods.compiled().engine_new(engine)
    with _lock:
        _engines[handle] = engine
    out_engine[0] = handle
    return 0


@abi.DeserializeFn
def _deserialize(user_data, plan, plan_size, options, out_engine, error):
    try:
        provider = _providers.get(user_data or 0)
        if provider is None:
            raise LookupError("deserialize called for a released provider")
        raw = (ctypes.c_char * plan_size).from_address(plan) if plan_size else (ctypes.c_char * 0)()
        return _hand_out(provider.deserialize(memoryview(raw).cast("B"), _load_options(options)), out_engine)
    except BaseException as exc:
        return _fail(error, exc, "deserialize")


@abi.CountFn
def _num_io_tensors(engine, out_count, error):
    try:
        out_count[0] = len(_engine(engine).tensors)
        return 0
    except BaseException as exc:
        return _fail(error, exc, "num_io_tensors")


@abi.DescribeIoTensorFn
def _describe_io_tensor(engine, index, out_desc, error):
    try:
        state = _engine(engine)
        tensor = state.tensor(index)
        desc = out_desc.contents
        desc.name = state.c_names[index]
        desc.is_input = 1 if tensor.is_input else 0
        desc.scalar_type = state.scalar_types[index]
        desc.rank = int(tensor.rank)
        desc.aliased_input = state.aliased[index]
        desc.is_shape_tensor = 1 if tensor.is_shape_tensor else 0
        return 0
    except BaseException as exc:
        return _fail(error, exc, "describe_io_tensor")


@abi.CountFn
def _num_profiles(engine, out_count, error):
    try:
        out_count[0] = _engine(engine).num_profiles
        return 0
    except BaseException as exc:
        return _fail(error, exc, "num_profiles")


@abi.ProfileShapeFn
def _profile_shape(engine, profile, input_index, min_dims, opt_dims, max_dims, error):
    try:
        shapes = _engine(engine).profile_shape(profile, input_index)
        for target, dims in zip((min_dims, opt_dims, max_dims), shapes, strict=False):
            _write_dims(target, dims)
        return 0
    except BaseException as exc:
        return _fail(error, exc, "profile_shape")


# The per-tensor calls: the backend uses the batched entry instead whenever
# a provider has one, and every Python provider has it where the compiled
# binding can be imported (not in a source tree beside a build).
def _unbatched(error) -> int:
    try:
        methods.compiled()
        reason = "this Python provider is driven through the batched entry (execute), not per-tensor calls"
    except PluginLoadError as exc:
        reason = f"Python providers run through the compiled binding: {exc}"
    return _fill_error(error, TTE_ERROR_NOT_SUPPORTED, reason)


@abi.SelectProfileFn
def _select_profile(engine, profile, stream, error):
    return _unbatched(error)


@abi.SetInputShapeFn
def _set_input_shape(engine, index, dims, rank, error):
    return _unbatched(error)


@abi.GetOutputShapeFn
def _get_output_shape(engine, index, dims, capacity, out_rank, error):
    return _unbatched(error)


@abi.SetTensorAddressFn
def _set_tensor_address(engine, index, address, error):
    return _unbatched(error)


@abi.EnqueueFn
def _enqueue(engine, stream, error):
    return _unbatched(error)


def _close(adapter, what: str) -> None:
    # Nothing to report a failure to: the plugin is letting go of the object.
    try:
        adapter.close()
    except BaseException:
        logger.warning("closing %s failed", what, exc_info=True)


@abi.EngineCapturableFn
def _engine_capturable(engine, stream, out_capturable, error):
    try:
        out_capturable[0] = 1 if _engine(engine).capturable(stream) else 0
        return 0
    except BaseException as exc:
        return _fail(error, exc, "engine_capturable")


@abi.DescribeRuntimeFn
def _describe_runtime(user_data, text, capacity, error):
    try:
        provider = _providers.get(user_data or 0)
        line = provider.describe_runtime() if provider is not None else ""
        data = line.encode("utf-8")[: max(capacity - 1, 0)].decode("utf-8", errors="ignore").encode("utf-8")
        ctypes.memmove(text, data + b"\0", len(data) + 1)
        return 0
    except BaseException as exc:
        return _fail(error, exc, "describe_runtime")


@abi.CreateExecutionContextFn
def _create_execution_context(engine, options, out_engine, error):
    try:
        shared = _engine(engine)
        return _hand_out(shared.owner.create_execution_context(shared, _load_options(options)), out_engine)
    except BaseException as exc:
        return _fail(error, exc, "create_execution_context")


@abi.SetOutputCapacityFn
def _set_output_capacity(engine, index, nbytes, error):
    try:
        _engine(engine).set_output_capacity(index, nbytes)
        return 0
    except BaseException as exc:
        return _fail(error, exc, "set_output_capacity")


@abi.GetOutputResultFn
def _get_output_result(engine, index, dims, capacity, out_rank, out_data, error):
    try:
        shape, address = _engine(engine).output_result(index)
        if len(shape) > capacity:
            raise ValueError(f"the result of output {index} has rank {len(shape)}, more than {capacity}")
        _write_dims(dims, shape)
        out_rank[0] = len(shape)
        out_data[0] = address
        return 0
    except BaseException as exc:
        return _fail(error, exc, "get_output_result")


@abi.DestroyFn
def _destroy(engine):
    with _lock:
        state = _engines.pop(engine or 0, None)
    if state is not None:
        methods.compiled().engine_free(engine)
        _close(state, f"an engine of provider '{state.provider_name}'")


@abi.ReleaseFn
def _release(user_data):
    with _lock:
        provider = _providers.pop(user_data or 0, None)
    if provider is not None:
        _close(provider, f"provider '{provider.name}'")


# ---- registration ------------------------------------------------------------


_execute = None


def _batched_entry():
    """The compiled binding's batched entry for Python providers, made once."""
    global _execute
    if _execute is None:
        _execute = abi.ExecuteFn(methods.compiled().provider_execute(failure_of))
    return _execute


def register_provider(provider) -> None:
    """Register a ProviderAdapter (its name, memory, capturable and kind say how)."""
    try:
        execute = _batched_entry()
    except PluginLoadError:
        execute = abi.ExecuteFn()  # NULL: its engines then fail with the reason (_unbatched)
    provider_id = next(_ids)
    struct = TteEngineProvider(
        abi_version=abi.TTE_ENGINE_PROVIDER_ABI_VERSION,
        struct_size=ctypes.sizeof(TteEngineProvider),
        name=provider.name.encode("utf-8"),
        memory_kind=MEMORY_KINDS[provider.memory],
        enqueue_capturable=1 if provider.capturable else 0,
        user_data=provider_id,
        release=_release,
        deserialize=_deserialize,
        num_io_tensors=_num_io_tensors,
        describe_io_tensor=_describe_io_tensor,
        num_profiles=_num_profiles,
        profile_shape=_profile_shape,
        select_profile=_select_profile,
        set_input_shape=_set_input_shape,
        get_output_shape=_get_output_shape,
        set_tensor_address=_set_tensor_address,
        enqueue=_enqueue,
        destroy=_destroy,
        engine_capturable=_engine_capturable,
        describe_runtime=_describe_runtime,
        execute=execute,
        # Set only for providers that can make one: without it the backend
        # deserializes each load, with no warning.
        create_execution_context=_create_execution_context
        if provider.shares_engines
        else abi.CreateExecutionContextFn(),
        # An engine without set_output_capacity/output_result fails on these with
        # a message that says so, when it reports a data-dependent output.
        set_output_capacity=_set_output_capacity,
        get_output_result=_get_output_result,
    )
    with _lock:
        _providers[provider_id] = provider
    try:
        call(lib().tte_register_engine_provider, ctypes.byref(struct), PROVIDER_KINDS[provider.kind])
    except BaseException:
        with _lock:
            _providers.pop(provider_id, None)
        raise
    with _lock:
        _ids_by_name[provider.name] = provider_id


def load_provider_library(path: Path, kind: str) -> None:
    call(lib().tte_load_engine_provider_library, os.fsencode(path), PROVIDER_KINDS[kind])


def unregister_provider(name: str) -> None:
    call(lib().tte_unregister_engine_provider, name.encode("utf-8"))
    with _lock:
        _ids_by_name.pop(name, None)


def provider_runtime(name: str) -> str:
    """What provider `name` says about the runtime it uses; raises NotFoundError when it is not registered."""
    text = ctypes.c_void_p()
    call(lib().tte_engine_provider_runtime, name.encode("utf-8"), ctypes.byref(text))
    return take_string(text)


def provider_names() -> list[str]:
    """Registered provider names, in selection order."""
    plugin = lib()
    result = []
    for index in range(plugin.tte_num_engine_providers()):
        raw = plugin.tte_engine_provider_name(index)
        if raw is None:
            break
        result.append(raw.decode("utf-8"))
    return result


def unregister_python_providers() -> None:
    """Unregister every Python provider (at interpreter exit, while callbacks still work)."""
    with _lock:
        names = list(_ids_by_name)
    for name in names:
        try:
            unregister_provider(name)
        except Exception:
            logger.debug("unregistering provider '%s' at exit failed", name, exc_info=True)
