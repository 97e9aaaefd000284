# The libFuzzer targets (test/fuzz) are built in a clang AddressSanitizer tree
# (-DSEEDRL_SANITIZE=address,undefined with clang++, scripts/run-tests.sh's second tree) and link
# that tree's own seedrl library, rather than compiling seedrl's sources again in a build of
# their own. libFuzzer's coverage (what guides it to new inputs) is kept to the library's code
# that reads what a peer or a file sends, listed below: those sources are one unity group,
# `fuzzed`, and the coverage flags come with an allowlist naming that group's unity file (or,
# without unity builds, the sources themselves), so that no other code carries counters.
#
#   seedrl_fuzz_available(result)     whether this tree builds the fuzz targets
#   seedrl_fuzz_coverage(target)      the grouping and the coverage flags on `target` (seedrl)

# Every source the four fuzz targets read through, paths relative to the top of the tree.
set(SEEDRL_FUZZED_SOURCES
  # the wire codec (fuzz_protocol, fuzz_session)
  src/transport/protocol.cpp src/transport/protocol_step.cpp src/core/error.cpp
  src/core/step_spec.cpp
  # a SocketServer's sessions (fuzz_session)
  src/transport/socket_server.cpp src/transport/socket_session.cpp
  src/transport/socket_session_handshake.cpp src/transport/socket_address.cpp
  src/transport/tls.cpp
  # checkpoints, their metadata and the network description (fuzz_checkpoint, fuzz_description)
  src/io/safetensors.cpp src/io/json.cpp src/io/checkpoint.cpp src/io/checkpoint_generations.cpp
  src/core/atomic_file.cpp src/core/crc32c.cpp src/policy/checkpoint_description.cpp
  src/nn/describe.cpp src/experience/normalization.cpp src/math/running_moments.cpp
  src/agent/acting.cpp src/math/categorical.cpp src/math/masked_categorical.cpp
  src/math/softmax.cpp)

option(SEEDRL_FUZZ "Build the libFuzzer targets in a clang AddressSanitizer tree" ON)

function(seedrl_fuzz_available result)
  set(available OFF)
  if(SEEDRL_FUZZ AND SEEDRL_BUILD_TESTS AND SEEDRL_SANITIZE MATCHES "address"
     AND CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    set(available ON)
  endif()
  set(${result} ${available} PARENT_SCOPE)
endfunction()

function(seedrl_fuzz_coverage target)
  get_target_property(sources ${target} SOURCES)
  foreach(source IN LISTS SEEDRL_FUZZED_SOURCES)
    if(NOT source IN_LIST sources)
      message(FATAL_ERROR "SeedrlFuzzCoverage.cmake: ${source} is not a source of ${target}")
    endif()
  endforeach()
  # The fuzzed sources in one group; the others in groups of SEEDRL_UNITY_BATCH_SIZE, as the
  # batch mode would make them.
  set(group 0)
  set(in_group 0)
  foreach(source IN LISTS sources)
    if(source IN_LIST SEEDRL_FUZZED_SOURCES)
      set_source_files_properties(${source} PROPERTIES UNITY_GROUP fuzzed)
    else()
      set_source_files_properties(${source} PROPERTIES UNITY_GROUP batch_${group})
      math(EXPR in_group "${in_group} + 1")
      if(in_group EQUAL SEEDRL_UNITY_BATCH_SIZE)
        math(EXPR group "${group} + 1")
        set(in_group 0)
      endif()
    endif()
  endforeach()
  set_target_properties(${target} PROPERTIES UNITY_BUILD_MODE GROUP)
  # clang 14 instruments a function only where both a src: and a fun: line match.
  set(allowlist "${CMAKE_BINARY_DIR}/fuzz_coverage_allowlist.txt")
  set(lines "src:*unity_fuzzed_*\n")
  foreach(source IN LISTS SEEDRL_FUZZED_SOURCES)
    string(APPEND lines "src:${PROJECT_SOURCE_DIR}/${source}\n")
  endforeach()
  file(WRITE "${allowlist}" "${lines}fun:*\n")
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=fuzzer-no-link -fsanitize-coverage-allowlist=${allowlist}>)
endfunction()
