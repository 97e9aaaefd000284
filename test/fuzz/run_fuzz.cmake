# Fuzzes one target of test/fuzz for a bounded time, from the seed corpus its writer makes.
#   cmake -DFUZZER=path/fuzz_<name> -DWRITER="path/writer;args" -DWORK_DIR=... -DNAME=<name>
#         -DSECONDS=60 -P run_fuzz.cmake
# The corpus grows in WORK_DIR/corpus_<name>. A crash leaves its input in WORK_DIR as
# <name>-crash-<hash>; replay it with  path/fuzz_<name> WORK_DIR/<name>-crash-<hash>
foreach(var FUZZER WRITER WORK_DIR NAME SECONDS)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_fuzz.cmake: ${var} is not set")
  endif()
endforeach()
set(corpus ${WORK_DIR}/corpus_${NAME})
file(MAKE_DIRECTORY ${corpus})
execute_process(COMMAND ${WRITER} ${corpus} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "run_fuzz.cmake: writing the seed corpus of fuzz_${NAME} failed")
endif()
message(STATUS "fuzzing fuzz_${NAME} for ${SECONDS} s")
execute_process(
  COMMAND ${FUZZER} -max_total_time=${SECONDS} -timeout=10 -rss_limit_mb=2048
    -print_final_stats=1 -artifact_prefix=${WORK_DIR}/${NAME}- ${corpus}
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "run_fuzz.cmake: fuzz_${NAME} found a failing input (exit ${rc}); "
    "see the ${NAME}-crash-* file in ${WORK_DIR}")
endif()
