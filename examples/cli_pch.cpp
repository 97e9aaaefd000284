// The translation unit that compiles cli.hpp as the precompiled header of the training programs
// (examples/CMakeLists.txt): it has no code of its own.
#include "cli.hpp"
