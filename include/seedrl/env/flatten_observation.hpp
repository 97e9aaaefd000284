// FlattenObservation<Env>: presents an environment's multi-dimensional observation as a vector,
// for MLP torsos (e.g. Catch's [10, 5] board as [50]). No copy: the wrapped environment writes
// through a reshaped view of the same tensor.
#pragma once

#include <utility>
#include <vector>

#include "seedrl/env/environment.hpp"

namespace seedrl {

template <Environment Env>
class FlattenObservation {
 public:
  explicit FlattenObservation(Env env) : env_(std::move(env)), inner_(env_.observation_spec()) {}

  TensorSpec observation_spec() const { return {{inner_.shape.numel()}, inner_.dtype}; }
  ActionSpec action_spec() const { return env_.action_spec(); }
  void reset(const Tensor& observation) { env_.reset(observation.reshape(inner_.shape)); }
  StepResult step(std::int32_t action, const Tensor& observation) {
    return env_.step(action, observation.reshape(inner_.shape));
  }

  // An environment's declared step fields pass through unchanged.
  std::vector<StepFieldSpec> step_fields() const requires FieldEnvironment<Env> {
    return env_.step_fields();
  }
  void reset(const StepRow& row) requires FieldEnvironment<Env> { env_.reset(inner(row)); }
  StepResult step(std::int32_t action, const StepRow& row) requires FieldEnvironment<Env> {
    return env_.step(action, inner(row));
  }

  Env& environment() { return env_; }
  const Env& environment() const { return env_; }

 private:
  StepRow inner(const StepRow& row) const {
    return row.with_observation(row.observation().reshape(inner_.shape));
  }

  Env env_;
  TensorSpec inner_;
};

}  // namespace seedrl
