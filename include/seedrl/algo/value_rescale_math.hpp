// The scalar math of R2D2's value transform h and its inverse (see value_rescale.hpp), callable
// from host and device code so both backends compute exactly the same thing.
#pragma once

#include <math.h>  // copysign, fabs, sqrt: callable from host and device code

#include "seedrl/core/host_device.hpp"

namespace seedrl::detail {

SEEDRL_HOST_DEVICE inline double h(double x, double eps) {
  return copysign(sqrt(fabs(x) + 1.0) - 1.0, x) + eps * x;
}

SEEDRL_HOST_DEVICE inline double h_inverse(double x, double eps) {
  const double a = fabs(x);
  if (eps == 0.0) return copysign((a + 1.0) * (a + 1.0) - 1.0, x);
  // y = sqrt(|h^-1(x)| + 1) solves eps y^2 + y - c = 0 with c = |x| + 1 + eps, so with
  // s = sqrt(1 + 4 eps c) and m = 2c - 1:  y - 1 = (m - s) / (s + 1), and since
  // m^2 - s^2 = 4 |x| c this is 4 |x| c / ((m + s)(s + 1)): no cancellation anywhere.
  const double c = a + 1.0 + eps;
  const double s = sqrt(1.0 + 4.0 * eps * c);
  const double m = 2.0 * c - 1.0;
  const double y_minus_1 = 4.0 * a * c / ((m + s) * (s + 1.0));
  // |h^-1(x)| = y^2 - 1 = (y - 1)(y + 1)
  return copysign(y_minus_1 * (y_minus_1 + 2.0), x);
}

}  // namespace seedrl::detail
