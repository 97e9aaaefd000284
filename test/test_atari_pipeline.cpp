// AtariPipeline on a synthetic pixel environment: frame skip with max-pooling, grayscale and
// area resizing against a naive reference, stacking with zeros at episode starts, reward sums and
// clipping, sticky actions, no-op starts, life loss, the frame cap, the profiles and their errors.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "seedrl/env/atari_pipeline.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_atari_pipeline {

using namespace seedrl;

namespace {

constexpr std::int64_t kHeight = 210, kWidth = 160;

// Every raw frame k of a game is a different pseudo-random RGB image; it records the actions it
// played, gives reward (k % 3 == 0 ? 2.5 : -0.5) on frame k, loses a life every 50 frames and
// ends (terminated) when the last of its 3 lives is lost.
struct ToyPixels {
  std::int64_t frame = 0;
  int lives_left = 3;
  int resets = 0;
  std::vector<std::int32_t> actions;
  std::uint64_t salt = 0;

  TensorSpec observation_spec() const { return {{kHeight, kWidth, 3}, DType::u8}; }
  ActionSpec action_spec() const { return {4}; }
  int lives() const { return lives_left; }

  static std::uint8_t pixel(std::uint64_t salt, std::int64_t k, std::int64_t i) {
    std::uint64_t x = salt * 0x9E3779B97F4A7C15ULL + static_cast<std::uint64_t>(k) * 1000003ULL +
                      static_cast<std::uint64_t>(i);
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ULL;
    x ^= x >> 29;
    return static_cast<std::uint8_t>(x & 0xFF);
  }
  void render(const Tensor& obs) const {
    std::uint8_t* p = obs.data<std::uint8_t>();
    for (std::int64_t i = 0; i < kHeight * kWidth * 3; ++i) p[i] = pixel(salt, frame, i);
  }
  void reset(const Tensor& obs) {
    ++resets;
    frame = 0;
    lives_left = 3;
    render(obs);
  }
  StepResult step(std::int32_t action, const Tensor& obs) {
    actions.push_back(action);
    ++frame;
    if (frame % 50 == 0) --lives_left;
    render(obs);
    StepResult r;
    r.reward = frame % 3 == 0 ? 2.5f : -0.5f;
    r.terminated = lives_left == 0;
    return r;
  }
};
static_assert(Environment<ToyPixels>);
static_assert(AtariPipeline<ToyPixels>::kHasLives);

// The same without lives.
struct NoLives {
  ToyPixels toy;
  TensorSpec observation_spec() const { return toy.observation_spec(); }
  ActionSpec action_spec() const { return toy.action_spec(); }
  void reset(const Tensor& obs) { toy.reset(obs); }
  StepResult step(std::int32_t a, const Tensor& obs) { return toy.step(a, obs); }
};

AtariPipelineOptions plain() {
  AtariPipelineOptions o;
  o.noop_max = 0;
  o.max_episode_frames = 0;
  return o;
}

// Naive reference of one processed frame: luma of frames k and k - 1 in double, max, then each
// output pixel the exact area integral over the source. The pipeline rounds once, in float: a
// pixel may differ from this by up to 0.5 plus float error (0.75 allowed).
std::vector<double> reference_frame(std::uint64_t salt, std::int64_t k) {
  auto gray = [&](std::int64_t frame, std::int64_t r, std::int64_t c) {
    const std::int64_t i = (r * kWidth + c) * 3;
    const double y = 0.299 * ToyPixels::pixel(salt, frame, i) +
                     0.587 * ToyPixels::pixel(salt, frame, i + 1) +
                     0.114 * ToyPixels::pixel(salt, frame, i + 2);
    return std::floor(y + 0.5);
  };
  std::vector<double> out(84 * 84);
  const double sy = static_cast<double>(kHeight) / 84, sx = static_cast<double>(kWidth) / 84;
  for (int i = 0; i < 84; ++i)
    for (int j = 0; j < 84; ++j) {
      double total = 0.0;
      for (std::int64_t r = 0; r < kHeight; ++r) {
        const double oy = std::min(r + 1.0, (i + 1) * sy) - std::max<double>(r, i * sy);
        if (oy <= 0) continue;
        for (std::int64_t c = 0; c < kWidth; ++c) {
          const double ox = std::min(c + 1.0, (j + 1) * sx) - std::max<double>(c, j * sx);
          if (ox <= 0) continue;
          total += oy * ox * std::max(gray(k, r, c), k > 0 ? gray(k - 1, r, c) : 0.0);
        }
      }
      out[static_cast<std::size_t>(i * 84 + j)] = total / (sy * sx);
    }
  return out;
}

}  // namespace

TEST_CASE("AtariPipeline: skip 4, max of the last two frames, grayscale, 84x84 area resize") {
  ToyPixels toy;
  toy.salt = 7;
  AtariPipeline<ToyPixels> env(toy, plain());
  CHECK(env.observation_spec().shape == Shape{4, 84, 84});
  Tensor obs = Tensor::empty({4, 84, 84}, DType::u8);
  env.reset(obs);
  const StepResult r = env.step(2, obs);
  CHECK(env.environment().actions == std::vector<std::int32_t>{2, 2, 2, 2});
  CHECK(r.reward == doctest::Approx(-0.5 - 0.5 + 2.5 - 0.5));  // raw frames 1..4
  const std::vector<double> expected = reference_frame(7, 4);  // max of raw frames 3 and 4
  int off = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const double got = obs[3].data<std::uint8_t>()[i];
    off += std::abs(got - expected[i]) > 0.75;
  }
  CHECK(off == 0);
  // The stack: plane 2 is the reset frame (frame 0, alone), planes 0 and 1 are zeros.
  const std::vector<double> first = reference_frame(7, 0);
  int off_first = 0;
  for (std::size_t i = 0; i < first.size(); ++i)
    off_first += std::abs(obs[2].data<std::uint8_t>()[i] - first[i]) > 0.75;
  CHECK(off_first == 0);
  for (int plane = 0; plane < 2; ++plane)
    for (std::int64_t i = 0; i < 84 * 84; ++i) REQUIRE(obs[plane].data<std::uint8_t>()[i] == 0);

  // Two more steps fill the stack; the oldest plane is then the reset frame.
  for (int s = 0; s < 2; ++s) env.step(1, obs);
  int off_oldest = 0;
  for (std::size_t i = 0; i < first.size(); ++i)
    off_oldest += std::abs(obs[0].data<std::uint8_t>()[i] - first[i]) > 0.75;
  CHECK(off_oldest == 0);
}

TEST_CASE("AtariPipeline: rewards are summed over the skip and clipped when asked") {
  // Frames 1..4 give -0.5, -0.5, 2.5, -0.5: a sum of 1.0; frames 5..8 give -0.5, 2.5, -0.5, -0.5.
  for (const bool clip : {false, true}) {
    AtariPipelineOptions o = plain();
    o.clip_rewards = clip;
    AtariPipeline<ToyPixels> env(ToyPixels{}, o);
    Tensor obs = Tensor::empty({4, 84, 84}, DType::u8);
    env.reset(obs);
    CHECK(env.step(0, obs).reward == doctest::Approx(1.0));
  }
  AtariPipelineOptions o = plain();
  o.frame_skip = 3;  // frames 1..3: -0.5 -0.5 2.5 = 1.5, clipped to 1
  o.clip_rewards = true;
  AtariPipeline<ToyPixels> clipped(ToyPixels{}, o);
  o.clip_rewards = false;
  AtariPipeline<ToyPixels> raw(ToyPixels{}, o);
  Tensor obs = Tensor::empty({4, 84, 84}, DType::u8);
  clipped.reset(obs);
  raw.reset(obs);
  CHECK(clipped.step(0, obs).reward == 1.0f);
  CHECK(raw.step(0, obs).reward == doctest::Approx(1.5));
}

TEST_CASE("AtariPipeline: sticky actions repeat the previous raw action with probability p") {
  AtariPipelineOptions o = plain();
  o.sticky_action_probability = 0.25;
  o.seed = 3;
  AtariPipeline<ToyPixels> env(ToyPixels{}, o);
  Tensor obs = Tensor::empty({4, 84, 84}, DType::u8);
  env.reset(obs);
  int steps = 0, first_frame_stuck = 0;
  std::vector<std::int32_t> requested;
  while (steps < 4000) {
    const std::int32_t a = steps % 2 == 0 ? 1 : 2;  // always differs from the previous step's
    const std::size_t before = env.environment().actions.size();
    const StepResult r = env.step(a, obs);
    if (env.environment().actions.size() - before == 4) {
      first_frame_stuck += env.environment().actions[before] != a;
      ++steps;
    }
    if (r.episode_over()) env.reset(obs);
  }
  CHECK(first_frame_stuck / 4000.0 == doctest::Approx(0.25).epsilon(0.1));

  AtariPipeline<ToyPixels> plain_env(ToyPixels{}, plain());
  plain_env.reset(obs);
  for (int s = 0; s < 10; ++s) plain_env.step(s % 4, obs);
  for (std::size_t i = 0; i < 40; ++i)
    CHECK(plain_env.environment().actions[i] == static_cast<std::int32_t>(i / 4 % 4));
}

TEST_CASE("AtariPipeline: 0..noop_max no-op actions after each reset") {
  AtariPipelineOptions o = plain();
  o.noop_max = 30;
  o.seed = 5;
  AtariPipeline<NoLives> env(NoLives{}, o);
  Tensor obs = Tensor::empty({4, 84, 84}, DType::u8);
  std::vector<int> seen(31, 0);
  double mean = 0.0;
  for (int i = 0; i < 600; ++i) {
    env.environment().toy.actions.clear();
    env.reset(obs);
    const auto& played = env.environment().toy.actions;
    REQUIRE(static_cast<int>(played.size()) == env.last_noops());
    for (std::int32_t a : played) REQUIRE(a == 0);
    REQUIRE(env.last_noops() <= 30);
    ++seen[static_cast<std::size_t>(env.last_noops())];
    mean += env.last_noops() / 600.0;
    CHECK(env.episode_frames() == env.last_noops());
  }
  CHECK(mean == doctest::Approx(15.0).epsilon(0.1));
  CHECK(seen[0] > 0);
  CHECK(seen[30] > 0);
}

TEST_CASE("AtariPipeline: a lost life ends the agent's episode, the game goes on (dqn)") {
  AtariPipelineOptions o = AtariPipelineOptions::dqn();
  o.noop_max = 0;
  AtariPipeline<ToyPixels> env(ToyPixels{}, o);
  Tensor obs = Tensor::empty({4, 84, 84}, DType::u8);
  env.reset(obs);
  CHECK(env.environment().resets == 1);
  int steps = 0;
  StepResult r;
  do {
    r = env.step(1, obs);
    ++steps;
  } while (!r.episode_over());
  CHECK(r.terminated);
  CHECK(steps == 13);  // the life is lost on raw frame 50, in the 13th step of 4 frames
  CHECK(env.environment().lives_left == 2);
  CHECK_THROWS_WITH_AS(env.step(1, obs), doctest::Contains("call reset()"), Error);

  env.reset(obs);  // continues: one no-op, not a new game
  CHECK(env.environment().resets == 1);
  CHECK(env.environment().frame == 52 + 4);
  for (int plane = 0; plane < 3; ++plane)
    for (std::int64_t i = 0; i < 84 * 84; ++i) REQUIRE(obs[plane].data<std::uint8_t>()[i] == 0);
  // Two more lives, then the real end starts a new game.
  int ends = 0;
  while (env.environment().resets == 1) {
    if (env.step(2, obs).episode_over()) {
      ++ends;
      env.reset(obs);
    }
  }
  CHECK(ends == 2);
  CHECK(env.environment().lives_left == 3);

  // machado: a lost life is no episode end.
  AtariPipeline<ToyPixels> machado(ToyPixels{}, AtariPipelineOptions::machado());
  machado.reset(obs);
  int machado_steps = 0;
  while (!machado.step(0, obs).episode_over()) ++machado_steps;
  CHECK(machado_steps + 1 == 38);  // 150 raw frames: the third life ends the game in step 38
  CHECK(machado.environment().lives_left == 0);
}

TEST_CASE("AtariPipeline: episodes are truncated at max_episode_frames") {
  AtariPipelineOptions o = plain();
  o.max_episode_frames = 18;
  AtariPipeline<NoLives> env(NoLives{}, o);
  Tensor obs = Tensor::empty({4, 84, 84}, DType::u8);
  env.reset(obs);
  StepResult r;
  int steps = 0;
  do {
    r = env.step(0, obs);
    ++steps;
  } while (!r.episode_over());
  CHECK(steps == 5);  // 4 + 4 + 4 + 4 + 2 raw frames
  CHECK(r.truncated);
  CHECK_FALSE(r.terminated);
  CHECK(env.episode_frames() == 18);
  env.reset(obs);
  CHECK(env.environment().toy.resets == 2);
}

TEST_CASE("AtariPipeline: the named profiles, describe(), and clear errors") {
  const AtariPipelineOptions dqn = AtariPipelineOptions::named("dqn");
  CHECK(dqn.terminal_on_life_loss);
  CHECK(dqn.clip_rewards);
  CHECK(dqn.sticky_action_probability == 0.0);
  CHECK(dqn.noop_max == 30);
  const AtariPipelineOptions machado = AtariPipelineOptions::named("machado");
  CHECK_FALSE(machado.terminal_on_life_loss);
  CHECK(machado.sticky_action_probability == 0.25);
  CHECK(machado.max_episode_frames == 108'000);
  CHECK(machado.describe().front() ==
        std::pair<std::string, std::string>{"atari_profile", "machado"});
  CHECK_THROWS_WITH_AS(AtariPipelineOptions::named("atari"),
                       doctest::Contains("unknown Atari profile 'atari'"), Error);

  CHECK_THROWS_WITH_AS((AtariPipeline<NoLives>(NoLives{}, dqn)), doctest::Contains("lives()"),
                       Error);
  AtariPipelineOptions bad = plain();
  bad.sticky_action_probability = 1.0;
  CHECK_THROWS_WITH_AS((AtariPipeline<ToyPixels>(ToyPixels{}, bad)),
                       doctest::Contains("sticky_action_probability"), Error);
  AtariPipeline<ToyPixels> env(ToyPixels{}, plain());
  Tensor wrong = Tensor::empty({84, 84, 4}, DType::u8);
  CHECK_THROWS_WITH_AS(env.reset(wrong), doctest::Contains("AtariPipeline"), Error);
}

}  // namespace test_atari_pipeline
