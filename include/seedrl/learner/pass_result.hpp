// PassResult: what one pass of a learner's loss over a batch (or a micro-batch) gives besides the
// gradients it leaves in the network, and how micro-batches' results make the whole batch's.
#pragma once

#include <cstdint>
#include <vector>

namespace seedrl {

/// The learner's own metrics, the weight of the pass (what its loss is a mean over: V-trace's
/// transitions, R2D2's sequences), the transitions, their mean policy lag, and whether what the
/// loss gave was finite. Each metric is a mean over `weight`, or over value_weights[k] where given
/// (R2D2's mean Q is over transitions).
struct PassResult {
  std::vector<double> values;
  std::vector<double> value_weights;
  double weight = 0.0;
  std::int64_t transitions = 0;
  double policy_lag = 0.0;
  bool finite = true;

  /// The micro-batches' results as the whole batch's: weighted means, summed counts.
  static PassResult combine(const std::vector<PassResult>& parts) {
    PassResult total;
    const std::size_t n = parts[0].values.size();
    std::vector<double> weights(n, 0.0);
    total.values.assign(n, 0.0);
    auto weight_of = [](const PassResult& g, std::size_t k) {
      return g.value_weights.empty() ? g.weight : g.value_weights[k];
    };
    for (const PassResult& g : parts) {
      total.weight += g.weight;
      total.transitions += g.transitions;
      total.policy_lag += g.policy_lag * static_cast<double>(g.transitions);
      total.finite = total.finite && g.finite;
      for (std::size_t k = 0; k < n; ++k) {
        total.values[k] += g.values[k] * weight_of(g, k);
        weights[k] += weight_of(g, k);
      }
    }
    for (std::size_t k = 0; k < n; ++k) total.values[k] /= weights[k] > 0.0 ? weights[k] : 1.0;
    if (total.transitions > 0) total.policy_lag /= static_cast<double>(total.transitions);
    return total;
  }
};

}  // namespace seedrl
