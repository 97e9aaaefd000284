// Small R2D2 agents and random sequences for the R2D2 learner tests (test_r2d2_learner,
// test_r2d2_inserter).
#pragma once

#include <memory>
#include <vector>

#include "seedrl/agents/r2d2.hpp"
#include "seedrl/core/random.hpp"
#include "seedrl/experience/unroll_store.hpp"
#include "seedrl/inference/inference_server.hpp"

namespace seedrl::test {

inline constexpr std::int64_t kActions = 3, kLstm = 6;

inline R2D2AgentOptions tiny_options(std::uint64_t seed = 5) {
  R2D2AgentOptions o;
  o.network = nn::NetworkOptions::mlp(2, kActions, {8});
  o.network.lstm_size = kLstm;
  o.network.q_head = true;
  o.network.policy_value_heads = false;
  o.network.dueling = true;
  o.network.seed = seed;
  o.batch_size = 4;
  o.discount = 0.9f;
  o.n_step = 3;
  o.replay_capacity = 64;
  o.min_replay_size = 4;
  o.learning_rate = {1e-2, 0, 0.0};
  return o;
}

inline UnrollSpec spec_for(const R2D2Agent& agent, std::int64_t burn_in, std::int64_t unroll) {
  InferenceServerOptions o;
  o.unroll_length = unroll;
  o.burn_in = burn_in;
  return make_unroll_spec(agent, {{2}, DType::f32}, {static_cast<std::int32_t>(kActions)}, o);
}

// `count` sequences of `spec` from random steps with episode ends (terminations and
// truncations), random rewards and random stored recurrent states (and random acting Q-values
// where the spec records them: actor_priorities), and random legal-action masks that allow the
// action taken where the spec declares kActionMaskField.
inline std::vector<std::unique_ptr<Unroll>> random_sequences(const UnrollSpec& spec, int count,
                                                             std::uint64_t seed) {
  Rng rng(seed);
  UnrollStore store(count, spec);
  std::vector<std::unique_ptr<Unroll>> out;
  const bool masked = !spec.fields.empty() && spec.fields[0].name == kActionMaskField;
  const Tensor mask = Tensor::zeros({1, kActions}, DType::u8);
  Tensor obs = Tensor::empty({2});
  std::vector<float> h(kLstm), c(kLstm), q(kActions);
  std::vector<std::uint8_t> last(static_cast<std::size_t>(count), 1);
  for (std::int64_t t = 0; static_cast<int>(out.size()) < count; ++t)
    for (int slot = 0; slot < count; ++slot) {
      obs.data<float>()[0] = static_cast<float>(rng.uniform(-1, 1));
      obs.data<float>()[1] = static_cast<float>(rng.uniform(-1, 1));
      for (std::size_t i = 0; i < h.size(); ++i) {
        h[i] = static_cast<float>(rng.uniform(-0.5, 0.5));
        c[i] = static_cast<float>(rng.uniform(-0.5, 0.5));
      }
      UnrollStep s;
      s.observation = obs;
      const double u = rng.uniform();
      s.flags =
          last[static_cast<std::size_t>(slot)]
              ? step_flags::kFirst
              : (u < 0.08 ? step_flags::kTerminated : (u < 0.14 ? step_flags::kTruncated : 0));
      last[static_cast<std::size_t>(slot)] = is_last(s.flags) ? 1 : 0;
      s.reward = is_first(s.flags) ? 0.0f : static_cast<float>(rng.uniform(-1, 2));
      const auto action = static_cast<std::int32_t>(rng.below(kActions));
      s.set_action(&action);
      if (masked) {
        for (std::int64_t j = 0; j < kActions; ++j)
          mask.data<std::uint8_t>()[j] = j == action || rng.uniform() < 0.5 ? 1 : 0;
        s.fields = std::span<const Tensor>(&mask, 1);
      }
      s.state_h = h.data();
      s.state_c = c.data();
      if (spec.store_behaviour) {
        for (float& v : q) v = static_cast<float>(rng.uniform(-1, 2));
        s.behaviour = q.data();
      }
      if (auto unroll = store.append(slot, s); unroll && static_cast<int>(out.size()) < count)
        out.push_back(std::move(unroll));
    }
  return out;
}

}  // namespace seedrl::test
