// V-trace off-policy actor-critic targets (Espeholt et al. 2018, "IMPALA", section 4.1), with
// the exact semantics of seed_rl's common/vtrace.py.
//
// Layout: time-major Eigen arrays with T rows (time) and B columns (batch entries).
//   rho_t   = exp(log_rhos_t)                        (pi / mu of the action taken at t)
//   delta_t = min(rho_bar, rho_t) (r_t + gamma_t V_{t+1} - V_t),   V_T = bootstrap_value
//   c_t     = lambda min(1, rho_t)
//   v_s - V_s = delta_s + gamma_s c_s (v_{s+1} - V_{s+1}),   zero beyond s = T - 1
//   A_t     = min(rho_bar_pg, rho_t) (r_t + gamma_t v_{t+1} - V_t),   v_T = bootstrap_value
// discounts[t] = gamma * (1 - done_t): it is zero where the episode ended with the reward r_t,
// which cuts both the bootstrap and the trace there.
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <string_view>

#include "seedrl/core/error.hpp"

namespace seedrl {

struct VTraceOptions {
  float clip_rho_threshold = 1.0f;     ///< rho_bar: clips the importance weights in the targets
  float clip_pg_rho_threshold = 1.0f;  ///< rho_bar_pg: clips them in the policy-gradient advantage
  float lambda = 1.0f;                 ///< mixes 1-step (0) and full V-trace (1) targets

  void validate(std::string_view owner = "VTraceOptions") const {
    SEEDRL_REQUIRE(clip_rho_threshold > 0.0f, owner, ".clip_rho_threshold must be > 0, got ",
                   clip_rho_threshold);  // also false for NaN
    SEEDRL_REQUIRE(clip_pg_rho_threshold > 0.0f, owner, ".clip_pg_rho_threshold must be > 0, got ",
                   clip_pg_rho_threshold);
    SEEDRL_REQUIRE(lambda >= 0.0f && lambda <= 1.0f, owner, ".lambda must be in [0, 1], got ",
                   lambda);
  }
};

struct VTraceReturns {
  Eigen::ArrayXXf vs;             ///< [T, B] value targets
  Eigen::ArrayXXf pg_advantages;  ///< [T, B] advantages for the policy gradient
};

/// V-trace targets from log importance weights log(pi(a_t|x_t) / mu(a_t|x_t)), all [T, B]
/// except bootstrap_value [B] (the value estimate of the state after the last step).
VTraceReturns vtrace(const Eigen::ArrayXXf& log_rhos, const Eigen::ArrayXXf& discounts,
                     const Eigen::ArrayXXf& rewards, const Eigen::ArrayXXf& values,
                     const Eigen::ArrayXf& bootstrap_value, const VTraceOptions& options = {});

}  // namespace seedrl
