# The native engine provider ("tensorrt-native"): TensorRT's C++ API, as a
# library of its own, libtte_provider_tensorrt.so, installed beside the
# plugin, which registers it when it loads. It needs TensorRT's headers only:
# the TensorRT library is found at run time (cpp/providers/native/
# tensorrt_library.h), so the library has no NEEDED entry on TensorRT and
# ships in the wheel. The conda build links the prefix's libnvinfer instead.
#
#   TTE_WITH_TENSORRT       AUTO (default): build it when the headers are
#                           found; ON: a missing TensorRT is a configure error;
#                           OFF: never
#   TensorRT_ROOT           where TensorRT's headers are (CMake or environment
#                           variable); when set, nothing else is searched
#   TTE_TENSORRT_LINK       link libnvinfer at build time (a NEEDED entry, found
#                           through the install's RUNPATH) instead of finding
#                           it at run time; ON by default in conda builds
#                           ($CONDA_BUILD), OFF otherwise
#   TTE_TENSORRT_LEAN_ONLY  with TTE_TENSORRT_LINK: link libnvinfer_lean
#                           instead (version-compatible engines only). The
#                           run-time search tries libnvinfer, then the lean
#                           library, on its own.
#
# Without TensorRT_ROOT the roots searched are a conda build or environment
# prefix ($PREFIX, $CONDA_PREFIX), the TensorRT 11.1 headers beside the
# checkout (../shared/sdk/tensorrt-11.1, what CI and the wheel build use),
# CMAKE_PREFIX_PATH and the system paths, which cover the TensorRT SDK layout
# (include/, lib/, targets/<triple>/), Debian packages and JetPack
# (/usr/include/aarch64-linux-gnu). When none is found the build is exactly
# the one without this file.

string(TOUPPER "${TTE_WITH_TENSORRT}" _tte_trt_mode)
if(_tte_trt_mode STREQUAL "OFF")
  message(STATUS "Native TensorRT provider: off (TTE_WITH_TENSORRT=OFF)")
  return()
endif()
if(NOT _tte_trt_mode MATCHES "^(ON|AUTO)$")
  message(FATAL_ERROR "TTE_WITH_TENSORRT must be ON, OFF or AUTO, not '${TTE_WITH_TENSORRT}'")
endif()
set(_tte_trt_link_default OFF)
if(NOT "$ENV{CONDA_BUILD}" STREQUAL "")
  set(_tte_trt_link_default ON)
endif()
option(TTE_TENSORRT_LINK "Link libnvinfer at build time instead of finding it at run time"
       ${_tte_trt_link_default})

# Not found: a configure error when asked for, otherwise a status line.
function(tte_tensorrt_not_found why)
  if(_tte_trt_mode STREQUAL "ON")
    message(FATAL_ERROR
      "Native TensorRT provider: ${why}. Install TensorRT's headers (conda: libnvinfer-devel; "
      "the TensorRT SDK; JetPack) and pass -DTensorRT_ROOT=<dir with include/>, or build "
      "without it: -DTTE_WITH_TENSORRT=OFF")
  endif()
  message(STATUS "Native TensorRT provider: not built (${why}); pass -DTensorRT_ROOT=<TensorRT "
                 "with include/NvInferRuntime.h> to build it")
endfunction()

if(TensorRT_ROOT OR NOT "$ENV{TensorRT_ROOT}" STREQUAL "")
  set(_tte_trt_roots "${TensorRT_ROOT}" "$ENV{TensorRT_ROOT}")
  set(_tte_trt_search NO_DEFAULT_PATH)
else()
  set(_tte_trt_roots "$ENV{PREFIX}" "$ENV{CONDA_PREFIX}")
  set(_tte_trt_beside "${PROJECT_SOURCE_DIR}/../shared/sdk/tensorrt-11.1")
  if(EXISTS "${_tte_trt_beside}/include/NvInferRuntime.h")
    cmake_path(ABSOLUTE_PATH _tte_trt_beside NORMALIZE)
    list(APPEND _tte_trt_roots "${_tte_trt_beside}")
  endif()
  set(_tte_trt_search "")
endif()
list(REMOVE_ITEM _tte_trt_roots "")

# SDK tarballs keep the files under targets/<triple>/, conda's CUDA packages
# under targets/<arch>-linux/ (sbsa-linux on aarch64 servers).
set(_tte_trt_triples "${CMAKE_LIBRARY_ARCHITECTURE}" "${CMAKE_SYSTEM_PROCESSOR}-linux-gnu"
    "${CMAKE_SYSTEM_PROCESSOR}-linux")
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64)$")
  list(APPEND _tte_trt_triples "sbsa-linux")
endif()
list(REMOVE_ITEM _tte_trt_triples "" "-linux-gnu" "-linux")
set(_tte_trt_include_suffixes include)
set(_tte_trt_lib_suffixes lib lib64)
foreach(_t IN LISTS _tte_trt_triples)
  list(APPEND _tte_trt_include_suffixes "include/${_t}" "targets/${_t}/include")
  list(APPEND _tte_trt_lib_suffixes "lib/${_t}" "targets/${_t}/lib")
endforeach()

# Results are cached: search again when the roots or the library changed.
set(_tte_trt_query "${_tte_trt_roots}|${TTE_TENSORRT_LINK}|${TTE_TENSORRT_LEAN_ONLY}")
if(NOT "${_tte_trt_query}" STREQUAL "${TTE_TENSORRT_QUERY}")
  unset(TTE_TENSORRT_INCLUDE_DIR CACHE)
  unset(TTE_TENSORRT_LIBRARY CACHE)
  set(TTE_TENSORRT_QUERY "${_tte_trt_query}" CACHE INTERNAL "What TensorRT was last searched with")
endif()

# The roots above are paths on this machine. A cross build's toolchain
# (cmake/aarch64-linux-gnu.cmake) sets CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY,
# which would look for them only inside its sysroots; TensorRT's headers do
# not depend on the target architecture, so the roots are searched inside
# the sysroots first (as before) and then as given. The system paths keep
# the toolchain's mode.
find_path(TTE_TENSORRT_INCLUDE_DIR NvInferRuntime.h
  HINTS ${_tte_trt_roots}
  PATH_SUFFIXES ${_tte_trt_include_suffixes}
  NO_DEFAULT_PATH CMAKE_FIND_ROOT_PATH_BOTH)
if(NOT TTE_TENSORRT_INCLUDE_DIR AND NOT _tte_trt_search STREQUAL "NO_DEFAULT_PATH")
  find_path(TTE_TENSORRT_INCLUDE_DIR NvInferRuntime.h PATH_SUFFIXES ${_tte_trt_include_suffixes})
endif()
if(NOT TTE_TENSORRT_INCLUDE_DIR)
  if(_tte_trt_roots)
    list(JOIN _tte_trt_roots ", " _tte_trt_where)
    tte_tensorrt_not_found("NvInferRuntime.h not found under ${_tte_trt_where} or the system paths")
  else()
    tte_tensorrt_not_found("NvInferRuntime.h not found in the system paths")
  endif()
  return()
endif()

# TensorRT 11 spells the numbers TRT_*_ENTERPRISE; TensorRT 10 NV_TENSORRT_*.
file(STRINGS "${TTE_TENSORRT_INCLUDE_DIR}/NvInferVersion.h" _tte_trt_version_lines
  REGEX "^#define (TRT_(MAJOR|MINOR|PATCH)_ENTERPRISE|NV_TENSORRT_(MAJOR|MINOR|PATCH)) +[0-9]+")
foreach(_part MAJOR MINOR PATCH)
  set(_tte_trt_${_part} "")
  foreach(_macro "TRT_${_part}_ENTERPRISE" "NV_TENSORRT_${_part}")
    if(_tte_trt_${_part} STREQUAL "" AND _tte_trt_version_lines MATCHES "#define ${_macro} +([0-9]+)")
      set(_tte_trt_${_part} "${CMAKE_MATCH_1}")
    endif()
  endforeach()
endforeach()
set(TTE_TENSORRT_VERSION "${_tte_trt_MAJOR}.${_tte_trt_MINOR}.${_tte_trt_PATCH}")
if(_tte_trt_MAJOR STREQUAL "" OR _tte_trt_MAJOR LESS 11)
  # The provider uses TensorRT 11's interfaces (V2 device memory, the
  # versioned ILogger); a TensorRT 10 library needs a build against 10's
  # headers, which this file does not offer.
  tte_tensorrt_not_found(
    "TensorRT 11 or newer headers are needed, found version '${TTE_TENSORRT_VERSION}' in ${TTE_TENSORRT_INCLUDE_DIR}")
  return()
endif()

add_library(tte::tensorrt_headers INTERFACE IMPORTED GLOBAL)
set_target_properties(tte::tensorrt_headers PROPERTIES
  INTERFACE_INCLUDE_DIRECTORIES "${TTE_TENSORRT_INCLUDE_DIR}")
if(TTE_TENSORRT_LINK)
  # The pip wheels ship only the versioned file (libnvinfer_lean.so.11), so
  # the versioned name is searched too.
  set(_tte_trt_lib nvinfer)
  if(TTE_TENSORRT_LEAN_ONLY)
    set(_tte_trt_lib nvinfer_lean)
  endif()
  get_filename_component(_tte_trt_include_parent "${TTE_TENSORRT_INCLUDE_DIR}" DIRECTORY)
  find_library(TTE_TENSORRT_LIBRARY
    NAMES ${_tte_trt_lib} lib${_tte_trt_lib}.so.${_tte_trt_MAJOR}
    HINTS ${_tte_trt_roots} "${_tte_trt_include_parent}"
    PATH_SUFFIXES ${_tte_trt_lib_suffixes}
    ${_tte_trt_search})
  if(NOT TTE_TENSORRT_LIBRARY)
    tte_tensorrt_not_found("TTE_TENSORRT_LINK=ON but lib${_tte_trt_lib}.so was not found in the roots searched or beside the headers (${TTE_TENSORRT_INCLUDE_DIR})")
    return()
  endif()
endif()

# The provider's code, compiled once: into the provider library and into its
# test. Only ExecuTorch's headers are used (for ScalarType), not its library.
add_library(tte_native_tensorrt_provider OBJECT
  providers/native/native_tensorrt_provider.cpp
  providers/native/tensorrt_library.cpp
  providers/native/tensorrt_plugins.cpp
  providers/native/data_types.cpp
  providers/native/plan_header.cpp
  providers/native/tensorrt_logger.cpp
  providers/native/runtime_pool.cpp
  providers/native/tensorrt_engine.cpp
  providers/native/output_allocator.cpp
  providers/native/error_recorder.cpp
  # The plugin's device count and DeviceGuard (CUDA runtime only), compiled
  # into the provider too: it is a library of its own and links no part of
  # the plugin.
  src/cuda/cuda_device.cpp)
target_include_directories(tte_native_tensorrt_provider
  PUBLIC ${TTE_PUBLIC_INCLUDE} ${CMAKE_CURRENT_SOURCE_DIR}/providers
         # common/status.h and common/text.h (header-only), cuda/cuda_device.h
         ${CMAKE_CURRENT_SOURCE_DIR}/src
  PRIVATE $<TARGET_PROPERTY:executorch::runtime,INTERFACE_INCLUDE_DIRECTORIES>)
target_compile_definitions(tte_native_tensorrt_provider
  PUBLIC $<$<BOOL:${TTE_TENSORRT_LINK}>:TTE_TENSORRT_LINK=1>
  PRIVATE $<TARGET_PROPERTY:executorch::runtime,INTERFACE_COMPILE_DEFINITIONS>)
target_link_libraries(tte_native_tensorrt_provider PUBLIC tte::tensorrt_headers tte::cudart ${CMAKE_DL_LIBS})
if(TTE_TENSORRT_LINK)
  # The code calls TensorRT's two entry points by name: whatever links it
  # (the provider library, its test) links TensorRT too.
  target_link_libraries(tte_native_tensorrt_provider PUBLIC "${TTE_TENSORRT_LIBRARY}")
endif()
target_compile_options(tte_native_tensorrt_provider PRIVATE -Wall -Wextra)
tte_glibc_compat(tte_native_tensorrt_provider)

add_library(tte_provider_tensorrt SHARED providers/native/provider_entry.cpp)
target_link_libraries(tte_provider_tensorrt PRIVATE tte_native_tensorrt_provider)
target_compile_options(tte_provider_tensorrt PRIVATE -Wall -Wextra)
# --no-undefined: a TensorRT function called by name (rather than through
# the library found at run time) fails the link instead of the user's import.
target_link_options(tte_provider_tensorrt PRIVATE
  "LINKER:--no-undefined" "LINKER:--enable-new-dtags")
set_target_properties(tte_provider_tensorrt PROPERTIES
  SKIP_BUILD_RPATH OFF
  BUILD_RPATH "${TTE_CUDA_ROOT}/lib;${TTE_CUDA_ROOT}/lib64"
  # libcudart from the nvidia wheel (or $ORIGIN in a conda prefix); TensorRT
  # is found by the provider itself, relative to its own folder.
  INSTALL_RPATH "${TTE_INSTALL_RPATH}")
if(TTE_TENSORRT_LINK)
  get_filename_component(_tte_trt_lib_dir "${TTE_TENSORRT_LIBRARY}" DIRECTORY)
  set_property(TARGET tte_provider_tensorrt APPEND PROPERTY BUILD_RPATH "${_tte_trt_lib_dir}")
endif()
tte_glibc_compat(tte_provider_tensorrt)
install(TARGETS tte_provider_tensorrt LIBRARY DESTINATION ${TTE_INSTALL_LIBDIR})

if(TTE_TENSORRT_LINK)
  message(STATUS "Native TensorRT provider: TensorRT ${TTE_TENSORRT_VERSION} headers "
                 "${TTE_TENSORRT_INCLUDE_DIR}, linked to ${TTE_TENSORRT_LIBRARY}")
else()
  message(STATUS "Native TensorRT provider: TensorRT ${TTE_TENSORRT_VERSION} headers "
                 "${TTE_TENSORRT_INCLUDE_DIR}; the library is found at run time")
endif()
