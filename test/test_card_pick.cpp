// CardPick (env/card_pick.hpp), the game whose legal actions change every step: the deal, the
// observation planes and the action mask after every pick, the rewards, the illegal pick that
// ends an episode, the best return, and that picks drawn among the masked actions are never
// illegal while picks drawn among all actions are (what a mask-using agent must avoid).
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "seedrl/core/error.hpp"
#include "seedrl/core/random.hpp"
#include "seedrl/env/card_pick.hpp"
#include "seedrl/math/masked_categorical.hpp"

namespace test_card_pick {

using namespace seedrl;

namespace {

// One environment's step buffers, as an actor keeps them.
struct Buffers {
  explicit Buffers(const CardPick& game)
      : specs(game.step_fields()),
        observation(Tensor::zeros(game.observation_spec().shape, DType::f32)),
        masks{Tensor::zeros({1, game.action_spec().num_actions}, DType::u8)} {}
  StepRow row() const { return StepRow(observation, specs, masks, 0); }
  std::vector<std::uint8_t> mask() const {
    const std::uint8_t* m = masks[0].data<std::uint8_t>();
    return {m, m + masks[0].numel()};
  }
  float value_plane(int i) const { return observation.data<float>()[i]; }
  float taken_plane(int i) const { return observation.data<float>()[8 + i]; }

  std::vector<StepFieldSpec> specs;
  Tensor observation;
  std::vector<Tensor> masks;
};

}  // namespace

TEST_CASE("CardPick: the deal, the planes and the mask after each pick, and the rewards") {
  CardPick game(3);
  Buffers b(game);
  CHECK(game.step_fields() == std::vector<StepFieldSpec>{{"action_mask", {{8}, DType::u8}}});
  game.reset(b.row());
  const std::vector<std::int32_t> values = game.values();
  REQUIRE(values.size() == 8);
  for (int i = 0; i < 8; ++i) {
    CHECK(values[static_cast<std::size_t>(i)] >= 1);
    CHECK(values[static_cast<std::size_t>(i)] <= 9);
    CHECK(b.value_plane(i) == doctest::Approx(values[static_cast<std::size_t>(i)] / 9.0));
    CHECK(b.taken_plane(i) == 0.0f);
  }
  CHECK(b.mask() == std::vector<std::uint8_t>(8, 1));
  CardPick same(3);
  Buffers b2(same);
  same.reset(b2.row());
  CHECK(same.values() == values);  // the seed decides the deal

  float total = 0.0f;
  for (const std::int32_t card : {5, 0, 7}) {
    const StepResult r = game.step(card, b.row());
    CHECK(r.reward == doctest::Approx(values[static_cast<std::size_t>(card)] / 9.0));
    CHECK_FALSE(r.terminated);
    CHECK(b.mask()[static_cast<std::size_t>(card)] == 0);
    CHECK(b.value_plane(card) == 0.0f);
    CHECK(b.taken_plane(card) == 1.0f);
    total += r.reward;
  }
  CHECK(b.mask() == std::vector<std::uint8_t>{0, 1, 1, 1, 1, 0, 1, 0});
  const StepResult last = game.step(2, b.row());
  CHECK(last.terminated);  // the fourth pick ends it
  CHECK(total + last.reward ==
        doctest::Approx((values[5] + values[0] + values[7] + values[2]) / 9.0));
  CHECK_THROWS_WITH_AS(game.step(1, b.row()), doctest::Contains("step after the episode ended"),
                       Error);

  // An illegal pick scores -1 and ends the episode.
  game.reset(b.row());
  REQUIRE_FALSE(game.step(4, b.row()).terminated);
  const StepResult illegal = game.step(4, b.row());
  CHECK(illegal.reward == -1.0f);
  CHECK(illegal.terminated);
  CHECK(game.illegal_picks() == 1);
  CHECK_THROWS_WITH_AS(game.step(8, b.row()), doctest::Contains("action 8 out of range [0, 8)"),
                       Error);
  CHECK_THROWS_WITH_AS(CardPick(1, {.cards = 4, .picks = 5}),
                       doctest::Contains("CardPickOptions.picks must be in [1, cards = 4], got 5"),
                       Error);
}

TEST_CASE("CardPick: the best return by value; masked picks are never illegal, unmasked ones are") {
  CardPick game(11);
  Buffers b(game);
  Rng rng(12);
  const math::Branches one({8});
  const RowMatrixXf uniform = RowMatrixXf::Zero(1, 8);
  std::vector<std::int32_t> action(1);
  int masked_illegal = 0, unmasked_illegal = 0;
  for (int episode = 0; episode < 200; ++episode) {
    // Greedy by value (the observation's plane 0, taken cards at 0): the best return.
    game.reset(b.row());
    float greedy_return = 0.0f;
    for (bool over = false; !over;) {
      int best = 0;
      for (int i = 1; i < 8; ++i)
        if (b.value_plane(i) > b.value_plane(best)) best = i;
      const StepResult r = game.step(best, b.row());
      greedy_return += r.reward;
      over = r.terminated;
    }
    CHECK(greedy_return == doctest::Approx(game.best_return()));
    // Uniformly random among the legal cards (the mask): never illegal.
    game.reset(b.row());
    for (bool over = false; !over;) {
      const std::vector<std::uint8_t> mask = b.mask();
      math::masked_sample(uniform, mask, one, {}, action, rng);
      const StepResult r = game.step(action[0], b.row());
      masked_illegal += r.reward < 0.0f;
      over = r.terminated;
    }
    // Uniformly random among all cards: illegal picks happen.
    game.reset(b.row());
    for (bool over = false; !over;) {
      math::masked_sample(uniform, {}, one, {}, action, rng);
      const StepResult r = game.step(action[0], b.row());
      unmasked_illegal += r.reward < 0.0f;
      over = r.terminated;
    }
  }
  CHECK(masked_illegal == 0);
  // 1 - (8 * 7 * 6 * 5 / 8^4 ... ): about 59% of random episodes pick a gone card.
  CHECK(unmasked_illegal > 80);
  CHECK(game.illegal_picks() == unmasked_illegal);
}

}  // namespace test_card_pick
