// The recipes (seedrl/recipes/): each is a valid set of options once the environment's sizes are
// filled in, and the derived ones keep what they derive from (vtrace_from: the PPO recipe's
// shared options; the games: their base agent's).
#include <doctest/doctest.h>

#include "seedrl/agents/sac.hpp"
#include "seedrl/recipes/control.hpp"
#include "seedrl/recipes/games.hpp"
#include "seedrl/recipes/minatar.hpp"

namespace test_recipes {

using namespace seedrl;

template <class Options>
void sized_validates(Options agent, nn::NetworkOptions sizes) {
  agent.network.observation_shape = sizes.observation_shape;
  agent.network.num_actions = sizes.num_actions;
  agent.network.action_dims = sizes.action_dims;
  if (sizes.action_dims > 0) agent.network.gaussian(sizes.action_dims);
  CHECK_NOTHROW(agent.validate());
}

}  // namespace test_recipes

TEST_CASE("every recipe is valid with its environment's sizes") {
  using namespace test_recipes;
  const nn::NetworkOptions minatar = nn::NetworkOptions::minatar(4, 6);
  const nn::NetworkOptions discrete = nn::NetworkOptions::mlp(16, 8);
  nn::NetworkOptions box = nn::NetworkOptions::mlp(17, 0);
  box.gaussian(6);
  sized_validates(recipes::minatar_vtrace().agent, minatar);
  sized_validates(recipes::minatar_ppo().agent, minatar);
  sized_validates(recipes::minatar_r2d2().agent, minatar);
  sized_validates(recipes::cartpole_vtrace().agent, nn::NetworkOptions::mlp(4, 2));
  sized_validates(recipes::mujoco_ppo().agent, box);
  sized_validates(recipes::pendulum_ppo().agent, box);
  sized_validates(recipes::mujoco_vtrace().agent, box);
  sized_validates(recipes::card_pick_vtrace().agent, discrete);
  sized_validates(recipes::card_pick_ppo().agent, discrete);
  sized_validates(recipes::card_pick_r2d2().agent, discrete);
  sized_validates(recipes::gunner_r2d2().agent, discrete);
  sized_validates(recipes::selfplay("tictactoe").agent, nn::NetworkOptions::mlp(18, 9));
  sized_validates(recipes::selfplay("connect4").agent, nn::NetworkOptions::board({2, 6, 7}, 7));
  SacAgentOptions sac = recipes::mujoco_sac().agent;
  CHECK_NOTHROW(sac.sizes(17, 6).validate());
  CHECK_NOTHROW(recipes::minatar_vtrace().run.validate());
  CHECK_NOTHROW(recipes::card_pick_r2d2().run.validate());
}

TEST_CASE("derived recipes keep what they derive from, and change what they say") {
  using namespace seedrl;
  const auto ppo = recipes::mujoco_ppo();
  const auto vtrace = recipes::mujoco_vtrace();
  CHECK(vtrace.agent.discount == ppo.agent.discount);
  CHECK(vtrace.agent.learning_rate.initial == ppo.agent.learning_rate.initial);
  CHECK(vtrace.agent.max_grad_norm == ppo.agent.max_grad_norm);
  CHECK(vtrace.agent.optimizer.adam.epsilon == ppo.agent.optimizer.adam.epsilon);
  CHECK(vtrace.agent.normalization.rewards == ppo.agent.normalization.rewards);
  CHECK(vtrace.agent.vtrace.lambda == ppo.agent.lambda);
  CHECK(vtrace.agent.loss.baseline_cost == ppo.agent.loss.value_cost);
  CHECK(vtrace.agent.batch_size == 8);
  CHECK(vtrace.run.server.unroll_length == 16);
  CHECK(vtrace.frames == ppo.frames);
  // Pendulum's PPO changes the discount and the rate and drops the MuJoCo network's choices.
  const auto pendulum = recipes::pendulum_ppo();
  CHECK(pendulum.agent.discount == 0.9f);
  CHECK_FALSE(pendulum.agent.proximal_policy);
  CHECK(pendulum.agent.epochs == ppo.agent.epochs);
  // The games: their MLP and frames, the rest their base agent's.
  const auto gunner = recipes::gunner_ppo();
  CHECK(gunner.agent.network.mlp_hidden == std::vector<std::int64_t>{64});
  CHECK(gunner.agent.loss.entropy_cost == 0.01f);
  // MinAtar V-trace's entropy cost is its own (0.005: Freeway), not the base agent's 0.01.
  CHECK(recipes::minatar_vtrace().agent.loss.entropy_cost == 0.005f);
  CHECK(recipes::vtrace_base().agent.loss.entropy_cost == 0.01f);
  CHECK(gunner.agent.epochs == ppo.agent.epochs);
  CHECK(recipes::card_pick_r2d2().run.server.burn_in == 2);
  CHECK(recipes::selfplay("tictactoe").frames == 3'000'000);
  CHECK(recipes::selfplay("standoff").frames == 2'000'000);
  // Connect Four's: the board torso and the search players the 120 M-frame runs of
  // docs/results.md had as flags; the others keep the MLP, and the duel has no openings.
  const auto connect4 = recipes::selfplay("connect4");
  CHECK(connect4.agent.network.torso == nn::Torso::board);
  CHECK(connect4.agent.network.conv_channels == std::vector<std::int64_t>{32, 32});
  CHECK(connect4.agent.network.mlp_hidden == std::vector<std::int64_t>{256});
  CHECK(connect4.agent.batch_size == 32);
  CHECK(connect4.run.league.snapshot_every == 500);
  CHECK(connect4.run.league.play_fixed == 0.3);
  CHECK(connect4.search_depths == std::vector<int>{2, 4});
  CHECK(connect4.opening_moves == 4);
  CHECK(connect4.frames == 120'000'000);
  CHECK(connect4.agent.loss.entropy_cost == recipes::selfplay("tictactoe").agent.loss.entropy_cost);
  CHECK(recipes::selfplay("tictactoe").agent.network.torso == nn::Torso::mlp);
  CHECK(recipes::selfplay("tictactoe").search_depths.empty());
  CHECK(recipes::selfplay("tictactoe").opening_moves == 4);
  CHECK(recipes::selfplay("standoff").opening_moves == 0);
  CHECK(recipes::selfplay("standoff").run.league.play_fixed < 0.0);
  // MinAtar's R2D2 is the base agent's on the MinAtar torso, its Q head kept.
  const auto r2d2 = recipes::minatar_r2d2();
  CHECK(r2d2.agent.network.torso == nn::Torso::minatar);
  CHECK(r2d2.agent.network.dueling);
  CHECK(r2d2.agent.network.lstm_size == 64);
  CHECK(r2d2.agent.target_update_period == recipes::r2d2_base().agent.target_update_period);
}

TEST_CASE("SAC's recipes keep the replay beside each checkpoint, so a resumed run samples it") {
  // A MuJoCo run of 1 M steps takes hours; stopped and resumed from its logdir without its replay
  // it would learn from a refilled one (docs/checkpoints.md). Pendulum's derives from MuJoCo's.
  CHECK(seedrl::recipes::mujoco_sac().agent.checkpoint_replay);
  CHECK(seedrl::recipes::pendulum_sac().agent.checkpoint_replay);
  CHECK_FALSE(seedrl::SacAgentOptions{}.checkpoint_replay);  // the library's own default: off
}
