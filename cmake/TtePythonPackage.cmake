# Build-time files of the Python package: the flatbuffer bindings `inspect`
# reads .pte files with, generated from the schema of the executorch wheel
# the plugin builds against (scripts/gen/pte-bindings.py, its bundled
# flatc), and installed into the package beside its Python sources.
# On by default in wheel builds (scikit-build-core sets SKBUILD).
if(DEFINED SKBUILD)
  set(_tte_python_default ON)
else()
  set(_tte_python_default OFF)
endif()
option(TTE_BUILD_PYTHON_PACKAGE "Generate and install the Python package's build-time files"
       ${_tte_python_default})
if(NOT TTE_BUILD_PYTHON_PACKAGE)
  return()
endif()
if(NOT Python3_EXECUTABLE)
  message(FATAL_ERROR "TTE_BUILD_PYTHON_PACKAGE needs a Python interpreter (-DPython3_EXECUTABLE=...)")
endif()

set(TTE_PYTHON_PACKAGE_DIR "torch_tensorrt_executorch_runtime" CACHE STRING
    "Install directory of the Python package, relative to the install prefix")
set(_tte_generated "${CMAKE_CURRENT_BINARY_DIR}/python/_generated")
add_custom_command(
  OUTPUT "${_tte_generated}/program_generated.py" "${_tte_generated}/__init__.py"
  COMMAND "${Python3_EXECUTABLE}" "${PROJECT_SOURCE_DIR}/scripts/gen/pte-bindings.py"
          --out "${_tte_generated}" --executorch-root "${EXECUTORCH_ROOT}"
  DEPENDS "${PROJECT_SOURCE_DIR}/scripts/gen/pte-bindings.py"
          "${EXECUTORCH_ROOT}/schema/program.fbs" "${EXECUTORCH_ROOT}/schema/scalar_type.fbs"
  COMMENT "Generating the .pte reader's flatbuffer bindings"
  VERBATIM)
add_custom_target(tte_pte_schema ALL DEPENDS "${_tte_generated}/program_generated.py")
# What this build links, for the Python side's library search and doctor
# (torch_tensorrt_executorch_runtime/_build.py).
file(CONFIGURE OUTPUT "${_tte_generated}/build_config.py" CONTENT [[
"""What this build of the package links (written by cmake/TtePythonPackage.cmake)."""

CUDA_MAJOR = @TTE_CUDA_MAJOR@
]] @ONLY)
install(FILES "${_tte_generated}/__init__.py" "${_tte_generated}/program_generated.py"
              "${_tte_generated}/build_config.py"
        DESTINATION "${TTE_PYTHON_PACKAGE_DIR}/_generated")

# The compiled part of the binding (_native/_compiled), an abi3 module:
# cmake/TtePythonBinding.cmake.
include(TtePythonBinding)
tte_python_binding("${TTE_PYTHON_PACKAGE_DIR}/_native")
