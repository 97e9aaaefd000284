# seedrl_examples: what the example programs share, compiled once rather than in every program.
# The command line (command_line.cpp, the one file that compiles CLI11, a header-only library
# whose parser, help and validators took 10 to 15 s of each program's build) and the agents'
# options (agent_cli.cpp). A program copied out of examples/ takes these files with it.
find_package(CLI11 REQUIRED)
add_library(seedrl_examples STATIC
  ${CMAKE_CURRENT_LIST_DIR}/command_line.cpp
  ${CMAKE_CURRENT_LIST_DIR}/agent_cli.cpp)
target_include_directories(seedrl_examples PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(seedrl_examples PUBLIC seedrl::seedrl PRIVATE CLI11::CLI11 seedrl_build_flags)
