// The actors of the built-in games of two players (declared extern in
// acting/builtin_players_actors.hpp).
#include "seedrl/acting/builtin_players_actors.hpp"

namespace seedrl {

SEEDRL_BUILTIN_PLAYERS_ACTORS();

}  // namespace seedrl
