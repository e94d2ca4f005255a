"""Python providers bridged to the provider C ABI with ctypes callbacks.

All callbacks are module-level objects that live as long as the process: the
plugin may call `destroy` or `release` at any time after registration, and a
callback must never be freed while (or before) it runs. `user_data` is a
provider id and `TteEngine*` an engine id, both keys of dictionaries here, so
no Python object address ever crosses into C.

A callback never lets an exception escape into C (ctypes would report
success): every failure becomes a status and a message.
"""

from __future__ import annotations

import ctypes
import itertools
import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path

from .. import _c_api, _dtypes, _library
from .._c_api import TteEngineProvider
from ..errors import (
    TTE_ERROR_INVALID_ARGUMENT,
    TTE_ERROR_NOT_SUPPORTED,
    TTE_ERROR_OUT_OF_MEMORY,
    TTE_ERROR_RUNTIME,
    Error,
    MissingPackageError,
    NotAcceptedError,
    NotSupportedError,
)
from . import EngineLoadOptions, IoTensor

logger = logging.getLogger("torch_tensorrt_executorch_runtime")

KINDS = {"native": _c_api.TTE_PROVIDER_NATIVE, "python": _c_api.TTE_PROVIDER_PYTHON, "other": _c_api.TTE_PROVIDER_OTHER}
MEMORY_KINDS = {"device": _c_api.TTE_MEMORY_DEVICE, "host": _c_api.TTE_MEMORY_HOST}


@dataclass
class _Registration:
    provider: object
    name: str
    memory: str
    capturable: bool
    kind: str
    registered: bool = True


class _EngineState:
    """A Python engine and what its descriptors point into (kept until destroy)."""

    def __init__(self, engine, provider_name: str):
        self.engine = engine
        self.provider_name = provider_name
        tensors = list(engine.io_tensors)
        for tensor in tensors:
            if not isinstance(tensor, IoTensor):
                raise TypeError(
                    f"provider '{provider_name}': io_tensors must hold IoTensor objects, got {type(tensor).__name__}"
                )
        self.tensors = tensors
        self.c_names = [t.name.encode("utf-8") for t in tensors]
        index = {t.name: i for i, t in enumerate(tensors)}
        if len(index) != len(tensors):
            raise ValueError(f"provider '{provider_name}': engine I/O tensor names are not unique")
        self.aliased = []
        for tensor in tensors:
            if tensor.aliased_input is None:
                self.aliased.append(-1)
            elif tensor.aliased_input in index:
                self.aliased.append(index[tensor.aliased_input])
            else:
                raise ValueError(
                    f"provider '{provider_name}': output '{tensor.name}' aliases unknown input '{tensor.aliased_input}'"
                )
        self.scalar_types = [_dtypes.scalar_type(t.dtype) for t in tensors]
        self.num_profiles = int(getattr(engine, "num_profiles", 1))

    def tensor(self, index: int) -> IoTensor:
        if not 0 <= index < len(self.tensors):
            raise IndexError(f"I/O tensor index {index} out of range (engine has {len(self.tensors)})")
        return self.tensors[index]


_lock = threading.RLock()
_registrations: dict[int, _Registration] = {}
_by_name: dict[str, int] = {}
_engines: dict[int, _EngineState] = {}
_ids = itertools.count(1)


def _status_of(exc: BaseException) -> int:
    if isinstance(exc, Error):
        return exc.status
    if isinstance(exc, MissingPackageError | NotImplementedError):
        return TTE_ERROR_NOT_SUPPORTED
    if isinstance(exc, MemoryError):
        return TTE_ERROR_OUT_OF_MEMORY
    if isinstance(exc, ValueError | TypeError | IndexError | KeyError):
        return TTE_ERROR_INVALID_ARGUMENT
    return TTE_ERROR_RUNTIME


def _fill_error(error, status: int, message: str) -> int:
    if error:
        data = message.encode("utf-8")[: _c_api.TTE_ERROR_MESSAGE_CAPACITY - 1]
        data = data.decode("utf-8", errors="ignore").encode("utf-8")
        target = error.contents
        target.code = status
        ctypes.memmove(ctypes.addressof(target) + _c_api.TteError.message.offset, data + b"\0", len(data) + 1)
    return status


def _fail(error, exc: BaseException, where: str) -> int:
    status = _status_of(exc)
    if not isinstance(exc, NotAcceptedError):
        logger.debug("provider callback %s failed", where, exc_info=exc)
    message = str(exc) or type(exc).__name__
    if not isinstance(exc, Error | MissingPackageError):
        message = f"{type(exc).__name__}: {message}"
    return _fill_error(error, status, message)


def _engine(handle) -> _EngineState:
    state = _engines.get(handle or 0)
    if state is None:
        raise LookupError(f"unknown engine handle {handle}")
    return state


# ---- callbacks ---------------------------------------------------------------


@_c_api.DeserializeFn
def _deserialize(user_data, plan, plan_size, options, out_engine, error):
    registration = _registrations.get(user_data or 0)
    try:
        if registration is None:
            raise LookupError("deserialize called for a released provider")
        raw = (ctypes.c_char * plan_size).from_address(plan) if plan_size else (ctypes.c_char * 0)()
        view = memoryview(raw).cast("B")
        load_options = options.contents if options else None
        budget = None
        device_id = 0
        if load_options is not None:
            device_id = load_options.device_id
            if load_options.has_weight_streaming_budget:
                budget = load_options.weight_streaming_budget
        try:
            engine = registration.provider.deserialize(
                view, device_id, EngineLoadOptions(device_id=device_id, weight_streaming_budget=budget)
            )
        finally:
            try:
                view.release()
            except BufferError:
                logger.warning(
                    "provider '%s' kept a view of the plan past deserialize; it is invalid now", registration.name
                )
        if engine is None:
            raise NotAcceptedError(f"provider '{registration.name}' does not accept this plan")
        state = _EngineState(engine, registration.name)
        handle = next(_ids)
        with _lock:
            _engines[handle] = state
        out_engine[0] = handle
        return 0
    except BaseException as exc:
        return _fail(error, exc, "deserialize")


@_c_api.CountFn
def _num_io_tensors(engine, out_count, error):
    try:
        out_count[0] = len(_engine(engine).tensors)
        return 0
    except BaseException as exc:
        return _fail(error, exc, "num_io_tensors")


@_c_api.DescribeIoTensorFn
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


@_c_api.CountFn
def _num_profiles(engine, out_count, error):
    try:
        out_count[0] = _engine(engine).num_profiles
        return 0
    except BaseException as exc:
        return _fail(error, exc, "num_profiles")


@_c_api.ProfileShapeFn
def _profile_shape(engine, profile, input_index, min_dims, opt_dims, max_dims, error):
    try:
        state = _engine(engine)
        tensor = state.tensor(input_index)
        shapes = state.engine.profile_shape(profile, tensor.name)
        if len(shapes) != 3:
            raise ValueError(f"profile_shape of '{tensor.name}' must return (min, opt, max)")
        for target, dims in zip((min_dims, opt_dims, max_dims), shapes):
            dims = tuple(int(d) for d in dims)
            if len(dims) != tensor.rank:
                raise ValueError(
                    f"profile {profile} of input '{tensor.name}' has rank {len(dims)}, the tensor has rank {tensor.rank}"
                )
            for i, d in enumerate(dims):
                target[i] = d
        return 0
    except BaseException as exc:
        return _fail(error, exc, "profile_shape")


@_c_api.SelectProfileFn
def _select_profile(engine, profile, stream, error):
    try:
        state = _engine(engine)
        select = getattr(state.engine, "select_profile", None)
        if select is not None:
            select(profile, stream)
        elif profile != 0:
            raise NotSupportedError(f"engine of provider '{state.provider_name}' has only profile 0")
        return 0
    except BaseException as exc:
        return _fail(error, exc, "select_profile")


@_c_api.SetInputShapeFn
def _set_input_shape(engine, index, dims, rank, error):
    try:
        state = _engine(engine)
        state.engine.set_input_shape(state.tensor(index).name, tuple(dims[i] for i in range(rank)))
        return 0
    except BaseException as exc:
        return _fail(error, exc, "set_input_shape")


@_c_api.GetOutputShapeFn
def _get_output_shape(engine, index, dims, capacity, out_rank, error):
    try:
        state = _engine(engine)
        name = state.tensor(index).name
        shape = tuple(int(d) for d in state.engine.get_output_shape(name))
        if len(shape) > capacity:
            raise ValueError(f"output '{name}' has rank {len(shape)}, more than {capacity}")
        for i, d in enumerate(shape):
            dims[i] = d
        out_rank[0] = len(shape)
        return 0
    except BaseException as exc:
        return _fail(error, exc, "get_output_shape")


@_c_api.SetTensorAddressFn
def _set_tensor_address(engine, index, address, error):
    try:
        state = _engine(engine)
        state.engine.set_tensor_address(state.tensor(index).name, address or 0)
        return 0
    except BaseException as exc:
        return _fail(error, exc, "set_tensor_address")


@_c_api.EnqueueFn
def _enqueue(engine, stream, error):
    try:
        _engine(engine).engine.enqueue(stream)
        return 0
    except BaseException as exc:
        return _fail(error, exc, "enqueue")


@_c_api.DestroyFn
def _destroy(engine):
    with _lock:
        state = _engines.pop(engine or 0, None)
    if state is None:
        return
    close = getattr(state.engine, "close", None)
    try:
        if close is not None:
            close()
    except BaseException:
        logger.warning("closing an engine of provider '%s' failed", state.provider_name, exc_info=True)


@_c_api.ReleaseFn
def _release(user_data):
    with _lock:
        registration = _registrations.pop(user_data or 0, None)
    if registration is not None:
        close = getattr(registration.provider, "close", None)
        try:
            if close is not None:
                close()
        except BaseException:
            logger.warning("closing provider '%s' failed", registration.name, exc_info=True)


# ---- registration ------------------------------------------------------------


def register(provider, *, name: str, memory: str, capturable: bool, kind: str) -> str:
    if not callable(getattr(provider, "deserialize", None)):
        raise TypeError(f"a provider needs a deserialize(plan, device_id, options) method; got {provider!r}")
    if memory not in MEMORY_KINDS:
        raise ValueError(f"memory must be one of {', '.join(MEMORY_KINDS)}, got '{memory}'")
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, got '{kind}'")
    if not name or not isinstance(name, str):
        raise ValueError("a provider needs a non-empty name")
    lib = _library.load_plugin()
    provider_id = next(_ids)
    struct = TteEngineProvider(
        abi_version=_c_api.TTE_ENGINE_PROVIDER_ABI_VERSION,
        struct_size=ctypes.sizeof(TteEngineProvider),
        name=name.encode("utf-8"),
        memory_kind=MEMORY_KINDS[memory],
        enqueue_capturable=1 if capturable else 0,
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
        _registrations[provider_id] = _Registration(provider, name, memory, bool(capturable), kind)
    try:
        _c_api.call(lib.tte_register_engine_provider, ctypes.byref(struct), KINDS[kind])
    except BaseException:
        with _lock:
            _registrations.pop(provider_id, None)
        raise
    with _lock:
        _by_name[name] = provider_id
    logger.debug("registered Python provider '%s' (%s memory, %s)", name, memory, kind)
    return name


def register_library(path, *, kind: str) -> list[str]:
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, got '{kind}'")
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"provider library not found: {path}")
    lib = _library.load_plugin()
    before = set(names())
    _c_api.call(lib.tte_load_engine_provider_library, os.fsencode(path.resolve()), KINDS[kind])
    return [name for name in names() if name not in before]


def unregister(name: str) -> None:
    lib = _library.load_plugin()
    _c_api.call(lib.tte_unregister_engine_provider, name.encode("utf-8"))
    with _lock:
        provider_id = _by_name.pop(name, None)
        registration = _registrations.get(provider_id) if provider_id else None
        if registration is not None:
            registration.registered = False


def names() -> list[str]:
    lib = _library.load_plugin()
    result = []
    for index in range(lib.tte_num_engine_providers()):
        raw = lib.tte_engine_provider_name(index)
        if raw is None:
            break
        result.append(raw.decode("utf-8"))
    return result


def python_provider_names() -> list[str]:
    with _lock:
        return list(_by_name)


def live_engine_count() -> int:
    with _lock:
        return len(_engines)


def shutdown() -> None:
    """Unregister every Python provider (at interpreter exit, while callbacks still work)."""
    for name in python_provider_names():
        try:
            unregister(name)
        except Exception:
            logger.debug("unregistering provider '%s' at exit failed", name, exc_info=True)

