# seedrl_examples: what the example programs share, compiled once rather than in every program:
# the agents' options (agent_cli.cpp) on seedrl::cli's command line. A program copied out of
# examples/ takes these files with it.
add_library(seedrl_examples STATIC ${CMAKE_CURRENT_LIST_DIR}/agent_cli.cpp)
target_include_directories(seedrl_examples PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(seedrl_examples PUBLIC seedrl::seedrl seedrl::cli PRIVATE seedrl_build_flags)
