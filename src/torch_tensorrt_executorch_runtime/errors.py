"""Exceptions raised by torch_tensorrt_executorch_runtime.

Python's one status type is the exception. At the C boundary a failure is a
TteStatus and a one-line message: `error_for_status` turns one into the
exception class of that status (C API calls), `status_of` an exception into a
status (Python engine providers answering the plugin). Errors that stop the
package from activating are ImportErrors (upstream's
`DelegateCompatibilityError` is their base, so code written for 0.1.0 that
catches it keeps working).
"""

from __future__ import annotations

TTE_OK = 0
TTE_ERROR_INVALID_ARGUMENT = 1
TTE_ERROR_NOT_ACCEPTED = 2
TTE_ERROR_RUNTIME = 3
TTE_ERROR_OUT_OF_MEMORY = 4
TTE_ERROR_NO_DEVICE = 5
TTE_ERROR_NOT_SUPPORTED = 6
TTE_ERROR_NOT_FOUND = 7
TTE_ERROR_INVALID_PROGRAM = 8
TTE_ERROR_INTERNAL = 9
TTE_ERROR_INVALID_STATE = 10

STATUS_NAMES = {
    TTE_OK: "ok",
    TTE_ERROR_INVALID_ARGUMENT: "invalid argument",
    TTE_ERROR_NOT_ACCEPTED: "not accepted",
    TTE_ERROR_RUNTIME: "runtime error",
    TTE_ERROR_OUT_OF_MEMORY: "out of memory",
    TTE_ERROR_NO_DEVICE: "no device",
    TTE_ERROR_NOT_SUPPORTED: "not supported",
    TTE_ERROR_NOT_FOUND: "not found",
    TTE_ERROR_INVALID_PROGRAM: "invalid program",
    TTE_ERROR_INTERNAL: "internal error",
    TTE_ERROR_INVALID_STATE: "invalid state",
}


class Error(RuntimeError):
    """Base of the errors the plugin reports; `status` is its TteStatus code."""

    status = TTE_ERROR_RUNTIME

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        if status is not None:
            self.status = status

    @property
    def status_name(self) -> str:
        return STATUS_NAMES.get(self.status, f"status {self.status}")


class InvalidArgumentError(Error, ValueError):
    """An argument does not match what the program expects (dtype, rank, shape, count)."""

    status = TTE_ERROR_INVALID_ARGUMENT


class UnknownMethodError(InvalidArgumentError, KeyError):
    """The program has no method of that name."""

    status = TTE_ERROR_NOT_FOUND

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class NotAcceptedError(Error):
    """A provider does not accept a plan (it is not that provider's format)."""

    status = TTE_ERROR_NOT_ACCEPTED


class ExecutionError(Error):
    """A delegate, an engine or ExecuTorch failed while loading or running."""

    status = TTE_ERROR_RUNTIME


class DeviceOutOfMemoryError(Error, MemoryError):
    status = TTE_ERROR_OUT_OF_MEMORY


class NoDeviceError(Error):
    """No usable CUDA device (no driver, no GPU, or a device id past the count)."""

    status = TTE_ERROR_NO_DEVICE


class NotSupportedError(Error):
    status = TTE_ERROR_NOT_SUPPORTED


class NotFoundError(Error, LookupError):
    status = TTE_ERROR_NOT_FOUND


class InvalidProgramError(Error, ValueError):
    """The .pte (or .ptd, or a delegate blob in it) is malformed."""

    status = TTE_ERROR_INVALID_PROGRAM


class InternalError(Error):
    status = TTE_ERROR_INTERNAL


class InvalidStateError(Error):
    """The object was used after it was closed, or out of order."""

    status = TTE_ERROR_INVALID_STATE


class MissingDataError(Error, FileNotFoundError):
    """The program needs named data (.ptd) that was neither given nor found."""

    status = TTE_ERROR_NOT_FOUND


class OutputConversionError(Error, TypeError):
    """A result cannot be returned in the inputs' library (e.g. CUDA memory for numpy)."""

    status = TTE_ERROR_NOT_SUPPORTED


class DelegateCompatibilityError(ImportError):
    """The TensorRTBackend delegate cannot be activated in this process.

    Upstream 0.1.0's name; the more specific errors below derive from it.
    """


class PluginLoadError(DelegateCompatibilityError):
    """The plugin library (or a library it needs) could not be loaded."""


class RegistrationError(DelegateCompatibilityError):
    """`TensorRTBackend` is registered by another library, or registration failed."""


class MissingPackageError(ImportError):
    """An optional Python package is needed; the message names the pip command."""


_BY_STATUS = {
    TTE_ERROR_INVALID_ARGUMENT: InvalidArgumentError,
    TTE_ERROR_NOT_ACCEPTED: NotAcceptedError,
    TTE_ERROR_RUNTIME: ExecutionError,
    TTE_ERROR_OUT_OF_MEMORY: DeviceOutOfMemoryError,
    TTE_ERROR_NO_DEVICE: NoDeviceError,
    TTE_ERROR_NOT_SUPPORTED: NotSupportedError,
    TTE_ERROR_NOT_FOUND: NotFoundError,
    TTE_ERROR_INVALID_PROGRAM: InvalidProgramError,
    TTE_ERROR_INTERNAL: InternalError,
    TTE_ERROR_INVALID_STATE: InvalidStateError,
}


def error_for_status(status: int, message: str) -> Error:
    cls = _BY_STATUS.get(status, Error)
    # ExecuTorch has no error code for a missing device: a delegate that
    # found none fails its init with NotSupported, and says so.
    if status == TTE_ERROR_NOT_SUPPORTED and "no CUDA device" in message:
        cls = NoDeviceError
    if not message:
        message = f"TensorRTBackend C API call failed ({STATUS_NAMES.get(status, status)})"
    return cls(message, status)


def status_of(exc: BaseException) -> int:
    """The TteStatus an exception is reported to the plugin with."""
    if isinstance(exc, Error):
        return exc.status
    if isinstance(exc, MissingPackageError | NotImplementedError):
        return TTE_ERROR_NOT_SUPPORTED
    if isinstance(exc, MemoryError):
        return TTE_ERROR_OUT_OF_MEMORY
    if isinstance(exc, ValueError | TypeError | IndexError | KeyError):
        return TTE_ERROR_INVALID_ARGUMENT
    return TTE_ERROR_RUNTIME


__all__ = [
    "DelegateCompatibilityError",
    "DeviceOutOfMemoryError",
    "Error",
    "ExecutionError",
    "InternalError",
    "InvalidArgumentError",
    "InvalidProgramError",
    "InvalidStateError",
    "MissingDataError",
    "MissingPackageError",
    "NoDeviceError",
    "NotAcceptedError",
    "NotFoundError",
    "NotSupportedError",
    "OutputConversionError",
    "PluginLoadError",
    "RegistrationError",
    "UnknownMethodError",
]
