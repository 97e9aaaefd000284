# Every example program builds from the installed package alone, as a user copies it: the program
# and the headers of its own it includes ("corridor_env.hpp": examples/ files, found by reading
# its #include lines) go into an empty directory with a five-line CMakeLists.txt that finds seedrl
# with find_package and links seedrl::cli, and seedrl::mpi, seedrl::cuda and seedrl::mujoco where
# the package has them. The directories are built as subdirectories of one project, so that CMake
# finds the package once and the programs compile in parallel; EXAMPLE_ALONE is configured and
# built on its own too, as a user would. Without optimisation: this checks that each one builds.
# The programs that include seedrl/cli/train.hpp (directly or through seedrl/cli/game_program.hpp)
# reuse one precompiled copy of it, which this test's top-level project adds (as
# examples/CMakeLists.txt does in the tree): it makes visible nothing their own includes do not,
# and parsing it was most of each one's compile time. Their own CMakeLists.txt stay the user's
# five lines, and EXAMPLE_ALONE's build alone has no precompiled header.
#
#   cmake -DSEEDRL_BUILD_DIR=... -DEXAMPLES_DIR=... -DWORK_DIR=... -DEXAMPLE_ALONE=corridor_vtrace
#         [-DJOBS=2] -P run_examples_standalone.cmake
cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")
if(NOT JOBS)
  set(JOBS 2)
endif()

include(${CMAKE_CURRENT_LIST_DIR}/run_checked.cmake)  # run()

# The example's own headers, transitively: each `#include "name"` that names a file in examples/.
function(local_headers file out)
  set(found "")
  set(pending "${file}")
  while(pending)
    list(POP_FRONT pending current)
    file(STRINGS "${EXAMPLES_DIR}/${current}" lines REGEX "^#include \"[^\"/]+\"")
    foreach(line IN LISTS lines)
      string(REGEX REPLACE "^#include \"([^\"]+)\".*" "\\1" header "${line}")
      if(EXISTS "${EXAMPLES_DIR}/${header}" AND NOT header IN_LIST found)
        list(APPEND found "${header}")
        list(APPEND pending "${header}")
      endif()
    endforeach()
  endwhile()
  set(${out} "${found}" PARENT_SCOPE)
endfunction()

run(${CMAKE_COMMAND} --install "${SEEDRL_BUILD_DIR}" --prefix "${prefix}")

string(CONCAT libraries "seedrl::cli $<TARGET_NAME_IF_EXISTS:seedrl::mpi> "
  "$<TARGET_NAME_IF_EXISTS:seedrl::cuda> $<TARGET_NAME_IF_EXISTS:seedrl::mujoco>")
file(GLOB programs RELATIVE "${EXAMPLES_DIR}" "${EXAMPLES_DIR}/*.cpp")
list(REMOVE_ITEM programs cli_pch.cpp)  # the precompiled header's unit, not a program
file(WRITE "${WORK_DIR}/src/cli_pch/cli_pch.cpp" "#include <seedrl/cli/train.hpp>\n")
string(CONCAT all "cmake_minimum_required(VERSION 3.25)\n"
  "project(seedrl_examples_standalone LANGUAGES CXX)\n"
  "find_package(seedrl CONFIG REQUIRED)\n"
  "add_library(cli_pch OBJECT cli_pch/cli_pch.cpp)\n"
  "target_link_libraries(cli_pch PRIVATE ${libraries})\n"
  "target_precompile_headers(cli_pch PRIVATE <seedrl/cli/train.hpp>)\n")
set(with_pch 0)
foreach(source IN LISTS programs)
  get_filename_component(name "${source}" NAME_WE)
  set(dir "${WORK_DIR}/src/${name}")
  local_headers("${source}" headers)
  foreach(file IN ITEMS ${source} ${headers})
    file(COPY "${EXAMPLES_DIR}/${file}" DESTINATION "${dir}")
  endforeach()
  file(WRITE "${dir}/CMakeLists.txt"
    "cmake_minimum_required(VERSION 3.25)\n"
    "project(${name} LANGUAGES CXX)\n"
    "find_package(seedrl CONFIG REQUIRED)\n"
    "add_executable(${name} ${source})\n"
    "target_link_libraries(${name} PRIVATE ${libraries})\n")
  string(APPEND all "add_subdirectory(${name})\n")
  file(STRINGS "${EXAMPLES_DIR}/${source}" cli_includes
    REGEX "^#include [\"<]seedrl/cli/(train|game_program)\\.hpp[\">]")
  set(pch "")
  if(cli_includes)
    string(APPEND all "target_precompile_headers(${name} REUSE_FROM cli_pch)\n")
    set(pch ", seedrl/cli/train.hpp precompiled")
    math(EXPR with_pch "${with_pch} + 1")
  endif()
  list(LENGTH headers n)
  message(STATUS "examples_standalone: ${name} (${source}, ${n} header(s) of its own: ${headers}${pch})")
endforeach()
file(WRITE "${WORK_DIR}/src/CMakeLists.txt" "${all}")

run(${CMAKE_COMMAND} -S "${WORK_DIR}/src" -B "${WORK_DIR}/build" -DCMAKE_PREFIX_PATH=${prefix})
run(${CMAKE_COMMAND} --build "${WORK_DIR}/build" -j ${JOBS})
foreach(source IN LISTS programs)
  get_filename_component(name "${source}" NAME_WE)
  # Each one starts: --help prints its usage (a program that does not link or load fails here).
  execute_process(COMMAND "${WORK_DIR}/build/${name}/${name}" --help
    RESULT_VARIABLE status OUTPUT_VARIABLE help ERROR_VARIABLE help)
  if(NOT status EQUAL 0 OR NOT help MATCHES "Usage|usage|OPTIONS|Options")
    message(FATAL_ERROR "${name} --help, built from the package alone, failed (${status}): ${help}")
  endif()
endforeach()

# One of them exactly as a user would: its directory alone.
run(${CMAKE_COMMAND} -S "${WORK_DIR}/src/${EXAMPLE_ALONE}" -B "${WORK_DIR}/alone"
  -DCMAKE_PREFIX_PATH=${prefix})
run(${CMAKE_COMMAND} --build "${WORK_DIR}/alone" -j ${JOBS})
list(LENGTH programs count)
message(STATUS "examples_standalone: ${count} example programs built from the installed package "
  "(${with_pch} with seedrl/cli/train.hpp precompiled)")
