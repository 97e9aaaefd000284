// The translation unit that compiles seedrl/cli/train.hpp as the precompiled header of the
// training programs (examples/CMakeLists.txt): it has no code of its own.
#include "seedrl/cli/train.hpp"
