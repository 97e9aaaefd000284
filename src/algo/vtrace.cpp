#include "seedrl/algo/vtrace.hpp"

#include <algorithm>
#include <cmath>

namespace seedrl {

VTraceReturns vtrace(const Eigen::ArrayXXf& log_rhos, const Eigen::ArrayXXf& discounts,
                     const Eigen::ArrayXXf& rewards, const Eigen::ArrayXXf& values,
                     const Eigen::ArrayXf& bootstrap_value, const VTraceOptions& options) {
  options.validate();
  const Eigen::Index steps = log_rhos.rows(), batch = log_rhos.cols();
  auto check = [&](const Eigen::ArrayXXf& a, const char* name) {
    SEEDRL_REQUIRE(a.rows() == steps && a.cols() == batch, "vtrace: ", name, " is [", a.rows(),
                   ", ", a.cols(), "], expected [", steps, ", ", batch, "] like log_rhos");
  };
  check(discounts, "discounts");
  check(rewards, "rewards");
  check(values, "values");
  SEEDRL_REQUIRE(bootstrap_value.size() == batch, "vtrace: bootstrap_value has ",
                 bootstrap_value.size(), " entries, expected ", batch, " (one per column)");

  VTraceReturns out{Eigen::ArrayXXf(steps, batch), Eigen::ArrayXXf(steps, batch)};
  for (Eigen::Index b = 0; b < batch; ++b) {
    float acc = 0.0f;  // v_{t+1} - V_{t+1}
    for (Eigen::Index t = steps - 1; t >= 0; --t) {
      const float rho = std::exp(log_rhos(t, b));
      const float next_value = t + 1 < steps ? values(t + 1, b) : bootstrap_value(b);
      const float delta = std::min(options.clip_rho_threshold, rho) *
                          (rewards(t, b) + discounts(t, b) * next_value - values(t, b));
      acc = delta + discounts(t, b) * options.lambda * std::min(1.0f, rho) * acc;
      out.vs(t, b) = values(t, b) + acc;
    }
    for (Eigen::Index t = 0; t < steps; ++t) {
      const float rho = std::exp(log_rhos(t, b));
      const float next_vs = t + 1 < steps ? out.vs(t + 1, b) : bootstrap_value(b);
      out.pg_advantages(t, b) = std::min(options.clip_pg_rho_threshold, rho) *
                                (rewards(t, b) + discounts(t, b) * next_vs - values(t, b));
    }
  }
  return out;
}

}  // namespace seedrl
