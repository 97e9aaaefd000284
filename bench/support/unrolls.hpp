// Unrolls for the learner benchmarks, as actors would send them: random observations of the
// spec's shape and type (u8 pixels or f32), discrete or box actions, the behaviour policy's
// numbers, one episode per unroll.
#pragma once

#include <algorithm>
#include <memory>
#include <vector>

#include "seedrl/core/random.hpp"
#include "seedrl/experience/unroll_store.hpp"

namespace seedrl::bench {

inline std::vector<std::unique_ptr<Unroll>> random_unrolls(const UnrollSpec& spec,
                                                           std::int64_t count, Rng& rng) {
  UnrollStore store(static_cast<std::int32_t>(count), spec);
  std::vector<std::unique_ptr<Unroll>> out;
  Tensor obs = Tensor::empty(spec.observation.shape, spec.observation.dtype);
  // The behaviour policy's numbers (discrete: logits; box: mean and log std), box actions.
  std::vector<float> logits(
      static_cast<std::size_t>(std::max<std::int64_t>(spec.behaviour_size(), 1)));
  std::vector<float> box(static_cast<std::size_t>(spec.action_dims));
  for (std::int64_t t = 0; static_cast<std::int64_t>(out.size()) < count; ++t)
    for (std::int64_t slot = 0; slot < count; ++slot) {
      for (std::int64_t i = 0; i < obs.numel(); ++i) {
        if (obs.dtype() == DType::u8) {
          obs.data<std::uint8_t>()[i] = static_cast<std::uint8_t>(rng.below(256));
        } else {
          obs.data<float>()[i] = static_cast<float>(rng.uniform(-1, 1));
        }
      }
      for (float& l : logits) l = static_cast<float>(rng.uniform(-1, 1));
      UnrollStep step;
      step.observation = obs;
      step.reward = static_cast<float>(rng.uniform(0, 1));
      step.flags = t == 0 ? step_flags::kFirst : 0;
      std::int32_t action = 0;
      if (spec.action_dims > 0) {
        for (float& a : box) a = static_cast<float>(rng.uniform(-1, 1));
        step.set_action(box.data(), box.size());
      } else {
        action = static_cast<std::int32_t>(rng.below(static_cast<std::uint64_t>(spec.num_actions)));
        step.set_action(&action);
      }
      step.behaviour = logits.data();
      if (auto u = store.append(static_cast<std::int32_t>(slot), step)) out.push_back(std::move(u));
    }
  return out;
}

}  // namespace seedrl::bench
