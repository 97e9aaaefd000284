// PlayersActor (issue 37): games of several players stepped through an InferenceEndpoint, one
// connection per seat. A recording endpoint (answers at once, on the caller's thread) checks the
// turn order as the server sees it: a seat that does not act sends a waiting row, its first
// acting row is flagged first with reward 0, and when the game ends every seat that has played
// sends its final view with what it earned; the learner plays both sides; a fixed opponent's
// moves are its scripted player's. Also OpponentTable's bookkeeping: a set retired while games
// use it stays until they move on.
#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "seedrl/acting/players_actor.hpp"
#include "seedrl/env/board_game.hpp"
#include "seedrl/env/standoff.hpp"
#include "seedrl/inference/opponents.hpp"

namespace test_players_actor {

using namespace seedrl;

namespace {

// Answers every step at once with the first action each row's mask allows (or `forced` for the
// slots in `forced_slots`), and keeps every row it saw, per slot.
struct RecordingEndpoint final : InferenceEndpoint {
  struct Row {
    std::uint8_t flags;
    float reward;
  };
  StepSpec spec;
  std::map<std::int32_t, std::vector<Row>> rows;  // per slot
  std::vector<std::int32_t> forced_slots;
  std::int32_t forced = 0;
  std::uint64_t next_id = 1;

  explicit RecordingEndpoint(StepSpec s) : spec(std::move(s)) {}
  const StepSpec& step_spec() const override { return spec; }
  Status connect(const ConnectRequest& request, Connection* c) override {
    *c = {request.first_slot, request.num_envs, request.run_id, false, next_id++};
    return Status::ok();
  }
  void submit(StepRequest& r) override {
    const int mask = spec.field_index(kActionMaskField);
    const auto width = static_cast<std::size_t>(spec.action.num_actions);
    for (std::int32_t e = 0; e < r.connection.num_envs; ++e) {
      const std::int32_t slot = r.connection.first_slot + e;
      const auto i = static_cast<std::size_t>(e);
      rows[slot].push_back({r.step.flags[i], r.step.rewards[i]});
      const std::uint8_t* m = r.step.fields[static_cast<std::size_t>(mask)].data<std::uint8_t>();
      std::int32_t action = 0;
      for (std::size_t a = 0; a < width; ++a) {
        if (m[i * width + a]) {
          action = static_cast<std::int32_t>(a);
          break;
        }
      }
      for (std::int32_t f : forced_slots)
        if (f == slot) action = forced;
      r.actions.discrete()[i] = action;
    }
    r.on_complete(Status::ok());
  }
  void disconnect(const Connection&) override {}
};

// Counts games and their scores; stops the actor after `games` games.
struct CountingMatchmaker final : Matchmaker {
  Opponent opponent;
  std::vector<double> scores;
  std::int64_t games = 0;
  std::function<void()> stop;
  Opponent start_game(std::span<const std::int32_t>) override { return opponent; }
  void end_game(const Opponent& o, double score) override {
    CHECK(o == opponent);
    scores.push_back(score);
    if (static_cast<std::int64_t>(scores.size()) == games) stop();
  }
};

template <class Game>
StepSpec spec_of(const Game& g) {
  return {g.observation_spec(), g.action_spec(), g.step_fields()};
}

}  // namespace

TEST_CASE(
    "PlayersActor: one seat acts at a time; first, waiting and final rows carry the rewards") {
  constexpr std::int32_t kGames = 3;
  RecordingEndpoint endpoint(spec_of(TicTacToe()));
  CountingMatchmaker matchmaker;
  matchmaker.games = 60;
  PlayersActor<TicTacToe> actor(std::vector<TicTacToe>(kGames), endpoint, matchmaker, {}, 10, 5);
  matchmaker.stop = [&] { actor.stop(); };
  REQUIRE(actor.run().is_ok());
  CHECK(actor.stats().games >= 60);

  // Slots: seat 0 (the learner) at 10..12, seat 1 at 13..15.
  REQUIRE(endpoint.rows.size() == 2 * kGames);
  std::int64_t learner_first_moves = 0, learner_games = 0;
  for (std::int32_t g = 0; g < kGames; ++g) {
    const auto& learner = endpoint.rows.at(10 + g);
    const auto& other = endpoint.rows.at(13 + g);
    REQUIRE(learner.size() == other.size());  // every step carries a row of each seat
    bool in_game = false;
    for (std::size_t t = 0; t < learner.size(); ++t) {
      const std::uint8_t a = learner[t].flags, b = other[t].flags;
      if (is_last(a) || is_last(b)) {
        // The game's last step: both seats have played (tic-tac-toe has >= 5 moves).
        CHECK(is_last(a));
        CHECK(is_last(b));
        CHECK(learner[t].reward == doctest::Approx(-other[t].reward));
        CHECK(
            (learner[t].reward == 1.0f || learner[t].reward == -1.0f || learner[t].reward == 0.0f));
        in_game = false;
        continue;
      }
      // Mid-game: exactly one seat acts.
      CHECK(is_waiting(a) != is_waiting(b));
      if (!in_game) {
        // A game's first step: the mover's row is flagged first; the other seat waits.
        CHECK((is_first(a) || is_first(b)));
        ++learner_games;
        if (is_first(a)) ++learner_first_moves;
        in_game = true;
      }
      for (const auto& seat : {learner[t], other[t]}) {
        if (is_waiting(seat.flags)) CHECK(seat.flags == step_flags::kWaiting);
        if (is_first(seat.flags) || is_waiting(seat.flags)) CHECK(seat.reward == 0.0f);
      }
    }
  }
  // The learner takes each side in about half the games.
  CHECK(learner_games >= 60);
  CHECK(learner_first_moves > learner_games / 4);
  CHECK(learner_first_moves < 3 * learner_games / 4);
  // Scores are 1, 0.5 or 0 and agree with the learner's final rewards (first legal move for
  // both: the first mover wins down column 0... either way, a result every time).
  for (double s : matchmaker.scores) CHECK((s == 1.0 || s == 0.5 || s == 0.0));
}

TEST_CASE("PlayersActor: a fixed opponent's moves come from its scripted player") {
  constexpr std::int32_t kGames = 2;
  RecordingEndpoint endpoint(spec_of(TicTacToe()));
  // Inference would answer the opponent seat's rows with an illegal move (cell 99).
  endpoint.forced_slots = {2, 3};
  endpoint.forced = 99;
  CountingMatchmaker matchmaker;
  matchmaker.opponent = {Opponent::Kind::fixed, -1, "last_cell"};
  matchmaker.games = 20;
  std::int64_t scripted_moves = 0;
  std::map<std::string, ScriptedPlayer<TicTacToe>> scripted{
      {"last_cell", [&](const TicTacToe& game, int player, Rng&) {
         CHECK(game.acts(player));
         ++scripted_moves;
         for (std::int32_t a = 8; a >= 0; --a)
           if (game.legal(a)) return a;
         return std::int32_t{-1};
       }}};
  std::vector<TicTacToe> games(kGames);
  PlayersActor<TicTacToe> actor(games, endpoint, matchmaker, scripted, 0, 9);
  matchmaker.stop = [&] { actor.stop(); };
  REQUIRE(actor.run().is_ok());
  CHECK(scripted_moves > 20 * 2);
  // No game ended on an illegal move: the learner plays the first free cell, the scripted player
  // the last, so nobody loses before the board fills in a line. Every result is a real one.
  CHECK(matchmaker.scores.size() >= 20);

  // An opponent whose name has no scripted player is refused by name.
  CountingMatchmaker unknown;
  unknown.opponent = {Opponent::Kind::fixed, -1, "nobody"};
  PlayersActor<TicTacToe> lost(std::vector<TicTacToe>(1), endpoint, unknown, {}, 0, 1);
  CHECK_THROWS_WITH(static_cast<void>(lost.run()),
                    doctest::Contains("no scripted player for the fixed opponent 'nobody'"));
}

TEST_CASE("PlayersActor: in a game of simultaneous moves every seat acts at every step") {
  RecordingEndpoint endpoint(spec_of(Standoff()));
  CountingMatchmaker matchmaker;
  matchmaker.games = 5;
  PlayersActor<Standoff> actor(std::vector<Standoff>(2), endpoint, matchmaker, {}, 0, 3);
  matchmaker.stop = [&] { actor.stop(); };
  REQUIRE(actor.run().is_ok());
  for (const auto& [slot, rows] : endpoint.rows)
    for (const auto& row : rows) CHECK_FALSE(is_waiting(row.flags));
  // Reload (the first legal move) against reload every step: the duel runs to its move limit.
  for (double s : matchmaker.scores) CHECK(s == 0.5);
}

TEST_CASE("OpponentTable: sets are assigned to slots; a retired set stays until its games end") {
  OpponentTable table(4);
  CHECK_THROWS_WITH(table.put(0, Tensor::zeros({3})), doctest::Contains("must be >= 1"));
  table.put(1, Tensor::from_values<float>({3}, {1.0f, 1.0f, 1.0f}));
  table.put(2, Tensor::from_values<float>({3}, {2.0f, 2.0f, 2.0f}));
  CHECK_THROWS_WITH(table.put(2, Tensor::zeros({3})), doctest::Contains("already held"));
  CHECK(table.assign(0, 1));
  CHECK(table.assign(1, policy_ids::kLatest));
  CHECK_FALSE(table.assign(2, 7));  // not held: nothing changes
  CHECK_THROWS_WITH(table.assign(4, 1), doctest::Contains("outside [0, 4)"));

  std::vector<std::int32_t> policies;
  std::map<std::int32_t, Tensor> values;
  const std::int32_t slots[] = {0, 1, 2, 0};
  table.lookup(slots, policies, values);
  CHECK(policies == std::vector<std::int32_t>{1, policy_ids::kLatest, policy_ids::kLearner, 1});
  REQUIRE(values.size() == 1);
  CHECK(values.at(1).data<float>()[0] == 1.0f);

  // Retired while slot 0 plays it: still served, no longer available to new games.
  table.retire(1);
  CHECK_FALSE(table.available(1));
  CHECK_FALSE(table.assign(3, 1));
  table.lookup(slots, policies, values);
  CHECK(values.contains(1));
  CHECK(table.size() == 2);
  // Slot 0 moves on: set 1 goes. A set nobody plays goes at once.
  CHECK(table.assign(0, 2));
  CHECK(table.size() == 1);
  table.retire(2);
  CHECK(table.size() == 1);  // slot 0 plays it
  CHECK(table.assign(0, policy_ids::kLearner));
  CHECK(table.size() == 0);
}

}  // namespace test_players_actor
