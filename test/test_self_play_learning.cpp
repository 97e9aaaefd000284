// train_self_play end to end (issue 37): V-trace on tic-tac-toe against its league (its latest
// self, snapshots, a random player) ends far stronger than a random player, greedily, from either
// side; the league took its snapshots and played every kind of opponent. The league is kept beside
// the checkpoint and a resumed run continues it; a league file that does not fit is refused.
#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "seedrl/agents/vtrace.hpp"
#include "seedrl/backend/cpu/backend.hpp"
#include "seedrl/env/board_game.hpp"
#include "seedrl/session/builtin_agents.hpp"
#include "seedrl/session/match.hpp"
#include "seedrl/session/self_play.hpp"
#include "support/temp_dir.hpp"

namespace test_self_play_learning {

using namespace seedrl;
using Backend = cpu::Backend;

TEST_CASE("train_self_play: tic-tac-toe against its league beats a random player" *
          doctest::test_suite("learning")) {
  VTraceAgentOptions o;
  o.network = nn::NetworkOptions::mlp(18, 9, {64, 64});
  o.network.observation_shape = {2, 3, 3};
  o.network.seed = 4;
  o.batch_size = 16;
  o.discount = 1.0f;
  o.optimizer.kind = nn::OptimizerKind::adam;
  o.learning_rate = {1e-3, 0, 0.0};
  o.loss.entropy_cost = 0.05f;  // examples/selfplay's
  const VTraceAgent agent(o);
  SelfPlayOptions run;
  run.total_frames = 400'000;
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
  // The snapshots played were loaded into networks, built once and reused as sets came and went.
  MESSAGE("opponent loads ", result.opponent_loads, ", networks built ",
          result.opponent_networks_built);
  CHECK(result.opponent_loads >= 10);
  CHECK(result.opponent_networks_built >= 1);
  CHECK(result.opponent_networks_built <= result.opponent_loads);
  // Greedy, the final policy wins most games against a random player from either side, where a
  // random player against another wins 44% of its games.
  const MatchResult match = play_match(agent.network_config(), result.parameters, TicTacToe(),
                                       fixed.at("random"), 400, 11);
  MESSAGE("as player 0: ", match.as_first.wins, "/", match.as_first.draws, "/",
          match.as_first.losses, ", as player 1: ", match.as_second.wins, "/",
          match.as_second.draws, "/", match.as_second.losses);
  // Random against random: the first player wins 58% (loses 29%), the second 29% (loses 58%).
  // The run's threads interleave differently from one run to the next (under a sanitizer most of
  // all): the margins hold for any run that learned, and fail one whose seats learn nothing.
  CHECK(match.as_first.win_rate() > 0.7);
  CHECK(match.as_second.win_rate() > 0.45);
  CHECK(match.total().loss_rate() < 0.3);
  CHECK(league.rating() > 1200.0);
}

TEST_CASE("train_self_play: the league is checkpointed and a resumed run continues it") {
  const test::TempDir dir("seedrl_self_play_resume");
  VTraceAgentOptions o;
  o.network = nn::NetworkOptions::mlp(18, 9, {16});
  o.network.observation_shape = {2, 3, 3};
  o.batch_size = 4;
  const VTraceAgent agent(o);
  SelfPlayOptions run;
  run.total_frames = 20'000;
  run.num_actors = 1;
  run.games_per_actor = 8;
  run.server.unroll_length = 8;
  run.league.snapshot_every = 20;
  run.league.window = 3;
  run.logdir = dir.path.string();
  run.checkpoint_seconds = 0;
  std::map<std::string, ScriptedPlayer<TicTacToe>> fixed{
      {"first_cell", [](const TicTacToe& game, int, Rng&) {
         std::int32_t a = 0;
         while (!game.legal(a)) ++a;
         return a;
       }}};
  auto make = [](std::int32_t, std::int32_t) { return TicTacToe(); };
  const SelfPlayResult first = train_self_play<VTraceAgent, Backend>(agent, make, run, fixed);
  REQUIRE(std::filesystem::exists(dir / "league.safetensors"));
  const League& saved = first.league;
  REQUIRE(saved.snapshots().size() == 3);

  // The resumed run starts from the saved league: its snapshots (values included) and its tallies.
  run.total_frames = 40'000;
  const SelfPlayResult second = train_self_play<VTraceAgent, Backend>(agent, make, run, fixed);
  CHECK(second.training.resumed);
  const League& resumed = second.league;
  CHECK(resumed.tally("first_cell").games() > saved.tally("first_cell").games());
  CHECK(resumed.tally("latest").games() > saved.tally("latest").games());
  CHECK(resumed.snapshots().front().id > saved.snapshots().back().id - 3);
  CHECK(resumed.snapshots().back().learner_step > saved.snapshots().back().learner_step);
  // The ids continue from the saved ones (a new league would start again at 0).
  CHECK(resumed.snapshots().back().id > saved.snapshots().back().id);

  // Another run's fixed opponents do not fit: refused by name, nothing trained.
  std::map<std::string, ScriptedPlayer<TicTacToe>> other{{"someone_else", fixed.at("first_cell")}};
  run.total_frames = 60'000;
  auto train_other = [&] { train_self_play<VTraceAgent, Backend>(agent, make, run, other); };
  CHECK_THROWS_WITH(train_other(), doctest::Contains("league.safetensors"));
}

}  // namespace test_self_play_learning
