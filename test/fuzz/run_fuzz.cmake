# Fuzzes one target of test/fuzz (built by build_fuzz.cmake) for a bounded time, from the seed
# corpus its writer makes.
#   cmake -DWORK_DIR=... -DFUZZER=protocol|session|checkpoint|description -DSECONDS=60
#         -P run_fuzz.cmake
# A crash leaves its input in WORK_DIR as <target>-crash-<hash>; replay it with
#   WORK_DIR/build/fuzz_<target> WORK_DIR/<target>-crash-<hash>
foreach(var WORK_DIR FUZZER SECONDS)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_fuzz.cmake: ${var} is not set")
  endif()
endforeach()
set(corpus ${WORK_DIR}/corpus_${FUZZER})
file(MAKE_DIRECTORY ${corpus})
if(FUZZER STREQUAL "protocol")
  set(seeds ${WORK_DIR}/build/protocol_corpus ${corpus})
else()
  set(seeds ${WORK_DIR}/build/seed_corpora ${FUZZER} ${corpus})
endif()
execute_process(COMMAND ${seeds} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "run_fuzz.cmake: writing the seed corpus of fuzz_${FUZZER} failed")
endif()
message(STATUS "fuzzing fuzz_${FUZZER} for ${SECONDS} s")
execute_process(
  COMMAND ${WORK_DIR}/build/fuzz_${FUZZER} -max_total_time=${SECONDS} -timeout=10
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix=${WORK_DIR}/${FUZZER}- ${corpus}
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "run_fuzz.cmake: fuzz_${FUZZER} found a failing input (exit ${rc}); "
    "see the ${FUZZER}-crash-* file in ${WORK_DIR}")
endif()
