// train_self_play end to end (issue 37): V-trace on tic-tac-toe against its league (its latest
// self, snapshots, a random player) ends far stronger than a random player, greedily, from either
// side; the league took its snapshots and played every kind of opponent.
#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "seedrl/agents/vtrace.hpp"
#include "seedrl/backend/cpu/backend.hpp"
#include "seedrl/env/board_game.hpp"
#include "seedrl/session/match.hpp"
#include "seedrl/session/self_play.hpp"

namespace test_self_play_learning {

using namespace seedrl;
using Backend = cpu::Backend;

TEST_CASE("train_self_play: tic-tac-toe against its league beats a random player") {
  VTraceAgentOptions o;
  o.network = nn::NetworkOptions::mlp(18, 9, {64, 64});
  o.network.observation_shape = {2, 3, 3};
  o.network.seed = 4;
  o.batch_size = 16;
  o.discount = 1.0f;
  o.optimizer.kind = nn::OptimizerKind::adam;
  o.learning_rate = {1e-3, 0, 0.0};
  const VTraceAgent agent(o);
  SelfPlayOptions run;
  run.total_frames = 250'000;
  run.num_actors = 2;
  run.games_per_actor = 16;
  run.server.unroll_length = 16;
  run.server.seed = 4;
  run.league.snapshot_every = 100;
  run.seed = 4;
  std::map<std::string, ScriptedPlayer<TicTacToe>> fixed{
      {"random", [](const TicTacToe& game, int, Rng& rng) {
         std::vector<std::int32_t> legal;
         for (std::int32_t a = 0; a < 9; ++a)
           if (game.legal(a)) legal.push_back(a);
         return legal[static_cast<std::size_t>(rng.below(legal.size()))];
       }}};
  const SelfPlayResult result = train_self_play<VTraceAgent, Backend>(
      agent, [](std::int32_t, std::int32_t) { return TicTacToe(); }, run, fixed);
  const League& league = result.league;
  CHECK(result.training.frames >= run.total_frames);
  // Snapshots were taken (one every 100 learner steps, the window full) and played.
  CHECK(league.snapshots().size() == 10);
  CHECK(league.tally("snapshot").games() > 100);
  CHECK(league.tally("latest").games() > 100);
  CHECK(league.tally("random").games() > 100);
  // Greedy, the final policy wins most games against a random player from either side, where a
  // random player against another wins 44% of its games.
  const MatchResult match = play_match(agent.network_config(), result.parameters, TicTacToe(),
                                       fixed.at("random"), 400, 11);
  MESSAGE("as player 0: ", match.as_first.wins, "/", match.as_first.draws, "/",
          match.as_first.losses, ", as player 1: ", match.as_second.wins, "/",
          match.as_second.draws, "/", match.as_second.losses);
  // Random against random: the first player wins 58% (loses 29%), the second 29% (loses 58%).
  CHECK(match.as_first.win_rate() > 0.8);
  CHECK(match.as_second.win_rate() > 0.45);
  CHECK(match.total().loss_rate() < 0.3);
  CHECK(league.rating() > 1200.0);
}

}  // namespace test_self_play_learning
