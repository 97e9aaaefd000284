// The R2D2 agent and its learner: what a program includes to train R2D2Agent (with
// session/training_session.hpp or session/local_trainer.hpp) or to build its pieces.
#pragma once

#include "seedrl/agents/r2d2/agent.hpp"         // IWYU pragma: export
#include "seedrl/agents/r2d2/learner.hpp"       // IWYU pragma: export
#include "seedrl/inference/server_options.hpp"  // IWYU pragma: export: make_unroll_spec
