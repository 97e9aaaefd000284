# seedrl_examples: what the example programs share: their helper headers (cli.hpp, program.hpp,
# environments.hpp, ...) on seedrl::cli, the library's command line and the agents' options. A
# program copied out of examples/ takes the headers it includes with it.
add_library(seedrl_examples INTERFACE)
target_include_directories(seedrl_examples INTERFACE ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(seedrl_examples INTERFACE seedrl::seedrl seedrl::cli)
