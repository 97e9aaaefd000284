// train_self_play for V-trace on the CPU on the built-in games of two players (declared extern in
// session/self_play.hpp).
#include "seedrl/session/self_play.hpp"

namespace seedrl {

SEEDRL_BUILTIN_SELF_PLAY();

}  // namespace seedrl
