"""ctypes mirror of the plugin's C headers.

cpp/include/torch_tensorrt_executorch/{dlpack,engine_provider,c_api}.h are the
contract; this module restates their structs and the prototype of every
function, and `library` applies the prototypes to the loaded plugin. Keep
the field order identical to the headers (both are append-only).
"""

from __future__ import annotations

from ctypes import (
    CFUNCTYPE,
    POINTER,
    Structure,
    c_char,
    c_char_p,
    c_double,
    c_int32,
    c_int64,
    c_size_t,
    c_uint8,
    c_uint16,
    c_uint32,
    c_uint64,
    c_void_p,
)

TTE_C_API_VERSION = 2
TTE_ENGINE_PROVIDER_ABI_VERSION = 2
TTE_ERROR_MESSAGE_CAPACITY = 1024
TTE_MAX_RANK = 16
BACKEND_NAME = "TensorRTBackend"

# TteMemoryKind
TTE_MEMORY_DEVICE = 0
TTE_MEMORY_HOST = 1

# TteProviderKind
TTE_PROVIDER_NATIVE = 0
TTE_PROVIDER_PYTHON = 1
TTE_PROVIDER_OTHER = 2

# TteLogLevel
TTE_LOG_DEBUG = 0
TTE_LOG_INFO = 1
TTE_LOG_WARNING = 2
TTE_LOG_ERROR = 3
TTE_LOG_OFF = 4

# TteOptionType
TTE_OPTION_BOOL = 0
TTE_OPTION_INT = 1
TTE_OPTION_STRING = 2

# TteValueTag
TTE_VALUE_NONE = 0
TTE_VALUE_TENSOR = 1
TTE_VALUE_INT = 2
TTE_VALUE_DOUBLE = 3
TTE_VALUE_BOOL = 4
TTE_VALUE_OTHER = 5

TTE_DEVICE_CPU = 0
TTE_DEVICE_CUDA = 1

# DLDeviceType values used here.
KDL_CPU = 1
KDL_CUDA = 2
KDL_CUDA_HOST = 3
KDL_CUDA_MANAGED = 13
# DLDeviceTypes whose memory a CUDA stream orders.
CUDA_DEVICE_TYPES = (KDL_CUDA, KDL_CUDA_MANAGED)

TteStatus = c_int32


# ---- dlpack.h ---------------------------------------------------------------


class DLPackVersion(Structure):
    _fields_ = [("major", c_uint32), ("minor", c_uint32)]


class DLDevice(Structure):
    _fields_ = [("device_type", c_int32), ("device_id", c_int32)]


class DLDataType(Structure):
    _fields_ = [("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16)]


class DLTensor(Structure):
    _fields_ = [
        ("data", c_void_p),
        ("device", DLDevice),
        ("ndim", c_int32),
        ("dtype", DLDataType),
        ("shape", POINTER(c_int64)),
        ("strides", POINTER(c_int64)),
        ("byte_offset", c_uint64),
    ]


class DLManagedTensor(Structure):
    pass


DLManagedTensorDeleter = CFUNCTYPE(None, POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [
    ("dl_tensor", DLTensor),
    ("manager_ctx", c_void_p),
    ("deleter", DLManagedTensorDeleter),
]


class DLManagedTensorVersioned(Structure):
    pass


DLManagedTensorVersionedDeleter = CFUNCTYPE(None, POINTER(DLManagedTensorVersioned))
DLManagedTensorVersioned._fields_ = [
    ("version", DLPackVersion),
    ("manager_ctx", c_void_p),
    ("deleter", DLManagedTensorVersionedDeleter),
    ("flags", c_uint64),
    ("dl_tensor", DLTensor),
]

DLPACK_FLAG_BITMASK_READ_ONLY = 1 << 0
DLPACK_FLAG_BITMASK_IS_COPIED = 1 << 1


# ---- engine_provider.h ------------------------------------------------------


class TteError(Structure):
    _fields_ = [("code", c_int32), ("message", c_char * TTE_ERROR_MESSAGE_CAPACITY)]

    def text(self) -> str:
        message: bytes = self.message  # a c_char array field reads as bytes
        return message.decode("utf-8", errors="replace")


class TteEngineLoadOptions(Structure):
    _fields_ = [
        ("struct_size", c_uint32),
        ("device_id", c_int32),
        ("has_weight_streaming_budget", c_int32),
        ("weight_streaming_budget", c_int64),
        ("refuse_engine_host_code", c_int32),
        ("has_dla_core", c_int32),
        ("dla_core", c_int32),
        ("num_plugin_libraries", c_int32),
        ("plugin_libraries", POINTER(c_char_p)),
        ("runtime_cache_path", c_char_p),
        ("user_managed_device_memory", c_int32),
    ]


class TteIoTensorDesc(Structure):
    _fields_ = [
        ("name", c_char_p),
        ("is_input", c_int32),
        ("scalar_type", c_int32),
        ("rank", c_int32),
        ("aliased_input", c_int32),
        ("is_shape_tensor", c_int32),
    ]


ErrorPtr = POINTER(TteError)
Int64Ptr = POINTER(c_int64)

ReleaseFn = CFUNCTYPE(None, c_void_p)
DeserializeFn = CFUNCTYPE(
    TteStatus, c_void_p, c_void_p, c_uint64, POINTER(TteEngineLoadOptions), POINTER(c_void_p), ErrorPtr
)
CountFn = CFUNCTYPE(TteStatus, c_void_p, POINTER(c_int32), ErrorPtr)
DescribeIoTensorFn = CFUNCTYPE(TteStatus, c_void_p, c_int32, POINTER(TteIoTensorDesc), ErrorPtr)
ProfileShapeFn = CFUNCTYPE(TteStatus, c_void_p, c_int32, c_int32, Int64Ptr, Int64Ptr, Int64Ptr, ErrorPtr)
SelectProfileFn = CFUNCTYPE(TteStatus, c_void_p, c_int32, c_void_p, ErrorPtr)
SetInputShapeFn = CFUNCTYPE(TteStatus, c_void_p, c_int32, Int64Ptr, c_int32, ErrorPtr)
GetOutputShapeFn = CFUNCTYPE(TteStatus, c_void_p, c_int32, Int64Ptr, c_int32, POINTER(c_int32), ErrorPtr)
SetTensorAddressFn = CFUNCTYPE(TteStatus, c_void_p, c_int32, c_void_p, ErrorPtr)
EnqueueFn = CFUNCTYPE(TteStatus, c_void_p, c_void_p, ErrorPtr)
DestroyFn = CFUNCTYPE(None, c_void_p)
EngineCapturableFn = CFUNCTYPE(TteStatus, c_void_p, c_void_p, POINTER(c_int32), ErrorPtr)
DescribeRuntimeFn = CFUNCTYPE(TteStatus, c_void_p, c_char_p, c_uint32, ErrorPtr)
AttachHostFn = CFUNCTYPE(None, c_void_p, c_void_p)
# execute(engine, const TteEngineExecution*, error): the compiled binding
# implements it for Python providers and reads the struct itself.
ExecuteFn = CFUNCTYPE(TteStatus, c_void_p, c_void_p, ErrorPtr)
DeviceMemorySizeFn = CFUNCTYPE(TteStatus, c_void_p, c_int32, Int64Ptr, ErrorPtr)
SetDeviceMemoryFn = CFUNCTYPE(TteStatus, c_void_p, c_void_p, c_int64, ErrorPtr)
CreateExecutionContextFn = CFUNCTYPE(
    TteStatus, c_void_p, POINTER(TteEngineLoadOptions), POINTER(c_void_p), ErrorPtr
)
SetOutputCapacityFn = CFUNCTYPE(TteStatus, c_void_p, c_int32, c_int64, ErrorPtr)
GetOutputResultFn = CFUNCTYPE(
    TteStatus, c_void_p, c_int32, Int64Ptr, c_int32, POINTER(c_int32), POINTER(c_void_p), ErrorPtr
)


class TteEngineProvider(Structure):
    _fields_ = [
        ("abi_version", c_uint32),
        ("struct_size", c_uint32),
        ("name", c_char_p),
        ("memory_kind", c_int32),
        ("enqueue_capturable", c_int32),
        ("user_data", c_void_p),
        ("release", ReleaseFn),
        ("deserialize", DeserializeFn),
        ("num_io_tensors", CountFn),
        ("describe_io_tensor", DescribeIoTensorFn),
        ("num_profiles", CountFn),
        ("profile_shape", ProfileShapeFn),
        ("select_profile", SelectProfileFn),
        ("set_input_shape", SetInputShapeFn),
        ("get_output_shape", GetOutputShapeFn),
        ("set_tensor_address", SetTensorAddressFn),
        ("enqueue", EnqueueFn),
        ("destroy", DestroyFn),
        ("engine_capturable", EngineCapturableFn),
        ("describe_runtime", DescribeRuntimeFn),
        ("attach_host", AttachHostFn),
        ("execute", ExecuteFn),
        # Python providers leave these two NULL: TensorRT's Python contexts
        # allocate their own scratch.
        ("device_memory_size", DeviceMemorySizeFn),
        ("set_device_memory", SetDeviceMemoryFn),
        ("create_execution_context", CreateExecutionContextFn),
        # Version 2: data-dependent output shapes.
        ("set_output_capacity", SetOutputCapacityFn),
        ("get_output_result", GetOutputResultFn),
    ]


# ---- c_api.h ----------------------------------------------------------------


class TteBackendOption(Structure):
    _fields_ = [
        ("backend", c_char_p),
        ("key", c_char_p),
        ("type", c_int32),
        ("int_value", c_int64),
        ("string_value", c_char_p),
    ]


class TteLoadOptionInfo(Structure):
    _fields_ = [
        ("struct_size", c_uint32),
        ("name", c_char_p),
        ("accepted_types", c_uint32),
        ("type", c_char_p),
        ("must_be", c_char_p),
        ("fallback", c_char_p),
        ("doc", c_char_p),
        ("program_only", c_int32),
    ]


class TteBuffer(Structure):
    _fields_ = [("data", c_void_p), ("size", c_size_t)]


class TteProgramOptions(Structure):
    _fields_ = [
        ("struct_size", c_uint32),
        ("data_paths", POINTER(c_char_p)),
        ("num_data_paths", c_size_t),
        ("data_buffers", POINTER(TteBuffer)),
        ("num_data_buffers", c_size_t),
        ("backend_options", POINTER(TteBackendOption)),
        ("num_backend_options", c_size_t),
        ("enable_etdump", c_int32),
        ("max_planned_memory", c_uint64),
    ]


class TteValueInfo(Structure):
    _fields_ = [
        ("tag", c_int32),
        ("scalar_type", c_int32),
        ("rank", c_int32),
        ("sizes", c_int64 * TTE_MAX_RANK),
        ("is_memory_planned", c_int32),
        ("device_type", c_int32),
        ("device_index", c_int32),
        ("nbytes", c_uint64),
    ]


class TteInput(Structure):
    _fields_ = [
        ("tag", c_int32),
        ("tensor", POINTER(DLTensor)),
        ("int_value", c_int64),
        ("double_value", c_double),
        ("bool_value", c_int32),
    ]


class TteOutput(Structure):
    _fields_ = [
        ("tag", c_int32),
        ("tensor", POINTER(DLManagedTensorVersioned)),
        ("int_value", c_int64),
        ("double_value", c_double),
        ("bool_value", c_int32),
    ]


class TteRuntimeStats(Structure):
    _fields_ = [
        ("struct_size", c_uint32),
        ("h2d_copies", c_uint64),
        ("h2d_bytes", c_uint64),
        ("d2h_copies", c_uint64),
        ("d2h_bytes", c_uint64),
        ("d2d_copies", c_uint64),
        ("d2d_bytes", c_uint64),
        ("enqueues", c_uint64),
        ("graph_captures", c_uint64),
        ("graph_replays", c_uint64),
        ("graph_fallbacks", c_uint64),
        ("scratch_arenas", c_uint64),
        ("scratch_arena_bytes", c_uint64),
        ("scratch_arena_peak_bytes", c_uint64),
        ("shared_engines", c_uint64),
        ("shared_engine_reuses", c_uint64),
        ("graph_io_copies", c_uint64),
        ("graph_io_bytes", c_uint64),
        ("graph_uncapturable", c_uint64),
        ("plan_digests", c_uint64),
        ("plan_digest_bytes", c_uint64),
        ("graph_updates", c_uint64),
        ("mapped_copies", c_uint64),
        ("mapped_bytes", c_uint64),
        ("run_repeats", c_uint64),
    ]


ProgramPtr = c_void_p
_E = ErrorPtr

# Every function of c_api.h: name -> (restype, argtypes).
PROTOTYPES: dict[str, tuple[object, list[object]]] = {
    # The plugin.
    "tte_c_api_version": (c_uint32, []),
    "tte_version": (c_char_p, []),
    "tte_executorch_version": (c_char_p, []),
    "tte_owns_backend_registration": (c_int32, []),
    "tte_registration_status": (TteStatus, [_E]),
    "tte_registration_owner_path": (c_char_p, []),
    "tte_library_path": (c_char_p, []),
    "tte_set_log_level": (None, [c_int32]),
    "tte_get_log_level": (c_int32, []),
    "tte_cuda_device_count": (c_int32, []),
    "tte_cuda_unavailable_reason": (c_char_p, []),
    "tte_cuda_allocator_owner": (c_char_p, []),
    # Takes the char* the library allocated; c_void_p keeps ctypes from
    # converting (and losing) the pointer.
    "tte_free_string": (None, [c_void_p]),
    # Engine providers.
    "tte_register_engine_provider": (TteStatus, [POINTER(TteEngineProvider), c_int32, _E]),
    "tte_unregister_engine_provider": (TteStatus, [c_char_p, _E]),
    "tte_num_engine_providers": (c_size_t, []),
    "tte_engine_provider_name": (c_char_p, [c_size_t]),
    "tte_load_engine_provider_library": (TteStatus, [c_char_p, c_int32, _E]),
    "tte_engine_provider_runtime": (TteStatus, [c_char_p, POINTER(c_void_p), _E]),
    # Delegate blob reader.
    "tte_blob_describe_json": (TteStatus, [c_void_p, c_uint64, POINTER(c_void_p), _E]),
    # Caller stream.
    "tte_set_thread_stream": (None, [c_void_p]),
    "tte_clear_thread_stream": (None, []),
    "tte_get_thread_stream": (c_int32, [POINTER(c_void_p)]),
    # Programs: the load options.
    "tte_num_load_options": (c_size_t, []),
    "tte_load_option_info": (TteStatus, [c_size_t, POINTER(TteLoadOptionInfo), _E]),
    # Programs.
    "tte_program_open_file": (TteStatus, [c_char_p, POINTER(TteProgramOptions), POINTER(ProgramPtr), _E]),
    "tte_program_open_buffer": (
        TteStatus,
        [c_void_p, c_size_t, POINTER(TteProgramOptions), POINTER(ProgramPtr), _E],
    ),
    "tte_program_close": (None, [ProgramPtr]),
    "tte_program_last_error": (c_char_p, [ProgramPtr]),
    "tte_program_num_methods": (TteStatus, [ProgramPtr, POINTER(c_size_t), _E]),
    "tte_program_method_name": (TteStatus, [ProgramPtr, c_size_t, POINTER(c_char_p), _E]),
    "tte_program_load_method": (TteStatus, [ProgramPtr, c_char_p, _E]),
    "tte_program_method_io_count": (
        TteStatus,
        [ProgramPtr, c_char_p, POINTER(c_size_t), POINTER(c_size_t), _E],
    ),
    "tte_program_input_info": (TteStatus, [ProgramPtr, c_char_p, c_size_t, POINTER(TteValueInfo), _E]),
    "tte_program_output_info": (TteStatus, [ProgramPtr, c_char_p, c_size_t, POINTER(TteValueInfo), _E]),
    "tte_program_describe_json": (TteStatus, [ProgramPtr, POINTER(c_void_p), _E]),
    "tte_program_run": (
        TteStatus,
        [ProgramPtr, c_char_p, POINTER(TteInput), c_size_t, c_int32, POINTER(TteOutput), c_size_t, _E],
    ),
    "tte_program_write_etdump": (TteStatus, [ProgramPtr, c_char_p, _E]),
    # Method handles: runs go through the compiled extension (methods), which
    # takes these from the plugin itself; listed so a plugin without them is
    # refused at load.
    "tte_program_get_method": (TteStatus, [ProgramPtr, c_char_p, POINTER(c_void_p), _E]),
    "tte_method_release": (None, [c_void_p]),
    "tte_method_io_count": (TteStatus, [c_void_p, POINTER(c_size_t), POINTER(c_size_t), _E]),
    "tte_method_run": (TteStatus, [c_void_p, c_void_p, c_size_t, c_void_p, c_void_p, c_size_t, _E]),
    # Runtime statistics.
    "tte_get_runtime_stats": (None, [POINTER(TteRuntimeStats)]),
    "tte_reset_runtime_stats": (None, []),
}

