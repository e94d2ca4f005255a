# Fails when BINARY lists a TensorRT library (libnvinfer*) in DT_NEEDED or a
# RUNPATH entry that is not $ORIGIN-relative: the native provider finds
# TensorRT at run time, so it loads where TensorRT is not installed.
#   cmake -DREADELF=readelf -DBINARY=file -P check_no_tensorrt_needed.cmake
execute_process(COMMAND ${READELF} --dynamic -W ${BINARY}
  RESULT_VARIABLE _exit OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
if(NOT _exit EQUAL 0)
  message(FATAL_ERROR "${READELF} failed on ${BINARY}: ${_err}")
endif()
string(REGEX MATCHALL "\\(NEEDED\\)[^\n]*\\[libnvinfer[^]]*\\]" _needed "${_out}")
if(_needed)
  message(FATAL_ERROR "${BINARY} needs TensorRT at load time: ${_needed}")
endif()
message("${BINARY}: no TensorRT library in DT_NEEDED")
