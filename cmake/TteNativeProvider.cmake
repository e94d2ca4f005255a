# The native engine provider ("tensorrt-native"): TensorRT's C++ API, built
# into the plugin when TensorRT headers and a runtime library are found.
#
#   TTE_WITH_TENSORRT       ON (fail when not found), OFF, AUTO (default)
#   TTE_TENSORRT_LEAN_ONLY  link only libnvinfer_lean (version-compatible
#                           engines), instead of libnvinfer
#   TensorRT_ROOT           where TensorRT is (CMake or environment variable);
#                           when set, nothing else is searched
#
# Without it the roots searched are a conda build or environment prefix
# ($PREFIX, $CONDA_PREFIX), CMAKE_PREFIX_PATH and the system paths, which
# cover the TensorRT SDK layout (include/, lib/, targets/<triple>/), Debian
# packages and JetPack (/usr/include/aarch64-linux-gnu). When it is not found
# the build is exactly the one without this file.

string(TOUPPER "${TTE_WITH_TENSORRT}" _tte_trt_mode)
if(_tte_trt_mode STREQUAL "OFF")
  message(STATUS "Native TensorRT provider: off (TTE_WITH_TENSORRT=OFF)")
  return()
endif()
if(NOT _tte_trt_mode MATCHES "^(ON|AUTO)$")
  message(FATAL_ERROR "TTE_WITH_TENSORRT must be ON, OFF or AUTO, not '${TTE_WITH_TENSORRT}'")
endif()

# Not found: a configure error when asked for, otherwise a status line.
function(tte_tensorrt_not_found why)
  if(_tte_trt_mode STREQUAL "ON")
    message(FATAL_ERROR
      "Native TensorRT provider: ${why}. Install TensorRT's headers and libraries (conda: "
      "libnvinfer-devel, or libnvinfer-lean-devel with -DTTE_TENSORRT_LEAN_ONLY=ON; or the "
      "TensorRT SDK) and pass -DTensorRT_ROOT=<dir with include/ and lib/>, or build without "
      "it: -DTTE_WITH_TENSORRT=OFF")
  endif()
  message(STATUS "Native TensorRT provider: not built (${why})")
endfunction()

if(TensorRT_ROOT OR NOT "$ENV{TensorRT_ROOT}" STREQUAL "")
  set(_tte_trt_roots "${TensorRT_ROOT}" "$ENV{TensorRT_ROOT}")
  set(_tte_trt_search NO_DEFAULT_PATH)
else()
  set(_tte_trt_roots "$ENV{PREFIX}" "$ENV{CONDA_PREFIX}")
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
set(_tte_trt_query "${_tte_trt_roots}|${TTE_TENSORRT_LEAN_ONLY}")
if(NOT "${_tte_trt_query}" STREQUAL "${TTE_TENSORRT_QUERY}")
  unset(TTE_TENSORRT_INCLUDE_DIR CACHE)
  unset(TTE_TENSORRT_LIBRARY CACHE)
  set(TTE_TENSORRT_QUERY "${_tte_trt_query}" CACHE INTERNAL "What TensorRT was last searched with")
endif()

find_path(TTE_TENSORRT_INCLUDE_DIR NvInferRuntime.h
  HINTS ${_tte_trt_roots}
  PATH_SUFFIXES ${_tte_trt_include_suffixes}
  ${_tte_trt_search})
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
if(_tte_trt_MAJOR STREQUAL "" OR _tte_trt_MAJOR LESS 10)
  tte_tensorrt_not_found(
    "TensorRT 10 or newer is needed, found version '${TTE_TENSORRT_VERSION}' in ${TTE_TENSORRT_INCLUDE_DIR}")
  return()
endif()

# The pip wheels ship only the versioned file (libnvinfer_lean.so.11), so the
# versioned name is searched too.
if(TTE_TENSORRT_LEAN_ONLY)
  set(_tte_trt_lib nvinfer_lean)
else()
  set(_tte_trt_lib nvinfer)
endif()
get_filename_component(_tte_trt_include_parent "${TTE_TENSORRT_INCLUDE_DIR}" DIRECTORY)
find_library(TTE_TENSORRT_LIBRARY
  NAMES ${_tte_trt_lib} lib${_tte_trt_lib}.so.${_tte_trt_MAJOR}
  HINTS ${_tte_trt_roots} "${_tte_trt_include_parent}"
  PATH_SUFFIXES ${_tte_trt_lib_suffixes}
  ${_tte_trt_search})
if(NOT TTE_TENSORRT_LIBRARY)
  tte_tensorrt_not_found("lib${_tte_trt_lib}.so not found in the roots searched or beside the headers (${TTE_TENSORRT_INCLUDE_DIR})")
  return()
endif()

add_library(tte::tensorrt SHARED IMPORTED GLOBAL)
set_target_properties(tte::tensorrt PROPERTIES
  IMPORTED_LOCATION "${TTE_TENSORRT_LIBRARY}"
  INTERFACE_INCLUDE_DIRECTORIES "${TTE_TENSORRT_INCLUDE_DIR}")

# Compiled once, linked into the plugin and into its test. Only ExecuTorch's
# headers are used (for ScalarType), not its library.
add_library(tte_native_tensorrt_provider OBJECT
  providers/native/native_tensorrt_provider.cpp
  providers/native/data_types.cpp
  providers/native/plan_header.cpp
  providers/native/tensorrt_logger.cpp
  providers/native/runtime_pool.cpp
  providers/native/tensorrt_engine.cpp)
target_include_directories(tte_native_tensorrt_provider
  PUBLIC ${TTE_PUBLIC_INCLUDE} ${CMAKE_CURRENT_SOURCE_DIR}/providers
         # common/status.h (header-only), the one status type
         ${CMAKE_CURRENT_SOURCE_DIR}/src
  PRIVATE $<TARGET_PROPERTY:executorch::runtime,INTERFACE_INCLUDE_DIRECTORIES>)
target_compile_definitions(tte_native_tensorrt_provider
  PUBLIC $<$<BOOL:${TTE_TENSORRT_LEAN_ONLY}>:TTE_TENSORRT_LEAN_ONLY=1>
  PRIVATE $<TARGET_PROPERTY:executorch::runtime,INTERFACE_COMPILE_DEFINITIONS>)
target_link_libraries(tte_native_tensorrt_provider PUBLIC tte::tensorrt tte::cudart)
target_compile_options(tte_native_tensorrt_provider PRIVATE -Wall -Wextra)

target_sources(executorch_backend_tensorrt PRIVATE providers/native/plugin_registration.cpp)
target_link_libraries(executorch_backend_tensorrt PRIVATE tte_native_tensorrt_provider)
target_compile_definitions(executorch_backend_tensorrt PRIVATE TTE_HAVE_NATIVE_TENSORRT=1)
get_filename_component(_tte_trt_lib_dir "${TTE_TENSORRT_LIBRARY}" DIRECTORY)
set_property(TARGET executorch_backend_tensorrt APPEND PROPERTY BUILD_RPATH "${_tte_trt_lib_dir}")
# Where the pip wheels put the libraries, relative to the installed plugin, in
# wheel builds (scikit-build-core sets SKBUILD); conda builds find them in the
# prefix's lib/ through TTE_INSTALL_RPATH alone.
if(DEFINED SKBUILD)
  if(TTE_TENSORRT_LEAN_ONLY)
    set_property(TARGET executorch_backend_tensorrt APPEND PROPERTY INSTALL_RPATH
      "$ORIGIN/../../tensorrt_lean_libs")
  else()
    set_property(TARGET executorch_backend_tensorrt APPEND PROPERTY INSTALL_RPATH
      "$ORIGIN/../../tensorrt_libs")
  endif()
endif()

message(STATUS "Native TensorRT provider: TensorRT ${TTE_TENSORRT_VERSION}, "
               "headers ${TTE_TENSORRT_INCLUDE_DIR}, library ${TTE_TENSORRT_LIBRARY}")
