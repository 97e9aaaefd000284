// SkippedSteps: a learner's account of the steps it skipped because something was not finite,
// and of what that was, so that a run whose learning has stopped can say so and end
// (TrainingSessionOptions::max_skipped_steps) instead of playing on with frozen parameters.
//
//   finish_step: skipped ──▶ skipped(step, cause) ── first of a stretch: cause() diagnoses it
//                applied ──▶ applied()                (the stretch ends)
//
// The diagnosis names the first non-finite thing in the order a step computes them: the
// parameters themselves (a value that is not finite in them poisons everything after), a value of
// the loss by its metric name, a value the learner checked itself (R2D2's priorities), the
// gradients' global norm. Only the first skipped step of a stretch pays for it (the parameters
// are copied to the host to be scanned).
//
// Thread-safety: the stepping thread records; total() from any thread.
#pragma once

#include <atomic>
#include <cmath>
#include <cstdint>
#include <span>
#include <string>

#include "seedrl/core/error.hpp"
#include "seedrl/learner/learner_metrics.hpp"
#include "seedrl/nn/parameter.hpp"

namespace seedrl {

/// A run of consecutive skipped steps.
struct SkipStretch {
  std::int64_t steps = 0;       ///< skipped in a row, up to the latest step
  std::int64_t since_step = 0;  ///< the learner step (updates applied) when the stretch began
  std::string cause;            ///< what was not finite at its first step
};

class SkippedSteps {
 public:
  /// Records a skipped step taken when `step` updates had been applied; `diagnose()` gives the
  /// cause and is called only for the first step of a stretch.
  template <class Diagnose>
  const SkipStretch& skipped(std::int64_t step, Diagnose diagnose) {
    ++total_;
    if (stretch_.steps++ == 0) {
      stretch_.since_step = step;
      stretch_.cause = diagnose();
    }
    return stretch_;
  }
  void applied() { stretch_.steps = 0; }

  std::int64_t total() const { return total_.load(); }
  const SkipStretch& stretch() const { return stretch_; }

 private:
  std::atomic<std::int64_t> total_{0};
  SkipStretch stretch_;
};

/// What was not finite in a skipped step (see the top): `values` named by `names`, `finite` the
/// learner's own verdict, `grad_norm` the gradients' global norm.
inline std::string diagnose_non_finite(const nn::ParameterStore& parameters,
                                       std::span<const double> values,
                                       std::span<const MetricInfo> names, bool finite,
                                       double grad_norm) {
  const Tensor host = parameters.values().device() == Device::cpu
                          ? parameters.values()
                          : parameters.values().clone(Device::cpu);
  const float* p = host.data<float>();
  for (const nn::Parameter& parameter : parameters.parameters()) {
    for (std::int64_t i = 0; i < parameter.shape.numel(); ++i) {
      const float v = p[parameter.offset + i];
      if (!std::isfinite(v))
        return str_cat("the parameters are not finite ('", parameter.name, "' holds ", v,
                       " at element ", i, ")");
    }
  }
  for (std::size_t i = 0; i < values.size() && i < names.size(); ++i) {
    if (!std::isfinite(values[i]))
      return str_cat("the loss is not finite ('", names[i].name, "' is ", values[i], ")");
  }
  if (!finite) return "a value the learner checks besides its loss is not finite (e.g. priorities)";
  return str_cat("the gradients are not finite (global norm ", grad_norm, ")");
}

}  // namespace seedrl
