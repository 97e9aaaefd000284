// The actors of the built-in environments on the in-process client (LocalClient): compiled once,
// in the library (src/acting/builtin_actors.cpp), so that programs that train on them
// (train_locally, session/local_trainer.hpp, includes this header) do not instantiate them again.
// The five MinAtar games' alone took 7.5 s of each MinAtar example's compile (GCC -O3).
#pragma once

#include "seedrl/acting/actor.hpp"
#include "seedrl/acting/inference_client.hpp"
#include "seedrl/env/cartpole.hpp"
#include "seedrl/env/catch.hpp"
#include "seedrl/env/flatten_observation.hpp"
#include "seedrl/env/minatar/asterix.hpp"
#include "seedrl/env/minatar/breakout.hpp"
#include "seedrl/env/minatar/freeway.hpp"
#include "seedrl/env/minatar/seaquest.hpp"
#include "seedrl/env/minatar/space_invaders.hpp"
#include "seedrl/env/pendulum.hpp"

// Declared with SEEDRL_BUILTIN_ACTORS(extern), defined (once, in the library) with
// SEEDRL_BUILTIN_ACTORS().
#define SEEDRL_BUILTIN_ACTORS(EXTERN)                                  \
  EXTERN template class Actor<CartPole, LocalClient>;                  \
  EXTERN template class Actor<FlattenObservation<Catch>, LocalClient>; \
  EXTERN template class Actor<Pendulum, LocalClient>;                  \
  EXTERN template class Actor<MinAtarBreakout, LocalClient>;           \
  EXTERN template class Actor<MinAtarFreeway, LocalClient>;            \
  EXTERN template class Actor<MinAtarAsterix, LocalClient>;            \
  EXTERN template class Actor<MinAtarSeaquest, LocalClient>;           \
  EXTERN template class Actor<MinAtarSpaceInvaders, LocalClient>

namespace seedrl {

SEEDRL_BUILTIN_ACTORS(extern);

}  // namespace seedrl
