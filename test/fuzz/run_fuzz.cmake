# Builds test/fuzz with clang and fuzzes the frame decoder for a bounded time.
#   cmake -DSEEDRL_SOURCE_DIR=... -DSEEDRL_GENERATED_INCLUDE_DIR=... -DCLANGXX=... -DWORK_DIR=...
#         -DSECONDS=60 [-DGENERATOR=Ninja] -P run_fuzz.cmake
# A crash leaves its input in WORK_DIR as crash-<hash>; replay it with
#   WORK_DIR/build/fuzz_protocol WORK_DIR/crash-<hash>
foreach(var SEEDRL_SOURCE_DIR SEEDRL_GENERATED_INCLUDE_DIR CLANGXX WORK_DIR SECONDS)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_fuzz.cmake: ${var} is not set")
  endif()
endforeach()
set(generator_args)
if(GENERATOR)
  set(generator_args -G "${GENERATOR}")
endif()

execute_process(
  COMMAND ${CMAKE_COMMAND} -S ${SEEDRL_SOURCE_DIR}/test/fuzz -B ${WORK_DIR}/build ${generator_args}
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=${CLANGXX}
    -DSEEDRL_SOURCE_DIR=${SEEDRL_SOURCE_DIR}
    -DSEEDRL_GENERATED_INCLUDE_DIR=${SEEDRL_GENERATED_INCLUDE_DIR}
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "run_fuzz.cmake: configuring the fuzz target with ${CLANGXX} failed")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/build RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "run_fuzz.cmake: building the fuzz target failed; clang needs its "
    "libFuzzer runtime (Debian: libclang-rt-14-dev for clang 14)")
endif()

file(MAKE_DIRECTORY ${WORK_DIR}/corpus)
execute_process(COMMAND ${WORK_DIR}/build/protocol_corpus ${WORK_DIR}/corpus RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "run_fuzz.cmake: writing the seed corpus failed")
endif()
message(STATUS "fuzzing the frame decoder for ${SECONDS} s")
execute_process(
  COMMAND ${WORK_DIR}/build/fuzz_protocol -max_total_time=${SECONDS} -timeout=10
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix=${WORK_DIR}/ ${WORK_DIR}/corpus
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "run_fuzz.cmake: the fuzzer found a failing input (exit ${rc}); "
    "see the crash-* file in ${WORK_DIR}")
endif()
