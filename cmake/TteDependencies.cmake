# Finds what the plugin builds against: ExecuTorch (the installed wheel or a
# conda prefix), the CUDA runtime (PyPI nvidia-cuda-runtime, a conda prefix or
# a toolkit), nlohmann_json, and optionally nvcc and TensorRT headers.

find_package(Python3 COMPONENTS Interpreter)

# Ask an interpreter for a path inside an installed package.
function(tte_python_query out_var code)
  if(Python3_Interpreter_FOUND)
    execute_process(
      COMMAND "${Python3_EXECUTABLE}" -c "${code}"
      OUTPUT_VARIABLE _out OUTPUT_STRIP_TRAILING_WHITESPACE
      ERROR_QUIET RESULT_VARIABLE _rc)
    if(_rc EQUAL 0)
      set(${out_var} "${_out}" PARENT_SCOPE)
      return()
    endif()
  endif()
  set(${out_var} "" PARENT_SCOPE)
endfunction()

# ---- ExecuTorch -----------------------------------------------------------
if(NOT EXECUTORCH_ROOT)
  tte_python_query(_et_root
    "import importlib.util;s=importlib.util.find_spec('executorch');print(list(s.submodule_search_locations)[0])")
  set(EXECUTORCH_ROOT "${_et_root}" CACHE PATH "Root of the installed executorch package")
endif()
if(NOT EXISTS "${EXECUTORCH_ROOT}/lib/libexecutorch.so")
  message(FATAL_ERROR
    "ExecuTorch ${TTE_EXECUTORCH_VERSION} not found (looked for lib/libexecutorch.so under "
    "'${EXECUTORCH_ROOT}'). Install it with: pip install executorch==${TTE_EXECUTORCH_VERSION}, "
    "or pass -DEXECUTORCH_ROOT=<site-packages>/executorch")
endif()
list(APPEND CMAKE_PREFIX_PATH "${EXECUTORCH_ROOT}")
find_package(executorch 1.5 REQUIRED CONFIG)
foreach(_t runtime kernels_optimized backend_xnnpack threadpool etdump)
  if(NOT TARGET executorch::${_t})
    message(FATAL_ERROR "ExecuTorch at ${EXECUTORCH_ROOT} has no executorch::${_t} target")
  endif()
endforeach()

# ExecuTorch's imported targets carry link options that write an absolute
# rpath to the package they were found in. Keep every other option (the
# --no-as-needed retention of registration-only libraries matters) and set
# our own $ORIGIN-relative RUNPATH on what we install.
function(tte_strip_rpath_options target)
  get_target_property(_opts ${target} INTERFACE_LINK_OPTIONS)
  if(NOT _opts)
    return()
  endif()
  set(_kept "")
  foreach(_o IN LISTS _opts)
    if(NOT _o MATCHES "rpath" AND NOT _o MATCHES "enable-new-dtags")
      list(APPEND _kept "${_o}")
    endif()
  endforeach()
  set_target_properties(${target} PROPERTIES INTERFACE_LINK_OPTIONS "${_kept}")
endfunction()
foreach(_t runtime kernels_optimized backend_xnnpack threadpool etdump)
  tte_strip_rpath_options(executorch::${_t})
endforeach()

# ---- CUDA runtime ---------------------------------------------------------
# Headers and libcudart.so.<major>: a CUDA root given by the caller, the PyPI
# nvidia-cuda-runtime wheel, a conda prefix (targets/<arch>/), or a toolkit.
set(_tte_cuda_major_sought "${TTE_CUDA_MAJOR}")
if(NOT _tte_cuda_major_sought)
  set(_tte_cuda_major_sought "${TTE_CUDA_MAJOR_DEFAULT}")
endif()
if(NOT TTE_CUDA_ROOT)
  tte_python_query(_cu_root
    "import importlib.util,os;s=importlib.util.find_spec('nvidia');print(next(p for p in [os.path.join(d,sub) for d in s.submodule_search_locations for sub in ('cu${_tte_cuda_major_sought}','cuda_runtime')] if os.path.exists(os.path.join(p,'include','cuda_runtime_api.h'))))")
  if(NOT _cu_root)
    find_package(CUDAToolkit QUIET)
    if(CUDAToolkit_FOUND)
      get_filename_component(_cu_root "${CUDAToolkit_INCLUDE_DIRS}" DIRECTORY)
    endif()
  endif()
  set(TTE_CUDA_ROOT "${_cu_root}" CACHE PATH "CUDA runtime root (include/, lib/ or lib64/)")
endif()
find_path(TTE_CUDA_INCLUDE_DIR cuda_runtime_api.h
  HINTS "${TTE_CUDA_ROOT}/include" NO_DEFAULT_PATH)
if(NOT TTE_CUDA_INCLUDE_DIR)
  message(FATAL_ERROR
    "CUDA ${_tte_cuda_major_sought} runtime headers not found under '${TTE_CUDA_ROOT}'. Install them with: "
    "pip install 'nvidia-cuda-runtime>=${_tte_cuda_major_sought},<${_tte_cuda_major_sought}.99', or pass -DTTE_CUDA_ROOT=")
endif()
# The headers say which CUDA they are: CUDART_VERSION is major * 1000 +
# minor * 10. A TTE_CUDA_MAJOR given must agree with them.
file(STRINGS "${TTE_CUDA_INCLUDE_DIR}/cuda_runtime_api.h" _cudart_version_line
  REGEX "^#define CUDART_VERSION +[0-9]+")
string(REGEX REPLACE "^#define CUDART_VERSION +([0-9]+).*" "\\1" TTE_CUDART_VERSION "${_cudart_version_line}")
if(NOT TTE_CUDART_VERSION MATCHES "^[0-9]+$")
  message(FATAL_ERROR "No CUDART_VERSION in '${TTE_CUDA_INCLUDE_DIR}/cuda_runtime_api.h'")
endif()
math(EXPR _cudart_header_major "${TTE_CUDART_VERSION} / 1000")
if(TTE_CUDA_MAJOR AND NOT _cudart_header_major EQUAL TTE_CUDA_MAJOR)
  message(FATAL_ERROR "The CUDA headers in '${TTE_CUDA_INCLUDE_DIR}' are CUDA ${_cudart_header_major} "
    "(CUDART_VERSION ${TTE_CUDART_VERSION}), but TTE_CUDA_MAJOR is ${TTE_CUDA_MAJOR}: "
    "point TTE_CUDA_ROOT at a CUDA ${TTE_CUDA_MAJOR} runtime, or leave TTE_CUDA_MAJOR unset")
endif()
set(TTE_CUDA_MAJOR "${_cudart_header_major}")
if(NOT TTE_CUDA_MAJOR MATCHES "^1[23]$")
  message(FATAL_ERROR "The CUDA headers in '${TTE_CUDA_INCLUDE_DIR}' are CUDA ${TTE_CUDA_MAJOR}: "
    "the plugin builds for CUDA 12 (JetPack 6, conda's 12.9) or 13")
endif()
find_file(TTE_CUDART_LIBRARY NAMES libcudart.so.${TTE_CUDA_MAJOR} libcudart.so
  HINTS "${TTE_CUDA_ROOT}/lib" "${TTE_CUDA_ROOT}/lib64" NO_DEFAULT_PATH)
if(NOT TTE_CUDART_LIBRARY)
  message(FATAL_ERROR "libcudart.so.${TTE_CUDA_MAJOR} not found under '${TTE_CUDA_ROOT}/lib' or '${TTE_CUDA_ROOT}/lib64'")
endif()
add_library(tte::cudart SHARED IMPORTED)
set_target_properties(tte::cudart PROPERTIES
  IMPORTED_LOCATION "${TTE_CUDART_LIBRARY}"
  IMPORTED_NO_SONAME OFF
  INTERFACE_INCLUDE_DIRECTORIES "${TTE_CUDA_INCLUDE_DIR}")
message(STATUS "CUDA runtime: ${TTE_CUDART_LIBRARY} (CUDA ${TTE_CUDA_MAJOR}, headers ${TTE_CUDART_VERSION})")

# ---- nlohmann_json --------------------------------------------------------
find_package(nlohmann_json 3 CONFIG QUIET)
if(NOT TARGET nlohmann_json::nlohmann_json)
  if(NOT TTE_NLOHMANN_JSON_INCLUDE_DIR)
    tte_python_query(_nj "import nlohmann_json;print(nlohmann_json.get_include())")
    set(TTE_NLOHMANN_JSON_INCLUDE_DIR "${_nj}" CACHE PATH "nlohmann_json include dir")
  endif()
  if(NOT EXISTS "${TTE_NLOHMANN_JSON_INCLUDE_DIR}/nlohmann/json.hpp")
    message(FATAL_ERROR "nlohmann_json not found: pip install nlohmann-json, or apt-get install nlohmann-json3-dev")
  endif()
  add_library(nlohmann_json::nlohmann_json INTERFACE IMPORTED)
  set_target_properties(nlohmann_json::nlohmann_json PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${TTE_NLOHMANN_JSON_INCLUDE_DIR}")
endif()

# ---- nvcc (CUDA test provider) --------------------------------------------
set(TTE_HAVE_NVCC OFF)
if(NOT TTE_CUDA_TEST_PROVIDER STREQUAL "OFF")
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    enable_language(CUDA)
    set(TTE_HAVE_NVCC ON)
  elseif(TTE_CUDA_TEST_PROVIDER STREQUAL "ON")
    message(FATAL_ERROR "TTE_CUDA_TEST_PROVIDER=ON but no CUDA compiler was found")
  endif()
endif()
