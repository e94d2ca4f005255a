"""Engine providers through the C API, and Python providers behind the
provider C ABI with ctypes callbacks.

A Python provider arrives as an adapter (`providers.adapter`) that speaks in
plain Python values; each callback here converts its C arguments, calls one
adapter method and writes the result back. A callback never lets an exception
escape into C (ctypes would report success): it becomes a status
(`errors.status_of`) and the exception's message.

All callbacks are module-level objects that live as long as the process: the
plugin may call `destroy` or `release` at any time after registration, and a
callback must never be freed while (or before) it runs. `user_data` is a
provider id and `TteEngine*` an engine id, both keys of dictionaries here, so
no Python object address ever crosses into C.
"""

from __future__ import annotations

import ctypes
import itertools
import logging
import os
import threading
from pathlib import Path

from ..errors import Error, MissingPackageError, NotAcceptedError, status_of
from . import abi
from .abi import TteEngineProvider
from .plugin import call, lib

logger = logging.getLogger("torch_tensorrt_executorch_runtime")

PROVIDER_KINDS = {"native": abi.TTE_PROVIDER_NATIVE, "python": abi.TTE_PROVIDER_PYTHON, "other": abi.TTE_PROVIDER_OTHER}
MEMORY_KINDS = {"device": abi.TTE_MEMORY_DEVICE, "host": abi.TTE_MEMORY_HOST}

_lock = threading.RLock()
_providers: dict[int, object] = {}  # provider id -> ProviderAdapter
_ids_by_name: dict[str, int] = {}
_engines: dict[int, object] = {}  # engine id -> EngineAdapter
_ids = itertools.count(1)


def _fill_error(error, status: int, message: str) -> int:
    if error:
        data = message.encode("utf-8")[: abi.TTE_ERROR_MESSAGE_CAPACITY - 1]
        data = data.decode("utf-8", errors="ignore").encode("utf-8")
        target = error.contents
        target.code = status
        ctypes.memmove(ctypes.addressof(target) + abi.TteError.message.offset, data + b"\0", len(data) + 1)
    return status


def _fail(error, exc: BaseException, where: str) -> int:
    if not isinstance(exc, NotAcceptedError):
        logger.debug("provider callback %s failed", where, exc_info=exc)
    message = str(exc) or type(exc).__name__
    if not isinstance(exc, Error | MissingPackageError):
        message = f"{type(exc).__name__}: {message}"
    return _fill_error(error, status_of(exc), message)


def _engine(handle):
    engine = _engines.get(handle or 0)
    if engine is None:
        raise LookupError(f"unknown engine handle {handle}")
    return engine


def _write_dims(target, dims) -> None:
    for i, d in enumerate(dims):
        target[i] = d


# ---- callbacks ---------------------------------------------------------------


@abi.DeserializeFn
def _deserialize(user_data, plan, plan_size, options, out_engine, error):
    try:
        provider = _providers.get(user_data or 0)
        if provider is None:
            raise LookupError("deserialize called for a released provider")
        raw = (ctypes.c_char * plan_size).from_address(plan) if plan_size else (ctypes.c_char * 0)()
        device_id, budget = 0, None
        if options:
            device_id = options.contents.device_id
            if options.contents.has_weight_streaming_budget:
                budget = options.contents.weight_streaming_budget
        engine = provider.deserialize(memoryview(raw).cast("B"), device_id, budget)
        handle = next(_ids)
        with _lock:
            _engines[handle] = engine
        out_engine[0] = handle
        return 0
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
        for target, dims in zip((min_dims, opt_dims, max_dims), shapes):
            _write_dims(target, dims)
        return 0
    except BaseException as exc:
        return _fail(error, exc, "profile_shape")


@abi.SelectProfileFn
def _select_profile(engine, profile, stream, error):
    try:
        _engine(engine).select_profile(profile, stream)
        return 0
    except BaseException as exc:
        return _fail(error, exc, "select_profile")


@abi.SetInputShapeFn
def _set_input_shape(engine, index, dims, rank, error):
    try:
        _engine(engine).set_input_shape(index, tuple(dims[i] for i in range(rank)))
        return 0
    except BaseException as exc:
        return _fail(error, exc, "set_input_shape")


@abi.GetOutputShapeFn
def _get_output_shape(engine, index, dims, capacity, out_rank, error):
    try:
        shape = _engine(engine).output_shape(index, capacity)
        _write_dims(dims, shape)
        out_rank[0] = len(shape)
        return 0
    except BaseException as exc:
        return _fail(error, exc, "get_output_shape")


@abi.SetTensorAddressFn
def _set_tensor_address(engine, index, address, error):
    try:
        _engine(engine).set_tensor_address(index, address or 0)
        return 0
    except BaseException as exc:
        return _fail(error, exc, "set_tensor_address")


@abi.EnqueueFn
def _enqueue(engine, stream, error):
    try:
        _engine(engine).enqueue(stream)
        return 0
    except BaseException as exc:
        return _fail(error, exc, "enqueue")


def _close(adapter, what: str) -> None:
    # Nothing to report a failure to: the plugin is letting go of the object.
    try:
        adapter.close()
    except BaseException:
        logger.warning("closing %s failed", what, exc_info=True)


@abi.DestroyFn
def _destroy(engine):
    with _lock:
        state = _engines.pop(engine or 0, None)
    if state is not None:
        _close(state, f"an engine of provider '{state.provider_name}'")


@abi.ReleaseFn
def _release(user_data):
    with _lock:
        provider = _providers.pop(user_data or 0, None)
    if provider is not None:
        _close(provider, f"provider '{provider.name}'")


# ---- registration ------------------------------------------------------------


def register_provider(provider) -> None:
    """Register a ProviderAdapter (its name, memory, capturable and kind say how)."""
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
