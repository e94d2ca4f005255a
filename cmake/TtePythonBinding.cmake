# The compiled part of the binding (_native/_compiled): the hot path of a
# run over the plugin's C API, in C on CPython's limited API, built once as
# an abi3 module for CPython ${TTE_PYTHON_SABI} and later. It links neither
# the plugin (it takes the functions from the copy the binding loaded, by
# the path the Python side found) nor libpython. The wheel builds it from
# the root CMakeLists.txt (cmake/TtePythonPackage.cmake); the conda recipe
# from cpp/python/CMakeLists.txt, which needs nothing but Python's headers.
include_guard(GLOBAL)
include(TteGlibcCompat)

set(TTE_PYTHON_SABI "3.10" CACHE STRING
    "Lowest CPython the abi3 binding supports (Py_LIMITED_API), e.g. conda's python_min")

function(tte_python_binding install_dir)
  find_package(Python3 ${TTE_PYTHON_SABI} REQUIRED COMPONENTS Interpreter Development.SABIModule)
  set(_src "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/../cpp")
  cmake_path(ABSOLUTE_PATH _src NORMALIZE)
  Python3_add_library(tte_python_binding MODULE USE_SABI ${TTE_PYTHON_SABI} WITH_SOABI
    "${_src}/python/module.c"
    "${_src}/python/binding.c"
    "${_src}/python/dlpack_bridge.c"
    "${_src}/python/output.c"
    "${_src}/python/method.c"
    "${_src}/python/provider_bridge.c")
  set_target_properties(tte_python_binding PROPERTIES
    OUTPUT_NAME _compiled
    C_STANDARD 11
    C_EXTENSIONS ON
    C_VISIBILITY_PRESET hidden)
  target_include_directories(tte_python_binding PRIVATE "${_src}/include")
  # The limited API is the contract: a function outside it must not compile.
  target_compile_options(tte_python_binding PRIVATE -Wall -Wextra -Werror=implicit-function-declaration)
  target_link_libraries(tte_python_binding PRIVATE ${CMAKE_DL_LIBS})
  tte_glibc_compat(tte_python_binding)
  install(TARGETS tte_python_binding LIBRARY DESTINATION "${install_dir}")
endfunction()
