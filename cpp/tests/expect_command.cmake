# Runs COMMAND (a list) and fails unless it exits with EXPECT_EXIT, its
# stdout or stderr matches EXPECT_REGEX and, when given, its stdout alone
# matches EXPECT_STDOUT_REGEX.
#   cmake -DCOMMAND=prog;arg... -DEXPECT_EXIT=0 -DEXPECT_REGEX=... [-DEXPECT_STDOUT_REGEX=...]
#         -P expect_command.cmake
execute_process(COMMAND ${COMMAND}
  RESULT_VARIABLE _exit OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
message("${_out}${_err}")
if(NOT "${_exit}" STREQUAL "${EXPECT_EXIT}")
  message(FATAL_ERROR "expected exit status ${EXPECT_EXIT}, got ${_exit}")
endif()
if(NOT "${_out}${_err}" MATCHES "${EXPECT_REGEX}")
  message(FATAL_ERROR "output does not match '${EXPECT_REGEX}'")
endif()
if(DEFINED EXPECT_STDOUT_REGEX AND NOT "${_out}" MATCHES "${EXPECT_STDOUT_REGEX}")
  message(FATAL_ERROR "stdout does not match '${EXPECT_STDOUT_REGEX}'")
endif()
