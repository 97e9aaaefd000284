// ELO ratings (league/elo.hpp) against hand-computed values, and the self-play league
// (league/league.hpp): the snapshot schedule and window, how often each opponent is drawn, the
// ratings and tallies each game moves, and its text surviving a checkpoint (and bad text refused
// by name).
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <string>

#include "seedrl/core/error.hpp"
#include "seedrl/core/random.hpp"
#include "seedrl/league/elo.hpp"
#include "seedrl/league/league.hpp"

namespace test_league {

using namespace seedrl;

TEST_CASE("ELO: expected scores and updates as computed by hand") {
  CHECK(elo_expected_score(1200, 1200) == doctest::Approx(0.5));
  // 1 / (1 + 10^(-200/400)) = 1 / (1 + 0.316228) = 0.759747
  CHECK(elo_expected_score(1400, 1200) == doctest::Approx(0.759747).epsilon(1e-6));
  CHECK(elo_expected_score(1200, 1400) == doctest::Approx(0.240253).epsilon(1e-6));
  double a = 1200, b = 1200;
  elo_update(a, b, 1.0, 16);  // equal ratings, a wins: +8 / -8
  CHECK(a == doctest::Approx(1208));
  CHECK(b == doctest::Approx(1192));
  double strong = 1400, weak = 1200;
  elo_update(strong, weak, 1.0, 16);  // the favourite wins: +16 x 0.240253 = 3.844
  CHECK(strong == doctest::Approx(1403.844).epsilon(1e-6));
  CHECK(weak == doctest::Approx(1196.156).epsilon(1e-6));
  strong = 1400, weak = 1200;
  elo_update(strong, weak, 0.5, 16);  // a draw costs the favourite 16 x 0.259747 = 4.156
  CHECK(strong == doctest::Approx(1395.844).epsilon(1e-6));
  CHECK(weak == doctest::Approx(1204.156).epsilon(1e-6));
  CHECK_THROWS_WITH_AS(elo_update(a, b, 0.7, 16), doctest::Contains("got 0.7"), Error);
  EloOptions bad;
  bad.k = 0;
  CHECK_THROWS_WITH_AS(bad.validate(), doctest::Contains("EloOptions.k must be > 0"), Error);
}

TEST_CASE("League: snapshots every S learner steps, the window keeps the K most recent") {
  LeagueOptions o;
  o.snapshot_every = 100;
  o.window = 3;
  League league(o);
  CHECK(league.snapshot_due(0));
  CHECK(league.add_snapshot(0, Tensor::zeros({2})) == 0);
  CHECK_FALSE(league.snapshot_due(99));
  CHECK(league.snapshot_due(100));
  for (std::int64_t step = 100; step <= 400; step += 100)
    league.add_snapshot(step, Tensor::zeros({2}));
  REQUIRE(league.snapshots().size() == 3);
  CHECK(league.snapshots().front().id == 2);  // ids 0 and 1 left the window
  CHECK(league.snapshots().back().learner_step == 400);
  CHECK(league.snapshot(1) == nullptr);
  CHECK(league.snapshot(4) != nullptr);
  Tensor values = Tensor::zeros({2});
  values.data<float>()[1] = 1.0f;
  league.set_values(4, values);
  CHECK(league.snapshot(4)->values.data<float>()[1] == 1.0f);
  CHECK_THROWS_WITH_AS(league.set_values(0, values), doctest::Contains("no snapshot 0"), Error);
  o.window = 0;
  CHECK_THROWS_WITH_AS(League{o}, doctest::Contains("LeagueOptions.window"), Error);
  o.window = 3;
  o.play_latest = 1.5;
  CHECK_THROWS_WITH_AS(League{o}, doctest::Contains("LeagueOptions.play_latest"), Error);
  CHECK_THROWS_WITH_AS((League{{}, {"minimax", "minimax"}}), doctest::Contains("named twice"),
                       Error);
  CHECK_THROWS_WITH_AS((League{{}, {"latest"}}), doctest::Contains("one word other than"), Error);
}

TEST_CASE("League: the latest self with probability p, else uniformly among the others") {
  LeagueOptions o;
  o.window = 3;
  o.play_latest = 0.3;
  League league(o, {"random"});
  Rng rng(1);
  for (std::int64_t s = 0; s < 3; ++s) league.add_snapshot(s * 2000, Tensor::zeros({1}));
  std::map<std::string, int> counts;
  const int n = 40000;
  for (int i = 0; i < n; ++i) {
    const Opponent op = league.draw(rng);
    counts[op.kind == Opponent::Kind::snapshot ? "snapshot " + std::to_string(op.snapshot)
                                               : op.tally()]++;
  }
  // latest 0.3; the other 0.7 spread over 3 snapshots and 1 fixed opponent: 0.175 each.
  const double sd = std::sqrt(0.3 * 0.7 / n);
  CHECK(std::abs(counts["latest"] / double(n) - 0.3) < 4 * sd);
  for (const char* k : {"snapshot 0", "snapshot 1", "snapshot 2", "random"}) {
    CAPTURE(k);
    CHECK(std::abs(counts[k] / double(n) - 0.175) < 4 * std::sqrt(0.175 * 0.825 / n));
  }
  o.play_latest = 0.0;
  League only_latest(o);  // no one else: always the latest self
  for (int i = 0; i < 100; ++i) CHECK(only_latest.draw(rng).kind == Opponent::Kind::latest);
}

TEST_CASE("League: with play_fixed, the fixed opponents' share is set apart from the snapshots'") {
  LeagueOptions o;
  o.window = 3;
  o.play_latest = 0.4;
  o.play_fixed = 0.2;
  League league(o, {"random", "search2"});
  Rng rng(2);
  const int n = 40000;
  auto frequencies = [&] {
    std::map<std::string, double> f;
    for (int i = 0; i < n; ++i) f[league.draw(rng).tally()] += 1.0 / n;
    return f;
  };
  auto near = [&](double got, double p) {
    return std::abs(got - p) < 4 * std::sqrt(p * (1 - p) / n);
  };
  // No snapshots yet: their share (0.4) goes to the latest self; each fixed player 0.1.
  std::map<std::string, double> f = frequencies();
  CHECK(near(f["latest"], 0.8));
  CHECK(near(f["random"], 0.1));
  CHECK(near(f["search2"], 0.1));
  CHECK(f["snapshot"] == 0.0);
  // Three snapshots share 0.4, however many there are; the fixed players keep 0.1 each.
  for (std::int64_t s = 0; s < 3; ++s) league.add_snapshot(s * 2000, Tensor::zeros({1}));
  f = frequencies();
  CHECK(near(f["latest"], 0.4));
  CHECK(near(f["snapshot"], 0.4));
  CHECK(near(f["random"], 0.1));
  CHECK(near(f["search2"], 0.1));
  // No fixed players: their share goes to the latest self.
  League no_fixed(o);
  for (std::int64_t s = 0; s < 3; ++s) no_fixed.add_snapshot(s * 2000, Tensor::zeros({1}));
  int latest = 0;
  for (int i = 0; i < n; ++i) latest += no_fixed.draw(rng).kind == Opponent::Kind::latest;
  CHECK(near(latest / double(n), 0.6));
  o.play_fixed = 0.7;
  CHECK_THROWS_WITH_AS(League{o}, doctest::Contains("LeagueOptions.play_fixed must be negative"),
                       Error);
}

TEST_CASE("League: games move the ratings of the learner and its opponent, and the tallies") {
  League league({}, {"minimax"});
  league.add_snapshot(0, Tensor::zeros({1}));
  CHECK(league.rating() == 1200);
  CHECK(league.snapshots().front().rating == 1200);
  league.record({Opponent::Kind::snapshot, 0, {}}, 1.0);  // a win against the snapshot: +8
  CHECK(league.rating() == doctest::Approx(1208));
  CHECK(league.snapshots().front().rating == doctest::Approx(1192));
  league.record({}, 0.0);  // a loss to the latest self: no rating moves
  CHECK(league.rating() == doctest::Approx(1208));
  league.record({Opponent::Kind::fixed, -1, "minimax"}, 0.5);  // 1208 vs 1200: a draw
  const double change = 16 * (0.5 - elo_expected_score(1208, 1200));
  CHECK(league.rating() == doctest::Approx(1208 + change));
  CHECK(league.rating_of("minimax") == doctest::Approx(1200 - change));
  league.add_snapshot(2000, Tensor::zeros({1}));  // taken at the learner's rating
  CHECK(league.snapshots().back().rating == doctest::Approx(league.rating()));
  CHECK(league.tally("snapshot").wins == 1);
  CHECK(league.tally("latest").losses == 1);
  CHECK(league.tally("minimax").draws == 1);
  CHECK(league.tally("minimax").draw_rate() == 1.0);
  CHECK(league.tally("nobody").games() == 0);
  CHECK_THROWS_WITH_AS(league.record({Opponent::Kind::fixed, -1, "alphabeta"}, 1.0),
                       doctest::Contains("no fixed opponent 'alphabeta'"), Error);
}

TEST_CASE("League: its text restores ratings, snapshots and tallies; bad text is refused") {
  LeagueOptions o;
  o.window = 2;
  League league(o, {"random"});
  league.add_snapshot(0, Tensor::zeros({1}));
  league.add_snapshot(2000, Tensor::zeros({1}));
  league.add_snapshot(4000, Tensor::zeros({1}));
  league.record({Opponent::Kind::snapshot, 2, {}}, 1.0);
  league.record({Opponent::Kind::fixed, -1, "random"}, 1.0);
  league.record({}, 0.5);
  const std::string text = league.to_text();

  League resumed(o, {"random"});
  resumed.restore(text, "ckpt");
  CHECK(resumed.to_text() == text);
  CHECK(resumed.rating() == league.rating());
  REQUIRE(resumed.snapshots().size() == 2);
  CHECK(resumed.snapshots()[1].id == 2);
  CHECK_FALSE(resumed.snapshots()[1].values.defined());  // the values come from the checkpoint
  CHECK(resumed.snapshot_due(5999) == league.snapshot_due(5999));
  CHECK(resumed.add_snapshot(6000, Tensor::zeros({1})) == 3);  // ids continue
  CHECK(resumed.tally("random").wins == 1);

  League other(o, {"minimax"});
  CHECK_THROWS_WITH_AS(other.restore(text, "ckpt"),
                       doctest::Contains("ckpt: fixed opponent 'random' is not in this run"),
                       Error);
  CHECK_THROWS_WITH_AS(resumed.restore("league 2\n", "ckpt"),
                       doctest::Contains("no 'league 1' header"), Error);
  CHECK_THROWS_WITH_AS(resumed.restore("league 1\nlearner 1200 0 -1\nsnapshot x\n", "ckpt"),
                       doctest::Contains("a bad snapshot line"), Error);
  CHECK_THROWS_WITH_AS(resumed.restore("league 1\nlearner 1200 0 -1\nplayer 3\n", "ckpt"),
                       doctest::Contains("an unknown line 'player'"), Error);
  CHECK(resumed.rating() == league.rating());  // a refused text changes nothing
}

}  // namespace test_league
