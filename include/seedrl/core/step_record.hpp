// The step record: what a batch of environments produced at one step, as an actor sends it
// (StepRecord), and one environment's row of it, where that environment writes (StepRow). Its
// fields are the StepSpec's (core/step_spec.hpp): the observation, the reward, the step flags and
// the declared fields, one tensor each.
//
//   actor buffers:  observations [N, obs...]  rewards [N]  flags [N]  field k [N, field k...]
//                     row e ──▶ StepRow: environment e's reset() and step() write here
//                     all   ──▶ StepRecord: client.step(record, actions)
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "seedrl/core/error.hpp"
#include "seedrl/core/step_spec.hpp"
#include "seedrl/core/tensor.hpp"

namespace seedrl {

/// One step of an actor's N environments: views of buffers the sender owns and keeps alive (and
/// unchanged) until the step is answered. `fields` holds one [N, field...] tensor per field the
/// step spec declares, in its order (empty where it declares none).
struct StepRecord {
  Tensor observations;                  ///< [N, observation...]
  std::span<const float> rewards;       ///< N: the reward received on arriving at this step
  std::span<const std::uint8_t> flags;  ///< N step flags (core/step_flags.hpp)
  std::span<const Tensor> fields;       ///< the declared fields, [N, field...] each

  std::size_t num_envs() const { return rewards.size(); }
};

/// Environment `row`'s part of an actor's step buffers: its observation, and its value of each
/// declared field, which its reset() and step() write (and must write at every step: the buffers
/// are reused, so a field left alone keeps the previous step's value). Cheap to make; the views it
/// returns are valid while the actor's buffers are.
class StepRow {
 public:
  StepRow(Tensor observation, const std::vector<StepFieldSpec>& specs,
          std::span<const Tensor> field_batches, std::int64_t row)
      : observation_(std::move(observation)), specs_(&specs), batches_(field_batches), row_(row) {}

  const Tensor& observation() const { return observation_; }

  /// This environment's value of the declared field `name` (a view into the actor's buffer);
  /// throws naming the field and the declared ones when the spec does not declare it.
  Tensor field(std::string_view name) const {
    for (std::size_t i = 0; i < specs_->size(); ++i)
      if ((*specs_)[i].name == name) return field(i);
    fail("StepRow: no step field '", name, "' is declared (", StepSpec::fields_to_string(*specs_),
         ")");
  }
  /// The same by position in the step spec's fields.
  Tensor field(std::size_t index) const {
    SEEDRL_REQUIRE(index < batches_.size(), "StepRow: step field ", index, " of ", batches_.size());
    return batches_[index][row_];
  }
  std::size_t num_fields() const { return batches_.size(); }
  /// The same row with `observation` in place of its own (a wrapper's view of it, reshaped).
  StepRow with_observation(Tensor observation) const {
    StepRow row = *this;
    row.observation_ = std::move(observation);
    return row;
  }

 private:
  Tensor observation_;
  const std::vector<StepFieldSpec>* specs_;
  std::span<const Tensor> batches_;
  std::int64_t row_;
};

}  // namespace seedrl
