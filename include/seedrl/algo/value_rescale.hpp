// The invertible value transform of R2D2 (Kapturowski et al. 2019; Pohlen et al. 2018):
//   h(x)      = sign(x) (sqrt(|x| + 1) - 1) + eps x
//   h^-1(x)   = sign(x) (((sqrt(1 + 4 eps (|x| + 1 + eps)) - 1) / (2 eps))^2 - 1)
// h^-1 is the exact inverse (the closed-form root of the quadratic), evaluated in double in a
// cancellation-free form; eps = 0 gives sign(x) ((|x| + 1)^2 - 1).
#pragma once

#include <Eigen/Core>
#include <cmath>

#include "seedrl/algo/value_rescale_math.hpp"
#include "seedrl/core/error.hpp"

namespace seedrl {

inline constexpr double kValueRescaleEpsilon = 1e-3;

namespace detail {
inline void check_rescale_epsilon(double eps) {
  SEEDRL_REQUIRE(eps >= 0.0 && std::isfinite(eps),
                 "value_rescale: eps must be finite and >= 0, got ", eps);
}
}  // namespace detail

/// h(x). Scalars (float or double) and Eigen arrays.
template <class T>
requires std::is_floating_point_v<T> T value_rescale(T x, double eps = kValueRescaleEpsilon) {
  detail::check_rescale_epsilon(eps);
  return static_cast<T>(detail::h(static_cast<double>(x), eps));
}

/// h^-1(x), the exact inverse of value_rescale.
template <class T>
requires std::is_floating_point_v<T> T inverse_value_rescale(T x,
                                                             double eps = kValueRescaleEpsilon) {
  detail::check_rescale_epsilon(eps);
  return static_cast<T>(detail::h_inverse(static_cast<double>(x), eps));
}

template <class Derived>
typename Derived::PlainObject value_rescale(const Eigen::ArrayBase<Derived>& x,
                                            double eps = kValueRescaleEpsilon) {
  detail::check_rescale_epsilon(eps);
  using Scalar = typename Derived::Scalar;
  return x.unaryExpr(
      [eps](Scalar v) { return static_cast<Scalar>(detail::h(static_cast<double>(v), eps)); });
}

template <class Derived>
typename Derived::PlainObject inverse_value_rescale(const Eigen::ArrayBase<Derived>& x,
                                                    double eps = kValueRescaleEpsilon) {
  detail::check_rescale_epsilon(eps);
  using Scalar = typename Derived::Scalar;
  return x.unaryExpr([eps](Scalar v) {
    return static_cast<Scalar>(detail::h_inverse(static_cast<double>(v), eps));
  });
}

}  // namespace seedrl
