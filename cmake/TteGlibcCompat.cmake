# Binaries that load on glibc 2.28 (manylinux_2_28) although built against a
# newer glibc: docs/packaging.md says what each piece does and why.
# tte_glibc_compat(<target>) applies it to one shared library or executable,
# or to an object library that goes into one (which needs the header only).
include_guard(GLOBAL)

set(_tte_glibc_compat_default OFF)
if(CMAKE_SYSTEM_NAME STREQUAL "Linux" AND CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|aarch64|arm64)$")
  include(CheckCSourceCompiles)
  check_c_source_compiles("
    #include <features.h>
    #ifndef __GLIBC__
    #error not glibc
    #endif
    int main(void) { return 0; }" TTE_HAVE_GLIBC)
  # Sanitizer and coverage builds are never shipped; leave their runtimes
  # (interceptors, libgcov) the symbols they expect.
  if(TTE_HAVE_GLIBC AND NOT TTE_SANITIZE AND NOT TTE_COVERAGE)
    set(_tte_glibc_compat_default ON)
  endif()
endif()
option(TTE_GLIBC_COMPAT
       "Pin glibc symbol versions so the shipped binaries load on glibc 2.28 (Linux x86_64/aarch64)"
       ${_tte_glibc_compat_default})

function(tte_glibc_compat target)
  if(NOT TTE_GLIBC_COMPAT)
    return()
  endif()
  # From this file's folder, so the function works from any directory scope.
  set(_tte_glibc_compat_dir "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/../cpp/src")
  cmake_path(ABSOLUTE_PATH _tte_glibc_compat_dir NORMALIZE)
  target_compile_options(${target} PRIVATE
    "$<$<COMPILE_LANGUAGE:C,CXX>:SHELL:-include \"${_tte_glibc_compat_dir}/glibc_compat.h\">")
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "OBJECT_LIBRARY")
    return()
  endif()
  target_sources(${target} PRIVATE "${_tte_glibc_compat_dir}/glibc_compat.c")
  # The pinned dl*/pthread_* versions live in these files on glibc < 2.34;
  # nothing binds to them at link time here, so keep them from --as-needed.
  target_link_options(${target} PRIVATE
    "LINKER:--push-state,--no-as-needed,-l:libdl.so.2,-l:libpthread.so.0,--pop-state")
  if(type STREQUAL "EXECUTABLE")
    target_sources(${target} PRIVATE "${_tte_glibc_compat_dir}/glibc_compat_start.c")
    target_link_options(${target} PRIVATE "LINKER:--wrap=__libc_start_main")
  endif()
endfunction()
