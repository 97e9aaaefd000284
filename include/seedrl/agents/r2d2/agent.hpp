// R2D2Agent: recurrent replay distributed DQN (Kapturowski et al. 2019) as SEED RL runs it.
// The agent holds the configuration both sides need; its inference side acts epsilon-greedily on
// the Q-values with a per-slot exploration rate, its learning side is Learner<R2D2Agent, Backend>
// (agents/r2d2/learner.hpp; agents/r2d2.hpp includes both): prioritized replay of burn-in + T
// + 1 step sequences, n-step double-Q targets with value rescaling, a target network copied every K
// steps.
#pragma once

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string_view>

#include "seedrl/agent/acting.hpp"
#include "seedrl/agent/agent.hpp"
#include "seedrl/algo/epsilon_schedule.hpp"
#include "seedrl/algo/sequence_priority.hpp"
#include "seedrl/algo/value_rescale.hpp"
#include "seedrl/core/random.hpp"
#include "seedrl/math/masked_categorical.hpp"
#include "seedrl/nn/network.hpp"
#include "seedrl/replay/replay_buffer.hpp"

namespace seedrl {

/// Defaults follow R2D2 (and seed_rl's r2d2 flags) where they carry over to small problems; the
/// MinAtar example sets its own. AgentOptions' batch_size counts sequences per learner step.
struct R2D2AgentOptions : AgentOptions {
  std::int64_t n_step = 5;
  bool value_rescaling = true;  ///< train on h(y) and bootstrap through h^-1 (eps below)
  double value_rescale_epsilon = kValueRescaleEpsilon;
  std::int64_t target_update_period = 2500;  ///< learner steps between hard target copies

  // Replay.
  std::size_t replay_capacity = 100'000;  ///< sequences
  ReplayOptions replay;                   ///< alpha 0.9, beta 0.6
  double priority_eta = kSequencePriorityEta;
  double replay_ratio = 1.0;  ///< sequences sampled per sequence inserted (learner throttle)
  std::size_t min_replay_size = 5'000;  ///< sequences in the buffer before learning starts
  bool checkpoint_replay = false;       ///< also save the replay contents with each checkpoint
  /// step() leaves insertion (the new sequences' priorities: a forward of both networks over
  /// each) to a thread of its own, which works with copies of the networks taken before each
  /// batch, while the learner's thread trains: insertion then costs the learner nothing. The
  /// replay ratio holds as before (the inserter waits while it is more than two batches ahead).
  /// false: the learner's thread inserts between its steps.
  bool concurrent_insertion = true;
  /// Priorities of new sequences from the Q-values inference acted on (recorded in the
  /// sequences, as Ape-X's and R2D2's actors compute them) instead of a forward of both networks
  /// over each sequence: the acting Q serves as the greedy choice and as the bootstrap value (no
  /// target network), over the trained window. Insertion then costs no network pass; the
  /// priorities come from parameters a few updates old.
  bool actor_priorities = false;

  // Exploration.
  std::int64_t exploration_slots = 64;  ///< N of the epsilon schedule; slot s acts as s mod N
  double epsilon_base = 0.4;
  double epsilon_alpha = 7.0;
  double evaluation_epsilon = 0.001;

  /// Needs network.q_head; recurrent (lstm_size > 0) and dueling in R2D2. Adam with epsilon 1e-3
  /// at 1e-4, discount 0.997 and clipping at 80 (seed_rl's r2d2).
  R2D2AgentOptions() {
    discount = 0.997f;
    optimizer = default_optimizer();
    learning_rate = {1e-4, 0, 0.0};
    max_grad_norm = 80.0;
  }

  static nn::OptimizerOptions default_optimizer() {
    nn::OptimizerOptions o;
    o.kind = nn::OptimizerKind::adam;
    o.adam.epsilon = 1e-3f;
    return o;
  }

  void validate(std::string_view owner = "R2D2AgentOptions") const {
    AgentOptions::validate(owner);
    SEEDRL_REQUIRE(network.q_head, owner, ".network needs q_head");
    SEEDRL_REQUIRE(n_step >= 1, owner, ".n_step must be >= 1, got ", n_step);
    SEEDRL_REQUIRE(value_rescale_epsilon >= 0.0 && std::isfinite(value_rescale_epsilon), owner,
                   ".value_rescale_epsilon must be finite and >= 0, got ", value_rescale_epsilon);
    SEEDRL_REQUIRE(target_update_period >= 1, owner, ".target_update_period must be >= 1, got ",
                   target_update_period);
    SEEDRL_REQUIRE(replay_capacity >= static_cast<std::size_t>(batch_size), owner,
                   ".replay_capacity (", replay_capacity, ") must hold at least batch_size (",
                   batch_size, ") sequences");
    replay.validate(str_cat(owner, ".replay"));
    SEEDRL_REQUIRE(priority_eta >= 0.0 && priority_eta <= 1.0, owner,
                   ".priority_eta must be in [0, 1], got ", priority_eta);
    SEEDRL_REQUIRE(replay_ratio > 0.0 && std::isfinite(replay_ratio), owner,
                   ".replay_ratio must be finite and > 0, got ", replay_ratio);
    SEEDRL_REQUIRE(min_replay_size >= 1 && min_replay_size <= replay_capacity, owner,
                   ".min_replay_size must be in [1, replay_capacity = ", replay_capacity, "], got ",
                   min_replay_size);
    SEEDRL_REQUIRE(exploration_slots >= 1, owner, ".exploration_slots must be >= 1, got ",
                   exploration_slots);
    SEEDRL_REQUIRE(epsilon_base > 0.0 && epsilon_base <= 1.0, owner,
                   ".epsilon_base must be in (0, 1], got ", epsilon_base);
    SEEDRL_REQUIRE(epsilon_alpha >= 0.0 && std::isfinite(epsilon_alpha), owner,
                   ".epsilon_alpha must be finite and >= 0, got ", epsilon_alpha);
    SEEDRL_REQUIRE(evaluation_epsilon >= 0.0 && evaluation_epsilon <= 1.0, owner,
                   ".evaluation_epsilon must be in [0, 1], got ", evaluation_epsilon);
  }
};

class R2D2Agent {
 public:
  static constexpr std::string_view kName = "r2d2";
  /// Q-learning needs no behaviour logits.
  static constexpr bool kStoresLogits = false;

  explicit R2D2Agent(R2D2AgentOptions options) : options_(std::move(options)) {
    options_.validate();
  }

  const R2D2AgentOptions& options() const { return options_; }
  const nn::NetworkOptions& network_config() const { return options_.network; }
  /// With actor_priorities the sequences record the Q-values inference acted on.
  bool records_q_values() const { return options_.actor_priorities; }
  /// Evaluation actors act epsilon-greedily at evaluation_epsilon.
  ActingOptions evaluation_acting() const {
    return {ActionMode::epsilon_greedy, options_.evaluation_epsilon};
  }

  /// The exploration rate of a slot: epsilon_i of the Ape-X schedule for i = slot mod N, or
  /// evaluation_epsilon in evaluation slots.
  double epsilon(std::int32_t slot, bool evaluation) const {
    if (evaluation) return options_.evaluation_epsilon;
    const std::int64_t n = options_.exploration_slots;
    return actor_epsilon(slot % n, n, options_.epsilon_base, options_.epsilon_alpha);
  }

  /// For each frame i of an inference batch (outputs.q [1, N, A]): a uniformly random action
  /// with probability epsilon(slot), else the greedy one (lowest index among ties); with masks,
  /// both among the legal actions only; with action branches (a BDQ head), for every branch (a
  /// random frame takes a random action in each).
  void select_actions(const nn::NetworkOutputs& outputs, std::span<const std::int32_t> slots,
                      std::span<const std::uint8_t> evaluation, std::span<std::int32_t> actions,
                      Rng& rng, const ActingContext& context = {}) const {
    const std::int64_t n = outputs.q.dim(1);
    const auto width = static_cast<std::size_t>(outputs.q.dim(2));
    const float* q = outputs.q.data<float>();
    const bool plain = context.action_mask.empty() && !context.branched();
    const math::Branches branches = plain ? math::Branches() : context.or_one(outputs.q.dim(2));
    const auto per_frame = static_cast<std::size_t>(std::max<std::int64_t>(1, branches.count()));
    for (std::int64_t i = 0; i < n; ++i) {
      const auto k = static_cast<std::size_t>(i);
      const double e = epsilon(slots[k], evaluation[k] != 0);
      if (plain) {
        actions[k] = epsilon_greedy_action(std::span<const float>(q + k * width, width), e, rng);
      } else {
        const Eigen::Map<const RowMatrixXf> row(q + k * width, 1, outputs.q.dim(2));
        math::masked_epsilon_greedy(row,
                                    context.action_mask.empty()
                                        ? context.action_mask
                                        : context.action_mask.subspan(k * width, width),
                                    branches, e, actions.subspan(k * per_frame, per_frame), rng);
      }
    }
  }

 private:
  R2D2AgentOptions options_;
};

static_assert(Agent<R2D2Agent>);

}  // namespace seedrl
