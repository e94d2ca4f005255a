# Fails when BINARY needs more than manylinux_2_28 systems have (the limits
# of auditwheel's manylinux_2_28 policy): a symbol version above GLIBC 2.28,
# GLIBCXX 3.4.24, CXXABI 1.3.11 or GCC 7.0.0, or, for the glibc-compat
# pieces (docs/packaging.md), libdl.so.2 / libpthread.so.0 missing from
# DT_NEEDED. Prints which symbols are too new, so the code that pulls them in
# can be found.
#   cmake -DREADELF=readelf -DBINARY=file -P check_symbol_versions.cmake
set(_limits GLIBC 2.28 GLIBCXX 3.4.24 CXXABI 1.3.11 GCC 7.0.0)

execute_process(COMMAND ${READELF} --dyn-syms --dynamic -W ${BINARY}
  RESULT_VARIABLE _exit OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
if(NOT _exit EQUAL 0)
  message(FATAL_ERROR "${READELF} failed on ${BINARY}: ${_err}")
endif()

string(REGEX MATCHALL "[A-Za-z0-9_.$]+@(GLIBC|GLIBCXX|CXXABI|GCC)_[0-9][0-9.]*" _refs "${_out}")
list(REMOVE_DUPLICATES _refs)
set(_too_new "")
foreach(_ref IN LISTS _refs)
  string(REGEX MATCH "^(.*)@([A-Z]+)_([0-9.]+)$" _ "${_ref}")
  set(_family "${CMAKE_MATCH_2}")
  set(_version "${CMAKE_MATCH_3}")
  list(FIND _limits "${_family}" _i)
  math(EXPR _i "${_i} + 1")
  list(GET _limits ${_i} _limit)
  if(_version VERSION_GREATER _limit)
    list(APPEND _too_new "${_ref}")
  endif()
endforeach()

set(_missing "")
foreach(_lib libdl.so.2 libpthread.so.0)
  if(NOT _out MATCHES "\\(NEEDED\\)[^\n]*\\[${_lib}\\]")
    list(APPEND _missing "${_lib}")
  endif()
endforeach()

list(LENGTH _refs _count)
message("${BINARY}: ${_count} versioned references")
set(_problems "")
foreach(_ref IN LISTS _too_new)
  string(APPEND _problems "\n  symbol version too new: ${_ref}")
endforeach()
foreach(_lib IN LISTS _missing)
  string(APPEND _problems "\n  not in DT_NEEDED: ${_lib}")
endforeach()
if(_problems)
  message(FATAL_ERROR "${BINARY} would not load on manylinux_2_28 systems:${_problems}\n"
    "docs/packaging.md says how to fix each kind.")
endif()
