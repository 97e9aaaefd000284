# run(COMMAND...): runs a command, failing the script with the command line when it fails (the
# package tests' scripts include it).
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "command failed (${status}): ${ARGN}")
  endif()
endfunction()
