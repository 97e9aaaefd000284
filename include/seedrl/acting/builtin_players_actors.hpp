// The actors of the built-in games of two players, as examples/selfplay trains on them (the board
// games behind their random openings, the duel as it is): compiled once, in the library
// (src/acting/builtin_players_actors.cpp), so that programs that train on them
// (train_self_play, session/self_play.hpp, includes this header) do not instantiate them again.
#pragma once

#include "seedrl/acting/players_actor.hpp"
#include "seedrl/env/board_game.hpp"
#include "seedrl/env/random_openings.hpp"
#include "seedrl/env/standoff.hpp"

// Declared with SEEDRL_BUILTIN_PLAYERS_ACTORS(extern), defined (once, in the library) with
// SEEDRL_BUILTIN_PLAYERS_ACTORS().
#define SEEDRL_BUILTIN_PLAYERS_ACTORS(EXTERN)                      \
  EXTERN template class PlayersActor<RandomOpenings<TicTacToe>>;   \
  EXTERN template class PlayersActor<RandomOpenings<ConnectFour>>; \
  EXTERN template class PlayersActor<Standoff>

namespace seedrl {

SEEDRL_BUILTIN_PLAYERS_ACTORS(extern);

}  // namespace seedrl
