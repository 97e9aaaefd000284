// Standoff (env/standoff.hpp), the duel with simultaneous moves: each pair of moves against the
// rules (a shot hits a reload, meets a block, passes another shot), bullets and their masks, each
// side's observation, the draw at the step limit, moves the mask forbids, and play: a careful
// scripted player never loses and beats random play, two careful players draw.
#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <functional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "seedrl/core/error.hpp"
#include "seedrl/core/random.hpp"
#include "seedrl/env/standoff.hpp"
#include "support/board_players.hpp"

namespace test_standoff {

using namespace seedrl;

namespace {

constexpr std::int32_t R = Standoff::kReload, B = Standoff::kBlock, S = Standoff::kShoot;

struct View {
  explicit View(const Standoff& game)
      : specs(game.step_fields()),
        observation(Tensor::zeros(game.observation_spec().shape, DType::f32)),
        masks{Tensor::zeros({1, 3}, DType::u8)} {}
  void look(const Standoff& game, int player) {
    game.observe(player, StepRow(observation, specs, masks, 0));
  }
  float at(int i) const { return observation.data<float>()[i]; }
  std::span<const std::uint8_t> mask() const { return {masks[0].data<std::uint8_t>(), 3}; }
  std::vector<StepFieldSpec> specs;
  Tensor observation;
  std::vector<Tensor> masks;
};

PlayersStepResult both(Standoff& game, std::int32_t a, std::int32_t b) {
  const std::array<std::int32_t, 2> moves{a, b};
  return game.step(moves);
}

// The careful player (test/support/board_players.hpp).
std::int32_t careful(const View& v) {
  return test::careful_standoff_player(
      {v.observation.data<float>(), static_cast<std::size_t>(v.observation.numel())});
}

}  // namespace

TEST_CASE("Standoff: a shot hits a reload, meets a block, passes a shot; bullets and masks") {
  Standoff game;
  CHECK(game.players() == 2);
  CHECK(game.observation_spec() == TensorSpec{{9}, DType::f32});
  View v(game);
  v.look(game, 0);
  CHECK(std::vector<std::uint8_t>(v.mask().begin(), v.mask().end()) ==
        std::vector<std::uint8_t>{1, 1, 0});  // no bullet: no shot
  CHECK(game.acts(0));
  CHECK(game.acts(1));  // both move at every step
  CHECK_FALSE(both(game, R, R).episode_over());
  CHECK(game.bullets(0) == 1);
  PlayersStepResult r = both(game, S, B);  // blocked: the bullet is gone
  CHECK_FALSE(r.episode_over());
  CHECK(game.bullets(0) == 0);
  CHECK(game.bullets(1) == 1);
  both(game, R, R);
  r = both(game, S, S);  // shots pass each other
  CHECK_FALSE(r.episode_over());
  CHECK(game.bullets(0) == 0);
  CHECK(game.bullets(1) == 1);
  r = both(game, R, S);  // player 1 shoots player 0 reloading
  CHECK(r.terminated);
  CHECK(game.winner() == 1);
  CHECK(r.rewards[1] == 1.0f);
  CHECK(r.rewards[0] == -1.0f);
  CHECK_FALSE(game.acts(0));
  CHECK_THROWS_WITH_AS(both(game, B, B), doctest::Contains("after the game ended"), Error);

  game.reset();
  for (int i = 0; i < 3; ++i) both(game, R, B);
  v.look(game, 0);
  CHECK(v.mask()[R] == 0);  // a full gun
  CHECK(v.mask()[S] == 1);
  // Each side's view: its own bullets first, the last moves one-hot.
  CHECK(v.at(0) == 1.0f);
  CHECK(v.at(1) == 0.0f);
  CHECK(v.at(2) == doctest::Approx(27.0 / 30.0));
  CHECK(v.at(3 + R) == 1.0f);
  CHECK(v.at(6 + B) == 1.0f);
  v.look(game, 1);
  CHECK(v.at(0) == 0.0f);
  CHECK(v.at(1) == 1.0f);
  CHECK(v.at(3 + B) == 1.0f);
  CHECK(v.at(6 + R) == 1.0f);
}

TEST_CASE("Standoff: a draw at the step limit; moves the mask forbids lose") {
  Standoff game({3, 5});
  PlayersStepResult r;
  for (int i = 0; i < 5; ++i) r = both(game, B, B);
  CHECK(r.truncated);
  CHECK_FALSE(r.terminated);
  CHECK(game.winner() == -1);
  CHECK(r.rewards[0] == 0.0f);
  game.reset();
  r = both(game, S, B);  // player 0 shoots with no bullet
  CHECK(r.terminated);
  CHECK(game.winner() == 1);
  game.reset();
  r = both(game, S, S);  // both: a draw
  CHECK(game.winner() == -1);
  CHECK(r.terminated);
  CHECK(game.illegal_moves() == 3);
  CHECK_THROWS_WITH_AS(Standoff({0, 5}), doctest::Contains("max_bullets"), Error);
}

TEST_CASE("Standoff: the careful player never loses, beats random play, and draws itself") {
  Standoff game;
  View v0(game), v1(game);
  Rng rng(3);
  using Player = std::function<std::int32_t(const View&)>;
  const Player random = [&rng](const View& v) { return test::random_player(v.mask(), rng); };
  auto play = [&](const Player& first, const Player& second) {
    game.reset();
    while (!game.over()) {
      v0.look(game, 0);
      v1.look(game, 1);
      both(game, first(v0), second(v1));
    }
    return game.winner();
  };
  int wins = 0;
  for (int g = 0; g < 200; ++g) {
    const int w = play(careful, random);
    CHECK(w != 1);
    wins += w == 0;
  }
  CHECK(wins > 150);  // random play reloads into a loaded gun sooner or later
  CHECK(play(careful, careful) == -1);
  CHECK(game.steps() == 30);
  CHECK(game.illegal_moves() == 0);
}

TEST_CASE("Standoff: the careful player with random tie-breaks still never loses, and varies") {
  Standoff game;
  View v0(game), v1(game);
  Rng rng(4), ties(5);
  using Player = std::function<std::int32_t(const View&)>;
  const Player random = [&rng](const View& v) { return test::random_player(v.mask(), rng); };
  const Player varied = [&ties](const View& v) {
    return test::careful_standoff_player(
        {v.observation.data<float>(), static_cast<std::size_t>(v.observation.numel())}, &ties);
  };
  // The joint moves of a game, to count distinct games.
  auto play = [&](const Player& first, const Player& second, std::string* moves) {
    game.reset();
    while (!game.over()) {
      v0.look(game, 0);
      v1.look(game, 1);
      const std::int32_t a = first(v0), b = second(v1);
      if (moves != nullptr) *moves += static_cast<char>('0' + a * 3 + b);
      both(game, a, b);
    }
    return game.winner();
  };
  for (int g = 0; g < 200; ++g) {
    CHECK(play(varied, random, nullptr) != 1);
    CHECK(play(random, varied, nullptr) != 0);
  }
  // Two careful players still draw, and in one way: both load once, then block for ever (the ties
  // come only while the other is empty).
  std::set<std::string> games;
  for (int g = 0; g < 20; ++g) {
    std::string moves;
    CHECK(play(varied, careful, &moves) == -1);
    games.insert(moves);
  }
  CHECK(games.size() == 1);
  // Against a deterministic player that leaves its gun empty (it shoots whenever it is loaded,
  // else reloads) it meets every game its ties allow (it shoots the reloading player at the first,
  // second or third chance: with a full gun it must), and wins them all.
  const Player loader = [](const View& v) {
    const std::span<const float> o(v.observation.data<float>(),
                                   static_cast<std::size_t>(v.observation.numel()));
    return o[0] > 0.0f ? std::int32_t{2} : std::int32_t{0};
  };
  games.clear();
  for (int g = 0; g < 40; ++g) {
    std::string moves;
    CHECK(play(varied, loader, &moves) == 0);
    games.insert(moves);
  }
  CHECK(games.size() == 3);
  CHECK(game.illegal_moves() == 0);
}

}  // namespace test_standoff
