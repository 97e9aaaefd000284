// The SAC agent and its learner: what a program includes to train SacAgent (with
// session/training_session.hpp or session/local_trainer.hpp) or to build its pieces.
#pragma once

#include "seedrl/agents/sac/agent.hpp"          // IWYU pragma: export
#include "seedrl/agents/sac/learner.hpp"        // IWYU pragma: export
#include "seedrl/inference/server_options.hpp"  // IWYU pragma: export: make_unroll_spec
