# Configures and builds test/fuzz with clang, once for every fuzz_* test (the CTest fixture
# fuzz_build).
#   cmake -DSEEDRL_SOURCE_DIR=... -DSEEDRL_GENERATED_INCLUDE_DIR=... -DCLANGXX=... -DWORK_DIR=...
#         [-DGENERATOR=Ninja] -P build_fuzz.cmake
foreach(var SEEDRL_SOURCE_DIR SEEDRL_GENERATED_INCLUDE_DIR CLANGXX WORK_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "build_fuzz.cmake: ${var} is not set")
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
  message(FATAL_ERROR "build_fuzz.cmake: configuring the fuzz targets with ${CLANGXX} failed")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/build RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "build_fuzz.cmake: building the fuzz targets failed; clang needs its "
    "libFuzzer runtime (Debian: libclang-rt-14-dev for clang 14)")
endif()
