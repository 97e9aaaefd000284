// AtariPipeline<Env>: the standard preprocessing of Atari-like pixel environments, around any
// Environment whose observation is one raw frame, [H, W, 3] RGB or [H, W, 1] / [H, W] gray, u8.
//
//   agent action ──▶ repeat for frame_skip raw frames (each raw frame: with probability
//                    sticky_action_probability the previous raw action is played instead)
//                    rewards summed, then clipped to [-1, 1] when clip_rewards
//   raw frames   ──▶ grayscale (ITU-R BT.601 luma) ──▶ max of the last two frames of the skip
//                    (Atari sprites flicker) ──▶ resize to 84 x 84 by area averaging
//                    ──▶ stack of the last frame_stack frames, [frame_stack, 84, 84] u8 (oldest
//                    first: the Nature torso's input); frames before an episode's start are zeros
//   reset        ──▶ inner reset, then 0..noop_max no-op actions (action 0), drawn uniformly
//   episode end  ──▶ the inner episode's end; truncated after max_episode_frames raw frames; with
//                    terminal_on_life_loss a lost life ends the agent's episode as terminated,
//                    and the next reset() continues the same game (one no-op step) instead of
//                    resetting it
//
// Two named profiles: "dqn" (Mnih et al. 2015: life loss is terminal, rewards clipped, no
// sticky actions, up to 30 no-ops) and "machado" (Machado et al. 2018: sticky actions 0.25, no
// life-loss signal, no no-ops, rewards as the game gives them: clip in the agent with
// max_abs_reward so returns in the metrics stay true). Both cap episodes at 108,000 raw frames
// (30 minutes at 60 Hz). describe() lists the active settings for the run's metrics
// (TrainingSessionOptions::run_info).
//
// Life loss needs `int lives() const` on the environment; a profile asking for it on an
// environment without it is refused at construction.
#pragma once

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "seedrl/core/error.hpp"
#include "seedrl/core/random.hpp"
#include "seedrl/env/environment.hpp"

namespace seedrl {

struct AtariPipelineOptions {
  std::string profile = "custom";  ///< the name describe() reports
  std::int32_t frame_skip = 4;
  std::int32_t frame_stack = 4;
  std::int32_t output_height = 84, output_width = 84;
  double sticky_action_probability = 0.0;
  std::int32_t noop_max = 30;
  bool terminal_on_life_loss = false;
  bool clip_rewards = false;
  std::int64_t max_episode_frames = 108'000;  ///< raw frames; 0: no cap
  std::uint64_t seed = 0;                     ///< sticky actions and no-op counts

  /// Mnih et al. 2015.
  static AtariPipelineOptions dqn() {
    AtariPipelineOptions o;
    o.profile = "dqn";
    o.terminal_on_life_loss = true;
    o.clip_rewards = true;
    o.sticky_action_probability = 0.0;
    o.noop_max = 30;
    return o;
  }
  /// Machado et al. 2018 ("Revisiting the ALE").
  static AtariPipelineOptions machado() {
    AtariPipelineOptions o;
    o.profile = "machado";
    o.terminal_on_life_loss = false;
    o.clip_rewards = false;
    o.sticky_action_probability = 0.25;
    o.noop_max = 0;
    return o;
  }
  /// "dqn" or "machado".
  static AtariPipelineOptions named(const std::string& name) {
    if (name == "dqn") return dqn();
    SEEDRL_REQUIRE(name == "machado", "unknown Atari profile '", name, "' (dqn or machado)");
    return machado();
  }

  void validate(std::string_view owner = "AtariPipelineOptions") const {
    SEEDRL_REQUIRE(frame_skip >= 1, owner, ".frame_skip must be >= 1, got ", frame_skip);
    SEEDRL_REQUIRE(frame_stack >= 1, owner, ".frame_stack must be >= 1, got ", frame_stack);
    SEEDRL_REQUIRE(output_height >= 1 && output_width >= 1, owner,
                   ": output size must be positive, got ", output_height, "x", output_width);
    SEEDRL_REQUIRE(sticky_action_probability >= 0.0 && sticky_action_probability < 1.0, owner,
                   ".sticky_action_probability must be in [0, 1), got ", sticky_action_probability);
    SEEDRL_REQUIRE(noop_max >= 0, owner, ".noop_max must be >= 0, got ", noop_max);
    SEEDRL_REQUIRE(max_episode_frames >= 0, owner, ".max_episode_frames must be >= 0, got ",
                   max_episode_frames);
  }

  /// The settings as (name, value) text, prefixed "atari_".
  std::vector<std::pair<std::string, std::string>> describe() const {
    auto b = [](bool v) { return std::string(v ? "true" : "false"); };
    return {{"atari_profile", profile},
            {"atari_frame_skip", std::to_string(frame_skip)},
            {"atari_frame_stack", std::to_string(frame_stack)},
            {"atari_output", std::to_string(output_height) + "x" + std::to_string(output_width)},
            {"atari_sticky_action_probability", std::to_string(sticky_action_probability)},
            {"atari_noop_max", std::to_string(noop_max)},
            {"atari_terminal_on_life_loss", b(terminal_on_life_loss)},
            {"atari_clip_rewards", b(clip_rewards)},
            {"atari_max_episode_frames", std::to_string(max_episode_frames)}};
  }
};

namespace detail {

/// Area-averaging weights of a 1-D resize from `in` to `out` samples: output i covers the source
/// interval [i s, (i + 1) s) with s = in / out; each source sample weighs its overlap / s.
struct AreaWeights {
  std::vector<std::int32_t> first;   ///< per output: first source index
  std::vector<std::int32_t> count;   ///< per output: number of source indices
  std::vector<float> weights;        ///< concatenated, count[i] per output
  std::vector<std::size_t> offsets;  ///< per output: start in `weights`

  AreaWeights(std::int64_t in, std::int64_t out) {
    const double scale = static_cast<double>(in) / static_cast<double>(out);
    for (std::int64_t i = 0; i < out; ++i) {
      const double lo = static_cast<double>(i) * scale, hi = static_cast<double>(i + 1) * scale;
      const auto begin = static_cast<std::int64_t>(std::floor(lo));
      const auto end = std::min<std::int64_t>(in, static_cast<std::int64_t>(std::ceil(hi)));
      first.push_back(static_cast<std::int32_t>(begin));
      count.push_back(static_cast<std::int32_t>(end - begin));
      offsets.push_back(weights.size());
      for (std::int64_t j = begin; j < end; ++j) {
        const double overlap =
            std::min(hi, static_cast<double>(j + 1)) - std::max(lo, static_cast<double>(j));
        weights.push_back(static_cast<float>(overlap / scale));
      }
    }
  }
};

}  // namespace detail

template <Environment Env>
class AtariPipeline {
  // The pipeline plays several raw frames per step into buffers of its own; which frame's
  // declared fields a step should carry (the last? pooled?) is not decided yet.
  static_assert(!FieldEnvironment<Env>,
                "AtariPipeline: environments that declare step fields are not supported yet");

 public:
  static constexpr bool kHasLives = requires(const Env& e) {
    { e.lives() } -> std::convertible_to<int>;
  };

  AtariPipeline(Env env, const AtariPipelineOptions& options)
      : env_(std::move(env)),
        options_((options.validate(), options)),
        raw_spec_(env_.observation_spec()),
        rng_(options.seed),
        rows_(raw_height(), options.output_height),
        cols_(raw_width(), options.output_width) {
    SEEDRL_REQUIRE(
        raw_spec_.dtype == DType::u8 &&
            (raw_spec_.shape.rank() == 2 ||
             (raw_spec_.shape.rank() == 3 && (raw_spec_.shape[2] == 1 || raw_spec_.shape[2] == 3))),
        "AtariPipeline: the environment's frames must be u8 [H, W, 3], [H, W, 1] or "
        "[H, W], got ",
        raw_spec_.to_string());
    SEEDRL_REQUIRE(!options_.terminal_on_life_loss || kHasLives, "AtariPipeline (profile '",
                   options_.profile,
                   "'): terminal_on_life_loss needs the environment to report `int lives() const`");
    raw_ = Tensor::empty(raw_spec_.shape, DType::u8);
    const std::size_t pixels = static_cast<std::size_t>(raw_height() * raw_width());
    gray_[0].assign(pixels, 0);
    gray_[1].assign(pixels, 0);
    pooled_.assign(pixels, 0);
    column_pass_.assign(static_cast<std::size_t>(raw_height() * options_.output_width), 0.0f);
  }

  TensorSpec observation_spec() const {
    return {{options_.frame_stack, options_.output_height, options_.output_width}, DType::u8};
  }
  ActionSpec action_spec() const { return env_.action_spec(); }
  const AtariPipelineOptions& options() const { return options_; }
  Env& environment() { return env_; }
  const Env& environment() const { return env_; }
  /// Raw frames played in the current game (no-ops included).
  std::int64_t episode_frames() const { return episode_frames_; }
  /// No-op actions played at the last real reset.
  std::int32_t last_noops() const { return last_noops_; }

  void reset(const Tensor& observation) {
    require_observation(observation, observation_spec(), "AtariPipeline");
    observation.fill_zero();  // frames before the episode's start are zeros
    if (life_lost_ && !game_over_) {
      // The game goes on after a lost life: one no-op step shows the next frame.
      life_lost_ = false;
      play(0, observation, false);
      life_lost_ = false;  // a second life lost on that very frame is not signalled again
      if (!game_over_) return;
      observation.fill_zero();  // that no-op ended the game: start a new one below
    }
    start_game(observation);
  }

  StepResult step(std::int32_t action, const Tensor& observation) {
    require_observation(observation, observation_spec(), "AtariPipeline");
    SEEDRL_REQUIRE(!game_over_ && !life_lost_,
                   "AtariPipeline: step after the episode ended; "
                   "call reset()");
    return play(action, observation, true);
  }

 private:
  std::int64_t raw_height() const { return raw_spec_.shape[0]; }
  std::int64_t raw_width() const { return raw_spec_.shape[1]; }

  void start_game(const Tensor& observation) {
    for (int attempt = 0;; ++attempt) {
      SEEDRL_REQUIRE(attempt < 100, "AtariPipeline: 100 resets in a row ended during no-ops");
      env_.reset(raw_);
      game_over_ = false;
      life_lost_ = false;
      episode_frames_ = 0;
      last_action_ = 0;
      if constexpr (kHasLives) lives_ = env_.lives();
      latest_ = 0;
      to_gray(gray_[0]);
      gray_[1] = gray_[0];
      last_noops_ = options_.noop_max > 0 ? static_cast<std::int32_t>(rng_.below(
                                                static_cast<std::uint64_t>(options_.noop_max) + 1))
                                          : 0;
      bool ended = false;
      for (std::int32_t i = 0; i < last_noops_ && !ended; ++i) ended = raw_step(0).episode_over();
      if (ended) continue;
      write_newest(observation, gray_[latest_]);
      return;
    }
  }

  // One raw frame: sticky actions, the inner step, grayscale into the next buffer.
  StepResult raw_step(std::int32_t action) {
    if (options_.sticky_action_probability > 0.0 &&
        rng_.uniform() < options_.sticky_action_probability)
      action = last_action_;
    last_action_ = action;
    const StepResult r = env_.step(action, raw_);
    ++episode_frames_;
    latest_ ^= 1;
    to_gray(gray_[latest_]);
    return r;
  }

  // An agent step: frame_skip raw frames, max-pool, resize, stack; the episode signals.
  StepResult play(std::int32_t action, const Tensor& observation, bool shift) {
    StepResult result;
    double reward = 0.0;
    std::int32_t frames = 0;
    for (; frames < options_.frame_skip; ++frames) {
      const StepResult r = raw_step(action);
      reward += r.reward;
      if (r.episode_over()) {
        result.terminated = r.terminated;
        result.truncated = r.truncated && !r.terminated;
        game_over_ = true;
        ++frames;
        break;
      }
      if (options_.max_episode_frames > 0 && episode_frames_ >= options_.max_episode_frames) {
        result.truncated = true;
        game_over_ = true;
        ++frames;
        break;
      }
    }
    // Max of the last two raw frames (just the one when only one was played).
    const std::vector<std::uint8_t>& last = gray_[latest_];
    const std::vector<std::uint8_t>& before = gray_[latest_ ^ 1];
    if (frames >= 2) {
      for (std::size_t i = 0; i < pooled_.size(); ++i) pooled_[i] = std::max(last[i], before[i]);
    } else {
      pooled_ = last;
    }
    if (shift) shift_stack(observation);
    write_newest(observation, pooled_);

    if constexpr (kHasLives) {
      const int lives = env_.lives();
      if (options_.terminal_on_life_loss && lives < lives_ && !game_over_) {
        life_lost_ = true;
        result.terminated = true;
      }
      lives_ = lives;
    }
    result.reward = options_.clip_rewards ? static_cast<float>(std::clamp(reward, -1.0, 1.0))
                                          : static_cast<float>(reward);
    return result;
  }

  void shift_stack(const Tensor& observation) const {
    const std::int64_t plane = options_.output_height * options_.output_width;
    std::uint8_t* data = observation.data<std::uint8_t>();
    std::memmove(data, data + plane, static_cast<std::size_t>((options_.frame_stack - 1) * plane));
  }

  // Resizes `frame` by area averaging into the newest plane of the stack.
  void write_newest(const Tensor& observation, const std::vector<std::uint8_t>& frame) {
    const std::int64_t in_w = raw_width(), out_h = options_.output_height,
                       out_w = options_.output_width;
    for (std::int64_t r = 0; r < raw_height(); ++r) {  // columns first: [H, out_w]
      const std::uint8_t* src = frame.data() + r * in_w;
      float* dst = column_pass_.data() + r * out_w;
      for (std::int64_t j = 0; j < out_w; ++j) {
        const auto ju = static_cast<std::size_t>(j);
        const float* w = cols_.weights.data() + cols_.offsets[ju];
        const std::uint8_t* s = src + cols_.first[ju];
        float sum = 0.0f;
        for (std::int32_t k = 0; k < cols_.count[ju]; ++k) sum += w[k] * static_cast<float>(s[k]);
        dst[j] = sum;
      }
    }
    std::uint8_t* out =
        observation.data<std::uint8_t>() + (options_.frame_stack - 1) * out_h * out_w;
    for (std::int64_t i = 0; i < out_h; ++i) {  // then rows
      const auto iu = static_cast<std::size_t>(i);
      const float* w = rows_.weights.data() + rows_.offsets[iu];
      for (std::int64_t j = 0; j < out_w; ++j) {
        float sum = 0.0f;
        for (std::int32_t k = 0; k < rows_.count[iu]; ++k)
          sum += w[k] * column_pass_[static_cast<std::size_t>((rows_.first[iu] + k) * out_w + j)];
        out[i * out_w + j] = static_cast<std::uint8_t>(std::clamp(std::lround(sum), 0L, 255L));
      }
    }
  }

  // ITU-R BT.601 luma of the raw frame, rounded.
  void to_gray(std::vector<std::uint8_t>& gray) const {
    const std::uint8_t* src = raw_.data<std::uint8_t>();
    const std::size_t pixels = gray.size();
    if (raw_spec_.shape.rank() == 2 || raw_spec_.shape[2] == 1) {
      std::copy(src, src + pixels, gray.begin());
      return;
    }
    for (std::size_t i = 0; i < pixels; ++i) {
      const float y = 0.299f * src[3 * i] + 0.587f * src[3 * i + 1] + 0.114f * src[3 * i + 2];
      gray[i] = static_cast<std::uint8_t>(std::min(255.0f, y + 0.5f));
    }
  }

  Env env_;
  AtariPipelineOptions options_;
  TensorSpec raw_spec_;
  Rng rng_;
  detail::AreaWeights rows_, cols_;
  Tensor raw_;
  std::vector<std::uint8_t> gray_[2], pooled_;
  std::vector<float> column_pass_;
  int latest_ = 0;  // which gray_ buffer holds the newest raw frame
  std::int32_t last_action_ = 0, last_noops_ = 0;
  std::int64_t episode_frames_ = 0;
  int lives_ = 0;
  bool game_over_ = true, life_lost_ = false;
};

}  // namespace seedrl
