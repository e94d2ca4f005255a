# The native engine providers: TensorRT's C++ API, one library per TensorRT
# major, compiled from the same sources (cpp/providers/native/) against that
# major's headers: libtte_provider_tensorrt11.so ("tensorrt-native-11") and
# libtte_provider_tensorrt10.so ("tensorrt-native-10"), installed beside the
# plugin, which registers both when it loads. A plan runs only under the
# TensorRT major that built it, and C++ interfaces differ between majors, so
# one library cannot serve both. Each needs its major's headers only: the
# TensorRT library is found at run time (cpp/providers/native/
# tensorrt_library.h), so neither has a NEEDED entry on TensorRT and both
# ship in the wheel. The conda build links the prefix's libnvinfer instead.
#
#   TTE_WITH_TENSORRT       AUTO (default): build each provider whose headers
#                           are found; ON: a configure error when neither is;
#                           OFF: never
#   TensorRT_ROOT           where TensorRT 11's headers are (CMake or
#                           environment variable); when set, nothing else is
#                           searched for the 11 provider
#   TensorRT10_ROOT         the same for TensorRT 10's headers and the 10
#                           provider
#   TTE_TENSORRT_LINK       link libnvinfer at build time (a NEEDED entry, found
#                           through the install's RUNPATH) instead of finding
#                           it at run time; ON by default in conda builds
#                           ($CONDA_BUILD), OFF otherwise
#   TTE_TENSORRT_MAJORS     which providers to look for: "10;11" (default);
#                           a conda build names its variant's one (11, or 10
#                           for tegra, whose TensorRT is JetPack's)
#   TTE_TENSORRT_LEAN_ONLY  with TTE_TENSORRT_LINK: link libnvinfer_lean
#                           instead (version-compatible engines only). The
#                           run-time search tries libnvinfer, then the lean
#                           library, on its own.
#
# Without a root the places searched for each major are a conda build or
# environment prefix ($PREFIX, $CONDA_PREFIX), the headers beside the
# checkout (../shared/sdk/tensorrt-11.1 and ../shared/sdk/tensorrt-10.3, what
# CI and the wheel build use), CMAKE_PREFIX_PATH and the system paths, which
# cover the TensorRT SDK layout (include/, lib/, targets/<triple>/), Debian
# packages and JetPack (/usr/include/aarch64-linux-gnu); headers of another
# major found there are passed over. The 10 provider is compiled against the
# oldest TensorRT 10 it supports (10.3, JetPack 6's), so it runs with every
# later 10.x; likewise the 11 provider against 11.1. When no headers are
# found the build is exactly the one without this file.

string(TOUPPER "${TTE_WITH_TENSORRT}" _tte_trt_mode)
if(_tte_trt_mode STREQUAL "OFF")
  message(STATUS "Native TensorRT providers: off (TTE_WITH_TENSORRT=OFF)")
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

# Reads MAJOR.MINOR.PATCH from NvInferVersion.h in `include_dir` into
# `out_major` and `out_version`. TensorRT 11 and 10.16 spell the numbers
# TRT_*_ENTERPRISE, 10.3 NV_TENSORRT_*.
function(tte_tensorrt_header_version include_dir out_major out_version)
  file(STRINGS "${include_dir}/NvInferVersion.h" _lines
    REGEX "^#define (TRT_(MAJOR|MINOR|PATCH)_ENTERPRISE|NV_TENSORRT_(MAJOR|MINOR|PATCH)) +[0-9]+")
  foreach(_part MAJOR MINOR PATCH)
    set(_${_part} "")
    foreach(_macro "TRT_${_part}_ENTERPRISE" "NV_TENSORRT_${_part}")
      if(_${_part} STREQUAL "" AND _lines MATCHES "#define ${_macro} +([0-9]+)")
        set(_${_part} "${CMAKE_MATCH_1}")
      endif()
    endforeach()
  endforeach()
  set(${out_major} "${_MAJOR}" PARENT_SCOPE)
  set(${out_version} "${_MAJOR}.${_MINOR}.${_PATCH}" PARENT_SCOPE)
endfunction()

# The provider of TensorRT `major`: finds its headers under `root_var`
# (CMake or environment variable) or the default places plus `beside` (the
# SDK folder beside the checkout), and adds tte_native_tensorrt<major>_provider
# (its objects, which the tests link too) and tte_provider_tensorrt<major>
# (the library). Sets TTE_NATIVE_PROVIDER_<major> in the parent scope to the
# headers' version, or to "" with the reason in TTE_NATIVE_PROVIDER_<major>_WHY.
function(tte_add_native_provider major root_var beside)
  set(TTE_NATIVE_PROVIDER_${major} "" PARENT_SCOPE)
  set(_root "${${root_var}}")
  if(NOT "${_root}" STREQUAL "" OR NOT "$ENV{${root_var}}" STREQUAL "")
    set(_roots "${_root}" "$ENV{${root_var}}")
    set(_search NO_DEFAULT_PATH)
  else()
    set(_roots "$ENV{PREFIX}" "$ENV{CONDA_PREFIX}")
    set(_beside "${PROJECT_SOURCE_DIR}/../shared/sdk/${beside}")
    if(EXISTS "${_beside}/include/NvInferRuntime.h")
      cmake_path(ABSOLUTE_PATH _beside NORMALIZE)
      list(APPEND _roots "${_beside}")
    endif()
    set(_search "")
  endif()
  list(REMOVE_ITEM _roots "")

  # Results are cached: search again when the roots or the library changed.
  set(_query "${_roots}|${TTE_TENSORRT_LINK}|${TTE_TENSORRT_LEAN_ONLY}")
  if(NOT "${_query}" STREQUAL "${TTE_TENSORRT${major}_QUERY}")
    unset(TTE_TENSORRT${major}_INCLUDE_DIR CACHE)
    unset(TTE_TENSORRT${major}_LIBRARY CACHE)
    set(TTE_TENSORRT${major}_QUERY "${_query}" CACHE INTERNAL
        "What TensorRT ${major} was last searched with")
  endif()

  # The roots above are paths on this machine. A cross build's toolchain
  # (cmake/aarch64-linux-gnu.cmake) sets CMAKE_FIND_ROOT_PATH_MODE_INCLUDE
  # ONLY, which would look for them only inside its sysroots; TensorRT's
  # headers do not depend on the target architecture, so the roots are
  # searched inside the sysroots first and then as given. The system paths
  # keep the toolchain's mode. The version is checked after the search, so a
  # root holding the other major's headers is reported, not passed over.
  find_path(TTE_TENSORRT${major}_INCLUDE_DIR NvInferRuntime.h
    HINTS ${_roots}
    PATH_SUFFIXES ${_tte_trt_include_suffixes}
    NO_DEFAULT_PATH CMAKE_FIND_ROOT_PATH_BOTH)
  if(NOT TTE_TENSORRT${major}_INCLUDE_DIR AND NOT _search STREQUAL "NO_DEFAULT_PATH")
    find_path(TTE_TENSORRT${major}_INCLUDE_DIR NvInferRuntime.h
      PATH_SUFFIXES ${_tte_trt_include_suffixes})
  endif()
  set(_include "${TTE_TENSORRT${major}_INCLUDE_DIR}")
  if(NOT _include)
    list(JOIN _roots ", " _where)
    if(_search STREQUAL "NO_DEFAULT_PATH")
      set(_where "${_where} (${root_var})")
    elseif(_where)
      set(_where "${_where} or the system paths")
    else()
      set(_where "the system paths")
    endif()
    set(TTE_NATIVE_PROVIDER_${major}_WHY
        "NvInferRuntime.h not found under ${_where}; pass -D${root_var}=<TensorRT ${major} with include/NvInferRuntime.h>"
        PARENT_SCOPE)
    return()
  endif()
  tte_tensorrt_header_version("${_include}" _found_major _version)
  if(NOT "${_found_major}" STREQUAL "${major}")
    set(TTE_NATIVE_PROVIDER_${major}_WHY
        "the headers in ${_include} are TensorRT '${_version}', not ${major}.x; pass -D${root_var}=<TensorRT ${major} with include/NvInferRuntime.h>"
        PARENT_SCOPE)
    return()
  endif()

  if(TTE_TENSORRT_LINK)
    # The pip wheels ship only the versioned file (libnvinfer_lean.so.11), so
    # the versioned name is searched too.
    set(_lib nvinfer)
    if(TTE_TENSORRT_LEAN_ONLY)
      set(_lib nvinfer_lean)
    endif()
    get_filename_component(_include_parent "${_include}" DIRECTORY)
    find_library(TTE_TENSORRT${major}_LIBRARY
      NAMES lib${_lib}.so.${major} ${_lib}
      HINTS ${_roots} "${_include_parent}"
      PATH_SUFFIXES ${_tte_trt_lib_suffixes}
      ${_search})
    if(NOT TTE_TENSORRT${major}_LIBRARY)
      set(TTE_NATIVE_PROVIDER_${major}_WHY
          "TTE_TENSORRT_LINK=ON but lib${_lib}.so.${major} was not found in the roots searched or beside the headers (${_include})"
          PARENT_SCOPE)
      return()
    endif()
  endif()
  set(_library "${TTE_TENSORRT${major}_LIBRARY}")

  # The provider's code, compiled once per major: into the provider library
  # and into its test. Only ExecuTorch's headers are used (for ScalarType),
  # not its library. TensorRT's headers are system headers here: 10.3's warn
  # about their own deprecated declarations.
  set(_objects tte_native_tensorrt${major}_provider)
  add_library(${_objects} OBJECT
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
    # The plan header reader and the plugin's device count and DeviceGuard
    # (CUDA runtime only), compiled into the provider too: it is a library
    # of its own and links no part of the plugin.
    src/blob/tensorrt_plan_header.cpp
    src/cuda/cuda_device.cpp)
  target_include_directories(${_objects} SYSTEM PUBLIC "${_include}")
  target_include_directories(${_objects}
    PUBLIC ${TTE_PUBLIC_INCLUDE} ${CMAKE_CURRENT_SOURCE_DIR}/providers
           # common/ and blob/tensorrt_plan_header.h (header-only or compiled
           # in above), cuda/cuda_device.h
           ${CMAKE_CURRENT_SOURCE_DIR}/src
    PRIVATE $<TARGET_PROPERTY:executorch::runtime,INTERFACE_INCLUDE_DIRECTORIES>)
  target_compile_definitions(${_objects}
    PUBLIC $<$<BOOL:${TTE_TENSORRT_LINK}>:TTE_TENSORRT_LINK=1>
    PRIVATE $<TARGET_PROPERTY:executorch::runtime,INTERFACE_COMPILE_DEFINITIONS>)
  target_link_libraries(${_objects} PUBLIC tte::cudart ${CMAKE_DL_LIBS})
  if(TTE_TENSORRT_LINK)
    # The code calls TensorRT's two entry points by name: whatever links it
    # (the provider library, its test) links TensorRT too.
    target_link_libraries(${_objects} PUBLIC "${_library}")
  endif()
  # Sections per function and object, dropped at link when unreached (the
  # wheel's size budget; see the plugin's target).
  target_compile_options(${_objects} PRIVATE -Wall -Wextra -ffunction-sections -fdata-sections
    ${TTE_SHIPPED_OPTIMIZATION})
  tte_glibc_compat(${_objects})

  set(_provider tte_provider_tensorrt${major})
  add_library(${_provider} SHARED providers/native/provider_entry.cpp)
  target_link_libraries(${_provider} PRIVATE ${_objects})
  target_compile_options(${_provider} PRIVATE -Wall -Wextra)
  # --no-undefined: a TensorRT function called by name (rather than through
  # the library found at run time) fails the link instead of the user's import.
  target_link_options(${_provider} PRIVATE
    "LINKER:--no-undefined" "LINKER:--enable-new-dtags" "LINKER:--gc-sections")
  set_target_properties(${_provider} PROPERTIES
    SKIP_BUILD_RPATH OFF
    BUILD_RPATH "${TTE_CUDA_ROOT}/lib;${TTE_CUDA_ROOT}/lib64"
    # libcudart from the nvidia wheel (or $ORIGIN in a conda prefix); TensorRT
    # is found by the provider itself, relative to its own folder.
    INSTALL_RPATH "${TTE_INSTALL_RPATH}")
  if(TTE_TENSORRT_LINK)
    get_filename_component(_lib_dir "${_library}" DIRECTORY)
    set_property(TARGET ${_provider} APPEND PROPERTY BUILD_RPATH "${_lib_dir}")
  endif()
  tte_glibc_compat(${_provider})
  install(TARGETS ${_provider} LIBRARY DESTINATION ${TTE_INSTALL_LIBDIR})

  if(TTE_TENSORRT_LINK)
    message(STATUS "Native TensorRT ${major} provider: TensorRT ${_version} headers "
                   "${_include}, linked to ${_library}")
  else()
    message(STATUS "Native TensorRT ${major} provider: TensorRT ${_version} headers "
                   "${_include}; the library is found at run time")
  endif()
  set(TTE_NATIVE_PROVIDER_${major} "${_version}" PARENT_SCOPE)
endfunction()

set(TTE_TENSORRT_MAJORS "10;11" CACHE STRING "The TensorRT majors to build native providers for (10, 11)")
foreach(_major IN LISTS TTE_TENSORRT_MAJORS)
  if(NOT _major MATCHES "^1[01]$")
    message(FATAL_ERROR "TTE_TENSORRT_MAJORS: '${_major}' is not a TensorRT major with a provider (10, 11)")
  endif()
endforeach()
if(11 IN_LIST TTE_TENSORRT_MAJORS)
  tte_add_native_provider(11 TensorRT_ROOT tensorrt-11.1)
else()
  set(TTE_NATIVE_PROVIDER_11_WHY "not asked for (TTE_TENSORRT_MAJORS=${TTE_TENSORRT_MAJORS})")
endif()
if(10 IN_LIST TTE_TENSORRT_MAJORS)
  tte_add_native_provider(10 TensorRT10_ROOT tensorrt-10.3)
else()
  set(TTE_NATIVE_PROVIDER_10_WHY "not asked for (TTE_TENSORRT_MAJORS=${TTE_TENSORRT_MAJORS})")
endif()

# The majors built.
set(TTE_NATIVE_PROVIDER_MAJORS "")
foreach(_major 10 11)
  if(TTE_NATIVE_PROVIDER_${_major})
    list(APPEND TTE_NATIVE_PROVIDER_MAJORS ${_major})
  else()
    message(STATUS "Native TensorRT ${_major} provider: not built (${TTE_NATIVE_PROVIDER_${_major}_WHY})")
  endif()
endforeach()
if(_tte_trt_mode STREQUAL "ON" AND NOT TTE_NATIVE_PROVIDER_MAJORS)
  message(FATAL_ERROR
    "Native TensorRT providers: no TensorRT headers of a supported major (10 or 11) were found "
    "(11: ${TTE_NATIVE_PROVIDER_11_WHY}; 10: ${TTE_NATIVE_PROVIDER_10_WHY}). Install TensorRT's "
    "headers (conda: libnvinfer-devel; the TensorRT SDK; JetPack) and pass "
    "-DTensorRT_ROOT=<TensorRT 11> or -DTensorRT10_ROOT=<TensorRT 10>, or build without them: "
    "-DTTE_WITH_TENSORRT=OFF")
endif()
