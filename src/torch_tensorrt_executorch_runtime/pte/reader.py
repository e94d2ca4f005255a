"""Reads an ExecuTorch .pte without torch, executorch or the plugin.

The flatbuffer bindings in the package's `_generated/` are made at build time
from the executorch wheel's schema/program.fbs by its bundled flatc
(scripts/gen/pte-bindings.py). This module adds what the bindings do not:
the extended header and segments, delegate payloads wherever they are stored,
bounds checks so a truncated or corrupt file raises `PteFormatError` instead
of crashing or spinning, and the classification of a method's I/O placement.

File layout: bytes 0-4 the flatbuffer root offset, 4-8 the identifier "ET12",
then (when present) the extended header at byte 8: "eh00", u32 length, u64
program_size, u64 segment_base_offset, u64 segment_data_size. The flatbuffer
is data[:program_size]; segment offsets are relative to segment_base_offset.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from .._dtypes import scalar_type_name
from ..errors import InvalidProgramError
from .file_bytes import FileBytes

FILE_IDENTIFIER = b"ET12"
EXTENDED_HEADER_MAGIC = b"eh00"
_EXTENDED_HEADER = struct.Struct("<4sIQQQ")
_EXTENDED_HEADER_OFFSET = 8

TARGET_DEVICE_KEY = "target_device"
# What exir's PropagateDevicePass inserts around device delegates.
DEVICE_COPY_OPERATORS = ("et_copy::_h2d_copy", "et_copy::_d2h_copy")

HOST = "host"
DEVICE_PLANNED = "device_planned"
DEVICE_RESIDENT = "device_resident"

# Vtable slots (4 + 2 * field index in program.fbs) of the byte vectors read
# in one slice instead of one accessor call per byte.
_COMPILE_SPEC_VALUE_SLOT = 6
_INLINE_DATA_SLOT = 4

_DEVICE_TYPES = {0: "cpu", 1: "cuda"}
_DYNAMISM = {0: "static", 1: "dynamic_bound", 2: "dynamic_unbound"}
_VALUE_KINDS = {
    0: "none",
    1: "null",
    2: "int",
    3: "bool",
    4: "double",
    5: "tensor",
    6: "string",
    7: "int_list",
    8: "double_list",
    9: "bool_list",
    10: "tensor_list",
    11: "optional_tensor_list",
}
_LOCATIONS = {0: "INLINE", 1: "SEGMENT"}

T = TypeVar("T")


class PteFormatError(InvalidProgramError):
    """The bytes are not a readable ExecuTorch program (truncated, corrupt, or another format)."""

    def __init__(self, message: str, *args):
        # Names read from a corrupt file can hold any character: keep the
        # message on one printable line.
        super().__init__("".join(c if c.isprintable() else ascii(c)[1:-1] for c in message), *args)


class SchemaNotGeneratedError(ImportError):
    """The flatbuffer bindings were not generated (a source checkout that was never built)."""


def _bindings():
    try:
        from .._generated import program_generated
    except ImportError as error:
        raise SchemaNotGeneratedError(
            "the .pte reader's flatbuffer bindings are missing; generate them with "
            "`python scripts/gen/pte-bindings.py` (the build runs it) "
            f"({error})"
        ) from error
    return program_generated


@dataclass(frozen=True)
class ExtendedHeader:
    program_size: int
    segment_base_offset: int
    segment_data_size: int


@dataclass(frozen=True)
class Segment:
    offset: int  # relative to the extended header's segment_base_offset
    size: int


@dataclass(frozen=True)
class PteTensor:
    dtype: str
    sizes: tuple[int, ...]  # the upper bound when dynamism is "dynamic_bound"
    dynamism: str  # "static" | "dynamic_bound" | "dynamic_unbound"
    device: str  # "cpu" or "cuda:N" (ExtraTensorInfo; absent means cpu)
    memory_planned: bool  # allocation_info present: lives in a planned arena
    mem_id: int | None
    constant: bool  # data_buffer_idx > 0 with no allocation_info
    external_key: str | None  # fully qualified name of data stored outside the .pte


@dataclass(frozen=True)
class PteValue:
    """One method input or output: an EValue, usually a tensor."""

    index: int  # into the execution plan's values
    kind: str  # "tensor", "int", "bool", ...
    tensor: PteTensor | None = None


@dataclass(frozen=True)
class CompileSpec:
    key: str
    value: bytes


@dataclass(frozen=True)
class PteDelegate:
    index: int  # into the method's delegates
    id: str
    compile_specs: tuple[CompileSpec, ...]
    location: str  # "INLINE" (Program.backend_delegate_data) or "SEGMENT" (Program.segments)
    data_index: int
    payload_offset: int  # absolute file offset of the payload
    payload_size: int
    payload: bytes | None  # None when read with payloads=False

    def compile_spec(self, key: str) -> bytes | None:
        for spec in self.compile_specs:
            if spec.key == key:
                return spec.value
        return None

    @property
    def target_device(self) -> str | None:
        value = self.compile_spec(TARGET_DEVICE_KEY)
        return None if value is None else value.decode("utf-8", "replace")


@dataclass(frozen=True)
class PteMethod:
    name: str
    inputs: tuple[PteValue, ...]
    outputs: tuple[PteValue, ...]
    delegates: tuple[PteDelegate, ...]
    operators: tuple[str, ...]  # "name.overload" (".overload" omitted when empty)
    non_const_buffer_sizes: tuple[int, ...]  # index 0 is reserved
    buffer_devices: dict[int, str]  # non-CPU planned buffers: buffer index -> "cuda:N"
    external_constants: tuple[str, ...]  # keys of constant tensors stored in a .ptd
    placement: str  # HOST, DEVICE_PLANNED or DEVICE_RESIDENT (see classify_placement)


@dataclass(frozen=True)
class NamedData:
    key: str
    segment_index: int


@dataclass(frozen=True)
class PteProgram:
    file_size: int
    version: int
    extended_header: ExtendedHeader | None
    segments: tuple[Segment, ...]
    named_data: tuple[NamedData, ...]  # stored in this file
    methods: tuple[PteMethod, ...]
    constant_segment_index: int | None
    external_constants: tuple[str, ...] = field(default=())  # every method's, sorted

    @property
    def method_names(self) -> tuple[str, ...]:
        return tuple(method.name for method in self.methods)

    def method(self, name: str) -> PteMethod:
        for method in self.methods:
            if method.name == name:
                return method
        raise KeyError(f"program has no method '{name}' (methods: {', '.join(self.method_names)})")

    @property
    def needs_external_data(self) -> bool:
        """Whether some data the program uses lives outside it (a .ptd).

        Only constants stored by key are visible here: a delegate that looks
        named data up itself (e.g. XNNPACK weights tagged external) records the
        key inside its own payload.
        """
        return bool(self.external_constants)


class _Reader:
    """Bounds-checked access to one flatbuffer, over the generated bindings."""

    def __init__(self, buffer: bytes):
        self.buffer = buffer
        self.size = len(buffer)

    # accessor is called with no arguments; `...` lets it bind a loop variable as a
    # default (lambda i=i: ...), which mypy cannot match with Callable[[], T].
    def call(self, what: str, accessor: Callable[..., T]) -> T:
        try:
            return accessor()
        except (IndexError, struct.error, ValueError, TypeError, OverflowError, AttributeError) as error:
            raise PteFormatError(f"corrupt .pte: cannot read {what} ({error})") from error

    def length(self, what: str, accessor: Callable[[], int], element_size: int = 4) -> int:
        count = self.call(what, accessor)
        if count < 0 or count * element_size > self.size:
            raise PteFormatError(
                f"corrupt .pte: {what} claims {count} entries, more than a "
                f"{self.size}-byte flatbuffer can hold"
            )
        return count

    def text(self, what: str, accessor: Callable[[], bytes | None]) -> str | None:
        raw = self.call(what, accessor)
        if raw is None:
            return None
        try:
            return bytes(raw).decode("utf-8")
        except UnicodeDecodeError as error:
            raise PteFormatError(f"corrupt .pte: {what} is not UTF-8 ({error})") from error

    def byte_vector(self, what: str, table: Any, slot: int) -> tuple[int, int]:
        """(start, length) of a [ubyte] field in the flatbuffer."""

        def locate() -> tuple[int, int]:
            tab = table._tab
            offset = tab.Offset(slot)
            if offset == 0:
                return 0, 0
            return tab.Vector(offset), tab.VectorLen(offset)

        start, length = self.call(what, locate)
        if start < 0 or length < 0 or start + length > self.size:
            raise PteFormatError(
                f"corrupt .pte: {what} spans bytes {start}..{start + length}, "
                f"past the {self.size}-byte flatbuffer"
            )
        return start, length


def _device_name(device_type: int, device_index: int) -> str:
    kind = _DEVICE_TYPES.get(device_type, f"device_type({device_type})")
    return "cpu" if kind == "cpu" else f"{kind}:{device_index}"


def _read_tensor(reader: _Reader, fb, tensor, where: str) -> PteTensor:
    rank = reader.length(f"{where} sizes", tensor.SizesLength)
    sizes = tuple(reader.call(f"{where} sizes", lambda i=i: tensor.Sizes(i)) for i in range(rank))
    allocation = reader.call(f"{where} allocation_info", tensor.AllocationInfo)
    mem_id = None
    if allocation is not None:
        mem_id = reader.call(f"{where} allocation_info", allocation.MemoryId)
    data_buffer_idx = reader.call(f"{where} data_buffer_idx", tensor.DataBufferIdx)
    extra = reader.call(f"{where} extra_tensor_info", tensor.ExtraTensorInfo)
    device = "cpu"
    external_key = None
    if extra is not None:
        device = _device_name(
            reader.call(f"{where} device_type", extra.DeviceType),
            reader.call(f"{where} device_index", extra.DeviceIndex),
        )
        if reader.call(f"{where} location", extra.Location) == fb.TensorDataLocation.EXTERNAL:
            external_key = reader.text(f"{where} fully_qualified_name", extra.FullyQualifiedName) or ""
    dynamism = reader.call(f"{where} shape_dynamism", tensor.ShapeDynamism)
    return PteTensor(
        dtype=scalar_type_name(reader.call(f"{where} scalar_type", tensor.ScalarType)),
        sizes=sizes,
        dynamism=_DYNAMISM.get(dynamism, f"dynamism({dynamism})"),
        device=device,
        memory_planned=allocation is not None,
        mem_id=mem_id,
        constant=allocation is None and data_buffer_idx > 0,
        external_key=external_key,
    )


def _read_value(reader: _Reader, fb, plan, value_count: int, index: int, where: str) -> PteValue:
    if not 0 <= index < value_count:
        raise PteFormatError(f"corrupt .pte: {where} refers to value {index}, but the plan has {value_count} values")
    evalue = reader.call(f"{where} value {index}", lambda: plan.Values(index))
    kind_code = reader.call(f"{where} value {index} type", evalue.ValType)
    kind = _VALUE_KINDS.get(kind_code, f"kind({kind_code})")
    if kind != "tensor":
        return PteValue(index=index, kind=kind)
    table = reader.call(f"{where} value {index}", evalue.Val)
    if table is None:
        raise PteFormatError(f"corrupt .pte: {where} value {index} is a tensor with no data")
    tensor = fb.Tensor()
    reader.call(f"{where} value {index}", lambda: tensor.Init(table.Bytes, table.Pos))
    return PteValue(index=index, kind=kind, tensor=_read_tensor(reader, fb, tensor, f"{where} value {index}"))


def _index_list(reader: _Reader, what: str, length: Callable[[], int], item: Callable[[int], int]) -> list[int]:
    count = reader.length(what, length)
    return [reader.call(what, lambda i=i: item(i)) for i in range(count)]


def classify_placement(
    inputs: tuple[PteValue, ...],
    outputs: tuple[PteValue, ...],
    delegates: tuple[PteDelegate, ...],
    operators: tuple[str, ...],
    buffer_devices: dict[int, str],
) -> str:
    """Where a method's I/O lives.

    - device_resident: some method input or output tensor is tagged CUDA and
      not memory-planned: the caller hands device memory in and gets device
      memory back (PropagateDeviceConfig skip_h2d/skip_d2h with unplanned I/O).
    - device_planned: method I/O is host, but delegates run on planned CUDA
      arenas filled by et_copy H2D/D2H ops (a target_device compile spec).
    - host: everything is host memory; a delegate stages copies itself.
    """
    for value in inputs + outputs:
        if value.tensor is not None and value.tensor.device != "cpu" and not value.tensor.memory_planned:
            return DEVICE_RESIDENT
    has_copies = any(op.split(".")[0] in DEVICE_COPY_OPERATORS for op in operators)
    targets_device = any((d.target_device or "cpu").lower() != "cpu" for d in delegates)
    if buffer_devices or has_copies or targets_device:
        return DEVICE_PLANNED
    return HOST


def _read_delegate(
    reader: _Reader,
    fb,
    program,
    plan,
    index: int,
    where: str,
    data: bytes | memoryview | FileBytes,
    header: ExtendedHeader | None,
    segments: tuple[Segment, ...],
    payloads: bool,
) -> PteDelegate:
    delegate = reader.call(f"{where} delegate {index}", lambda: plan.Delegates(index))
    where = f"{where} delegate {index}"
    delegate_id = reader.text(f"{where} id", delegate.Id) or ""
    spec_count = reader.length(f"{where} compile_specs", delegate.CompileSpecsLength)
    specs = []
    for i in range(spec_count):
        spec = reader.call(f"{where} compile spec {i}", lambda i=i: delegate.CompileSpecs(i))
        key = reader.text(f"{where} compile spec {i} key", spec.Key) or ""
        start, length = reader.byte_vector(f"{where} compile spec '{key}' value", spec, _COMPILE_SPEC_VALUE_SLOT)
        specs.append(CompileSpec(key, bytes(reader.buffer[start:start + length])))
    processed = reader.call(f"{where} processed", delegate.Processed)
    if processed is None:
        raise PteFormatError(f"corrupt .pte: {where} ('{delegate_id}') has no processed data reference")
    location_code = reader.call(f"{where} processed location", processed.Location)
    data_index = reader.call(f"{where} processed index", processed.Index)
    location = _LOCATIONS.get(location_code)
    if location == "INLINE":
        count = reader.length("backend_delegate_data", program.BackendDelegateDataLength)
        if data_index >= count:
            raise PteFormatError(
                f"corrupt .pte: {where} ('{delegate_id}') refers to inline data {data_index}, "
                f"but the program has {count}"
            )
        inline = reader.call(f"backend_delegate_data {data_index}", lambda: program.BackendDelegateData(data_index))
        offset, size = reader.byte_vector(f"backend_delegate_data {data_index}", inline, _INLINE_DATA_SLOT)
    elif location == "SEGMENT":
        if header is None:
            raise PteFormatError(
                f"corrupt .pte: {where} ('{delegate_id}') is stored in segment {data_index}, "
                "but the file has no extended header locating segments"
            )
        if data_index >= len(segments):
            raise PteFormatError(
                f"corrupt .pte: {where} ('{delegate_id}') refers to segment {data_index}, "
                f"but the program has {len(segments)}"
            )
        segment = segments[data_index]
        offset = header.segment_base_offset + segment.offset
        size = segment.size
        if offset + size > len(data):
            raise PteFormatError(
                f"truncated .pte: segment {data_index} of {where} ('{delegate_id}') spans bytes "
                f"{offset}..{offset + size}, past the end of the {len(data)}-byte file"
            )
    else:
        raise PteFormatError(f"corrupt .pte: {where} ('{delegate_id}') has unknown data location {location_code}")
    return PteDelegate(
        index=index,
        id=delegate_id,
        compile_specs=tuple(specs),
        location=location,
        data_index=data_index,
        payload_offset=offset,
        payload_size=size,
        payload=bytes(data[offset:offset + size]) if payloads else None,
    )


def _read_method(reader, fb, program, index, data, header, segments, payloads) -> PteMethod:
    plan = reader.call(f"execution plan {index}", lambda: program.ExecutionPlan(index))
    name = reader.text(f"execution plan {index} name", plan.Name) or ""
    where = f"method '{name}'"
    value_count = reader.length(f"{where} values", plan.ValuesLength)
    input_indices = _index_list(reader, f"{where} inputs", plan.InputsLength, plan.Inputs)
    output_indices = _index_list(reader, f"{where} outputs", plan.OutputsLength, plan.Outputs)
    inputs = tuple(_read_value(reader, fb, plan, value_count, i, f"{where} input") for i in input_indices)
    outputs = tuple(_read_value(reader, fb, plan, value_count, i, f"{where} output") for i in output_indices)

    operator_count = reader.length(f"{where} operators", plan.OperatorsLength)
    operators = []
    for i in range(operator_count):
        op = reader.call(f"{where} operator {i}", lambda i=i: plan.Operators(i))
        op_name = reader.text(f"{where} operator {i} name", op.Name) or ""
        overload = reader.text(f"{where} operator {i} overload", op.Overload) or ""
        operators.append(f"{op_name}.{overload}" if overload else op_name)

    delegate_count = reader.length(f"{where} delegates", plan.DelegatesLength)
    delegates = tuple(
        _read_delegate(reader, fb, program, plan, i, where, data, header, segments, payloads)
        for i in range(delegate_count)
    )

    buffer_sizes = tuple(
        _index_list(reader, f"{where} non_const_buffer_sizes", plan.NonConstBufferSizesLength, plan.NonConstBufferSizes)
    )
    device_count = reader.length(f"{where} non_const_buffer_device", plan.NonConstBufferDeviceLength)
    buffer_devices = {}
    for i in range(device_count):
        entry = reader.call(f"{where} non_const_buffer_device {i}", lambda i=i: plan.NonConstBufferDevice(i))
        device = _device_name(
            reader.call(f"{where} buffer device type", entry.DeviceType),
            reader.call(f"{where} buffer device index", entry.DeviceIndex),
        )
        if device != "cpu":
            buffer_devices[reader.call(f"{where} buffer index", entry.BufferIdx)] = device

    external = set()
    for i in range(value_count):
        value = reader.call(f"{where} value {i}", lambda i=i: plan.Values(i))
        if reader.call(f"{where} value {i} type", value.ValType) != fb.KernelTypes.Tensor:
            continue
        table = reader.call(f"{where} value {i}", value.Val)
        if table is None:
            continue
        tensor = fb.Tensor()
        reader.call(f"{where} value {i}", lambda tensor=tensor, table=table: tensor.Init(table.Bytes, table.Pos))
        extra = reader.call(f"{where} value {i} extra_tensor_info", tensor.ExtraTensorInfo)
        if (
            extra is not None
            and reader.call(f"{where} value {i} location", extra.Location) == fb.TensorDataLocation.EXTERNAL
        ):
            external.add(reader.text(f"{where} value {i} fully_qualified_name", extra.FullyQualifiedName) or "")

    operators_tuple = tuple(operators)
    return PteMethod(
        name=name,
        inputs=inputs,
        outputs=outputs,
        delegates=delegates,
        operators=operators_tuple,
        non_const_buffer_sizes=buffer_sizes,
        buffer_devices=buffer_devices,
        external_constants=tuple(sorted(external)),
        placement=classify_placement(inputs, outputs, delegates, operators_tuple, buffer_devices),
    )


def _read_extended_header(data) -> ExtendedHeader | None:
    if len(data) < _EXTENDED_HEADER_OFFSET + 4 or data[8:12] != EXTENDED_HEADER_MAGIC:
        return None
    if len(data) < _EXTENDED_HEADER_OFFSET + _EXTENDED_HEADER.size:
        raise PteFormatError(
            f"truncated .pte: the extended header needs {8 + _EXTENDED_HEADER.size} bytes, the file has {len(data)}"
        )
    _, length, program_size, base, segment_size = _EXTENDED_HEADER.unpack(
        bytes(data[_EXTENDED_HEADER_OFFSET : _EXTENDED_HEADER_OFFSET + _EXTENDED_HEADER.size])
    )
    if length < _EXTENDED_HEADER.size:
        raise PteFormatError(f"corrupt .pte: extended header length {length} is below {_EXTENDED_HEADER.size}")
    if program_size < _EXTENDED_HEADER_OFFSET:
        raise PteFormatError(
            f"corrupt .pte: the extended header gives a {program_size}-byte flatbuffer, shorter than "
            f"its {_EXTENDED_HEADER_OFFSET}-byte prefix"
        )
    if program_size > len(data):
        raise PteFormatError(
            f"truncated .pte: the flatbuffer is {program_size} bytes but the file has only {len(data)}"
        )
    if segment_size and base + segment_size > len(data):
        raise PteFormatError(
            f"truncated .pte: segments end at byte {base + segment_size} but the file has only {len(data)}"
        )
    return ExtendedHeader(program_size=program_size, segment_base_offset=base, segment_data_size=segment_size)


def _read(data, payloads: bool) -> PteProgram:
    fb = _bindings()
    if len(data) < 8:
        raise PteFormatError(
            f"not an ExecuTorch program: {len(data)} bytes is shorter than the 8-byte flatbuffer prefix"
        )
    if data[4:8] != FILE_IDENTIFIER:
        raise PteFormatError(
            f"not an ExecuTorch program: expected file identifier {FILE_IDENTIFIER.decode()} at byte 4, "
            f"found {bytes(data[4:8])!r}"
        )
    header = _read_extended_header(data)
    program_size = header.program_size if header is not None else len(data)
    flatbuffer = bytes(data[:program_size])
    reader = _Reader(flatbuffer)
    root = struct.unpack_from("<I", flatbuffer, 0)[0]
    if root + 4 > program_size:
        raise PteFormatError(f"corrupt .pte: root table offset {root} is past the {program_size}-byte flatbuffer")
    program = reader.call("program", lambda: fb.Program.GetRootAs(flatbuffer, 0))
    version = reader.call("program version", program.Version)

    segment_count = reader.length("segments", program.SegmentsLength)
    segments = []
    for i in range(segment_count):
        entry = reader.call(f"segment {i}", lambda i=i: program.Segments(i))
        segments.append(
            Segment(reader.call(f"segment {i} offset", entry.Offset), reader.call(f"segment {i} size", entry.Size))
        )
    if header is not None:
        for i, segment in enumerate(segments):
            if segment.offset + segment.size > header.segment_data_size:
                raise PteFormatError(
                    f"corrupt .pte: segment {i} ends at {segment.offset + segment.size}, past the "
                    f"{header.segment_data_size} bytes of segment data"
                )
    segments_tuple = tuple(segments)

    named_count = reader.length("named_data", program.NamedDataLength)
    named = []
    for i in range(named_count):
        entry = reader.call(f"named_data {i}", lambda i=i: program.NamedData(i))
        named.append(
            NamedData(
                reader.text(f"named_data {i} key", entry.Key) or "",
                reader.call(f"named_data {i} segment", entry.SegmentIndex),
            )
        )

    constant_segment = reader.call("constant_segment", program.ConstantSegment)
    constant_index = None
    if constant_segment is not None:
        constant_index = reader.call("constant_segment index", constant_segment.SegmentIndex)

    method_count = reader.length("execution plans", program.ExecutionPlanLength)
    methods = tuple(
        _read_method(reader, fb, program, i, data, header, segments_tuple, payloads) for i in range(method_count)
    )
    external = sorted({key for method in methods for key in method.external_constants})
    return PteProgram(
        file_size=len(data),
        version=version,
        extended_header=header,
        segments=segments_tuple,
        named_data=tuple(named),
        methods=methods,
        constant_segment_index=constant_index,
        external_constants=tuple(external),
    )


def read_program(
    source: str | os.PathLike | bytes | bytearray | memoryview | FileBytes, *, payloads: bool = True
) -> PteProgram:
    """Describe a .pte given as a path, its bytes, or an open file (`FileBytes`).

    With payloads=False delegate payloads are located but not copied (their
    offsets and sizes are still checked against the file). A file is read
    (only the parts needed), never memory-mapped: one cut short meanwhile is
    an exception, not SIGBUS.
    """
    if isinstance(source, FileBytes):
        return _read(source, payloads)
    if isinstance(source, (bytes, bytearray, memoryview)):
        return _read(memoryview(source).cast("B") if not isinstance(source, bytes) else source, payloads)
    path = os.fspath(source)
    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size == 0:
            raise PteFormatError(f"not an ExecuTorch program: {path} is empty")

        def cut_short(offset: int) -> Exception:
            return PteFormatError(
                f"{path} was cut short while it was read: it ended at byte {offset}, and had {size} bytes "
                "when opened; read it again once it is written"
            )

        try:
            return _read(FileBytes(handle.fileno(), size, cut_short), payloads)
        except PteFormatError as error:
            if str(error).startswith(f"{path} "):
                raise
            raise PteFormatError(f"{path}: {error}") from error
