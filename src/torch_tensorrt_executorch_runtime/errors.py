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

import errno
import os
import stat

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
TTE_ERROR_HOST_OUT_OF_MEMORY = 11

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
    TTE_ERROR_HOST_OUT_OF_MEMORY: "out of host memory",
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
    """A device (CUDA) allocation failed."""

    status = TTE_ERROR_OUT_OF_MEMORY


class HostOutOfMemoryError(Error, MemoryError):
    """Host memory was refused: a method plans more than `max_planned_memory` (or than is
    available), or a host allocation failed. Not a DeviceOutOfMemoryError: freeing device memory
    does not help. Both are MemoryErrors."""

    status = TTE_ERROR_HOST_OUT_OF_MEMORY


class NoDeviceError(Error):
    """No usable CUDA device (no driver, no GPU, or a device id past the count)."""

    status = TTE_ERROR_NO_DEVICE


class NotSupportedError(Error):
    status = TTE_ERROR_NOT_SUPPORTED


class NotFoundError(Error, LookupError):
    status = TTE_ERROR_NOT_FOUND


class MissingFileError(NotFoundError, FileNotFoundError):
    """A file the caller named (a program) does not exist. A FileNotFoundError too, as open() raises."""

    def __init__(self, message: str, path: str | os.PathLike[str] | None = None):
        super().__init__(message)
        self.errno = errno.ENOENT
        self.filename = None if path is None else os.fspath(path)

    def __str__(self) -> str:
        return str(self.args[0])


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
    TTE_ERROR_HOST_OUT_OF_MEMORY: HostOutOfMemoryError,
}


def error_for_status(status: int, message: str) -> Error:
    """The exception of `status`, chosen by the code alone (an unknown code: Error)."""
    cls = _BY_STATUS.get(status, Error)
    if not message:
        message = f"TensorRTBackend C API call failed ({STATUS_NAMES.get(status, status)})"
    return cls(message, status)


_FILE_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def path_error(path: str | os.PathLike[str], what: str) -> Exception | None:
    """Why `path` cannot be opened as a file, as the exception to raise; None for a regular file.

    `what` names it ("program", "data file"). Missing: MissingFileError, a FileNotFoundError too (as
    open() raises). A directory, FIFO, device, socket or symbolic link loop:
    InvalidArgumentError saying which, worded as the plugin words the same
    refusal, so neither a FIFO is read nor "not found" said of a file that
    is there.
    """
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return MissingFileError(f"cannot open {what} '{os.fspath(path)}': it does not exist", path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return InvalidArgumentError(
                f"cannot open {what} '{os.fspath(path)}': its symbolic links form a loop (or nest too deep)"
            )
        return None  # the plugin reports the rest (permission denied, ...) when it opens it
    if stat.S_ISREG(mode):
        return None
    kind = next((name for test, name in _FILE_KINDS if test(mode)), "not a regular file")
    return InvalidArgumentError(
        f"cannot open {what} '{os.fspath(path)}': it is {kind}, not a file: pass the path of the file "
        "itself (or read the bytes and open them as a buffer)"
    )


def status_of(exc: BaseException) -> int:
    """The TteStatus an exception is reported to the plugin with."""
    if isinstance(exc, Error):
        return exc.status
    if isinstance(exc, MissingPackageError | NotImplementedError):
        return TTE_ERROR_NOT_SUPPORTED
    if isinstance(exc, MemoryError):  # Python's own: host memory
        return TTE_ERROR_HOST_OUT_OF_MEMORY
    if isinstance(exc, ValueError | TypeError | IndexError | KeyError):
        return TTE_ERROR_INVALID_ARGUMENT
    return TTE_ERROR_RUNTIME


__all__ = [
    "DelegateCompatibilityError",
    "DeviceOutOfMemoryError",
    "Error",
    "ExecutionError",
    "HostOutOfMemoryError",
    "InternalError",
    "InvalidArgumentError",
    "InvalidProgramError",
    "InvalidStateError",
    "MissingDataError",
    "MissingFileError",
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
