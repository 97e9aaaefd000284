// session/match.hpp: a series of games alternates the sides and counts each side's results as
// the games end, a player's view carries its mask, the random player keeps to the mask and covers
// it evenly, a network's greedy move is the best logit its mask allows, and a checkpoint's Policy
// plays the same moves as its network (and refuses a recurrent one).
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <set>
#include <vector>

#include "seedrl/agents/vtrace.hpp"
#include "seedrl/env/board_game.hpp"
#include "seedrl/env/standoff.hpp"
#include "seedrl/policy/policy.hpp"
#include "seedrl/session/match.hpp"
#include "support/temp_dir.hpp"

namespace test_match {

using namespace seedrl;

namespace {

// Tic-tac-toe players that take the lowest (or the highest) empty cell, read from the game itself.
std::int32_t lowest(const TicTacToe& game, int, Rng&) {
  for (std::int32_t a = 0; a < 9; ++a)
    if (game.legal(a)) return a;
  return -1;
}
std::int32_t highest(const TicTacToe& game, int, Rng&) {
  for (std::int32_t a = 8; a >= 0; --a)
    if (game.legal(a)) return a;
  return -1;
}

// Plays a random legal move for player `p`, so that the positions vary; 1 when that ended the
// game (which is then reset), else 0.
int play_on(TicTacToe& game, int p, Rng& rng) {
  std::int32_t actions[2] = {0, 0};
  actions[p] = random_legal_player<TicTacToe>()(game, p, rng);
  if (!game.step(actions).episode_over()) return 0;
  game.reset();
  return 1;
}

}  // namespace

TEST_CASE("play_games: sides alternate and each side's results are the first player's") {
  // Lowest first: X 0, O 8, X 1, O 7, X 2 wins the top row. Highest first: X 8, O 0, X 7, O 1,
  // X 6 wins the bottom row. Whoever moves first wins, in five moves.
  std::vector<int> sides, steps_seen;
  int resets = 0;
  const MatchWatcher<TicTacToe> watch = [&](const TicTacToe& game, int index, int side,
                                            const PlayersStepResult* step) {
    if (step == nullptr) {
      CHECK(game.moves() == 0);
      sides.push_back(side);
      steps_seen.push_back(0);
      ++resets;
      return;
    }
    CHECK(index == resets - 1);
    ++steps_seen.back();
  };
  const MatchResult r = play_games(TicTacToe(), lowest, highest, 5, 1, watch);
  CHECK(sides == std::vector<int>{0, 1, 0, 1, 0});
  CHECK(steps_seen == std::vector<int>(5, 5));
  CHECK(r.as_first.wins == 3);
  CHECK(r.as_first.games() == 3);
  CHECK(r.as_second.losses == 2);
  CHECK(r.as_second.games() == 2);
  CHECK(r.total().wins == 3);
  CHECK(r.total().losses == 2);
  CHECK(r.as_first.to_json() == R"({"wins":3,"draws":0,"losses":0})");

  // first_side 1: the first game has the first player second.
  const MatchResult swapped = play_games(TicTacToe(), lowest, highest, 2, 1, {}, 1);
  CHECK(swapped.as_second.losses == 1);
  CHECK(swapped.as_first.wins == 1);
  CHECK_THROWS_WITH_AS(play_games(TicTacToe(), lowest, highest, 2, 1, {}, 2),
                       doctest::Contains("first_side is 0 or 1"), Error);

  // Two random opening moves: the same two players meet many games, not one a side, and the
  // moves after the opening are theirs again.
  std::set<std::vector<int>> games_seen;
  std::vector<int> cells;
  int step_index = 0;
  const MatchWatcher<TicTacToe> record = [&](const TicTacToe& game, int, int,
                                             const PlayersStepResult* step) {
    if (step == nullptr) {
      cells.clear();
      step_index = 0;
      return;
    }
    ++step_index;
    std::vector<int> board;
    for (std::int32_t c = 0; c < 9; ++c) board.push_back(game.cell(c / 3, c % 3));
    cells = board;
    if (step->episode_over()) games_seen.insert(cells);
  };
  const MatchResult opened = play_games(TicTacToe(), lowest, highest, 200, 7, record, 0, 2);
  CHECK(opened.total().games() == 200);
  CHECK(games_seen.size() > 20);
  CHECK(play_games(TicTacToe(), lowest, highest, 200, 7, {}, 0, 0).as_first.wins == 100);

  // Standoff: a player who always blocks never loses; one who reloads then shoots is blocked
  // every time, and the games run to the step limit as draws.
  const ScriptedPlayer<Standoff> block = [](const Standoff&, int, Rng&) {
    return std::int32_t{Standoff::kBlock};
  };
  const ScriptedPlayer<Standoff> gunner = [](const Standoff& game, int p, Rng&) {
    return game.bullets(p) > 0 ? std::int32_t{Standoff::kShoot} : std::int32_t{Standoff::kReload};
  };
  const MatchResult duel = play_games(Standoff(), block, gunner, 4, 1);
  CHECK(duel.total().draws == 4);
}

TEST_CASE("random_legal_player: only what the mask allows, each legal move about as often") {
  ConnectFour game;
  // Fill columns 0 and 6 (alternating stones, no line of four in a column).
  for (int i = 0; i < 12; ++i) {
    const std::int32_t moves[2] = {i < 6 ? 0 : 6, i < 6 ? 0 : 6};
    REQUIRE_FALSE(game.step(moves).episode_over());
  }
  REQUIRE_FALSE(game.legal(0));
  REQUIRE_FALSE(game.legal(6));
  const ScriptedPlayer<ConnectFour> random = random_legal_player<ConnectFour>();
  Rng rng(3);
  std::vector<int> counts(7, 0);
  constexpr int kDraws = 5000;
  for (int i = 0; i < kDraws; ++i) ++counts[static_cast<std::size_t>(random(game, 0, rng))];
  CHECK(counts[0] == 0);
  CHECK(counts[6] == 0);
  for (int c = 1; c <= 5; ++c) {
    CAPTURE(c);
    CHECK(counts[static_cast<std::size_t>(c)] == doctest::Approx(kDraws / 5.0).epsilon(0.1));
  }
  // The player who waits may make no move: refused by name.
  CHECK_THROWS_WITH_AS(random(game, 1, rng), doctest::Contains("may make no move"), Error);
  // A game of other sizes (the same type) gets a view of its own sizes.
  BoardGame small({"small", 2, 2, 2, false});
  const ScriptedPlayer<BoardGame> any = random_legal_player<BoardGame>();
  BoardGame large({"large", 4, 5, 3, false});
  for (int i = 0; i < 50; ++i) {
    CHECK(any(small, 0, rng) < 4);
    CHECK(any(large, 0, rng) < 20);
  }
}

TEST_CASE("network_player: the highest logit among the moves the mask allows") {
  const TicTacToe probe;
  nn::NetworkOptions config = nn::NetworkOptions::mlp(18, 9, {16});
  config.observation_shape = {2, 3, 3};
  nn::Network<cpu::Backend> reference(config);
  Rng init(5);
  const Tensor& values = reference.parameters().values();
  for (std::int64_t i = 0; i < values.numel(); ++i)
    values.data<float>()[i] = static_cast<float>(init.uniform() * 2.0 - 1.0);
  reference.parameters().bump_version();
  const ScriptedPlayer<TicTacToe> greedy = network_player(config, values, probe);
  PlayerView<TicTacToe> view(probe);
  TicTacToe game;
  Rng rng(9);
  int games = 0, checked = 0;
  while (games < 20) {
    const int p = game.to_move();
    const std::int32_t move = greedy(game, p, rng);
    // The reference: the network's logits for this player's planes, the best legal cell by brute
    // force over the game's own rules.
    view.observe(game, p);
    const nn::NetworkOutputs& out = reference.forward(view.observation().reshape({1, 1, 2, 3, 3}),
                                                      {}, Tensor::zeros({1, 1}, DType::u8));
    const float* logits = out.logits.data<float>();
    std::int32_t best = -1;
    for (std::int32_t a = 0; a < 9; ++a)
      if (game.legal(a) && (best < 0 || logits[a] > logits[best])) best = a;
    CHECK(move == best);
    ++checked;
    games += play_on(game, p, rng);
  }
  CHECK(checked > 60);
}

// A tic-tac-toe learner's checkpoint, with a recurrent core of `lstm` units (0: none), and the
// learner's network and values.
struct Saved {
  std::string path;
  nn::NetworkOptions config;
  Tensor values;
};
Saved save_tictactoe(const test::TempDir& dir, std::int64_t lstm) {
  const TicTacToe probe;
  Saved saved{dir / (lstm ? "recurrent.safetensors" : "checkpoint.safetensors"),
              nn::NetworkOptions::mlp(18, 9, {16}),
              {}};
  saved.config.observation_shape = {2, 3, 3};
  saved.config.lstm_size = lstm;
  saved.config.seed = 7;
  VTraceAgentOptions o;
  o.network = saved.config;
  const VTraceAgent agent(o);
  const StepSpec step{probe.observation_spec(), probe.action_spec(), probe.step_fields()};
  UnrollQueue queue(1);
  Learner<VTraceAgent, cpu::Backend> learner(agent, make_unroll_spec(agent, step, {}), queue);
  // As a training session saves it: with the action spec and the declared fields (the mask).
  learner.save_checkpoint(saved.path, {1, 0, 0, {}, {}},
                          {{"action_spec", step.action.to_text()},
                           {"step_fields", StepSpec::fields_to_text(step.fields)}});
  saved.values = learner.networks().values()[0].values.clone(Device::cpu);
  return saved;
}

TEST_CASE("policy_player: a checkpoint's greedy moves are its network's; a recurrent one refused") {
  test::TempDir dir("match");
  const Saved saved = save_tictactoe(dir, 0);
  Policy<> policy(saved.path);
  const TicTacToe probe;
  const ScriptedPlayer<TicTacToe> from_policy = policy_player(policy, probe);
  const ScriptedPlayer<TicTacToe> from_network = network_player(saved.config, saved.values, probe);
  TicTacToe game;
  Rng rng(3);
  int checked = 0;
  for (int games = 0; games < 10;) {
    const int p = game.to_move();
    CHECK(from_policy(game, p, rng) == from_network(game, p, rng));
    ++checked;
    games += play_on(game, p, rng);
  }
  CHECK(checked > 30);

  Policy<> recurrent(save_tictactoe(dir, 8).path);
  CHECK_THROWS_WITH_AS(policy_player(recurrent, probe), doctest::Contains("recurrent network"),
                       Error);
}

}  // namespace test_match
