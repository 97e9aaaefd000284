#include "seedrl/nn/init.hpp"

#include <Eigen/Dense>
#include <algorithm>

namespace seedrl::nn {

void initialize(float* data, const Shape& shape, const Init& init, std::int64_t fan_in,
                std::int64_t fan_out, Rng& rng) {
  const std::int64_t n = shape.numel();
  auto fill_uniform = [&](double bound) {
    for (std::int64_t i = 0; i < n; ++i) data[i] = static_cast<float>(rng.uniform(-bound, bound));
  };
  switch (init.kind) {
    case Init::Kind::zeros:
      for (std::int64_t i = 0; i < n; ++i) data[i] = 0.0f;
      return;
    case Init::Kind::constant:
      for (std::int64_t i = 0; i < n; ++i) data[i] = static_cast<float>(init.value);
      return;
    case Init::Kind::uniform:
      fill_uniform(init.value);
      return;
    case Init::Kind::fan_in_uniform:
      SEEDRL_REQUIRE(fan_in > 0, "Init::fan_in_uniform: fan_in must be positive for ", shape);
      fill_uniform(1.0 / std::sqrt(static_cast<double>(fan_in)));
      return;
    case Init::Kind::xavier_uniform:
      SEEDRL_REQUIRE(fan_in + fan_out > 0, "Init::xavier_uniform: zero fans for ", shape);
      fill_uniform(init.value * std::sqrt(6.0 / static_cast<double>(fan_in + fan_out)));
      return;
    case Init::Kind::kaiming_uniform:
      SEEDRL_REQUIRE(fan_in > 0, "Init::kaiming_uniform: fan_in must be positive for ", shape);
      fill_uniform(init.value * std::sqrt(3.0 / static_cast<double>(fan_in)));
      return;
    case Init::Kind::orthogonal: {
      SEEDRL_REQUIRE(shape.rank() >= 1 && n > 0, "Init::orthogonal: needs a non-empty matrix, got ",
                     shape);
      const std::int64_t rows = shape.rank() == 1 ? 1 : shape[0];
      const std::int64_t cols = n / rows;
      const Eigen::Index tall = std::max(rows, cols), wide = std::min(rows, cols);
      Eigen::MatrixXd gaussian(tall, wide);
      for (Eigen::Index j = 0; j < wide; ++j)
        for (Eigen::Index i = 0; i < tall; ++i) gaussian(i, j) = rng.normal();
      Eigen::HouseholderQR<Eigen::MatrixXd> qr(gaussian);
      Eigen::MatrixXd q = qr.householderQ() * Eigen::MatrixXd::Identity(tall, wide);
      // Make the decomposition unique (and the distribution uniform) as Mezzadri (2007) does.
      const Eigen::MatrixXd r = qr.matrixQR().topRows(wide).triangularView<Eigen::Upper>();
      for (Eigen::Index j = 0; j < wide; ++j)
        if (r(j, j) < 0) q.col(j) *= -1.0;
      for (std::int64_t i = 0; i < rows; ++i)
        for (std::int64_t j = 0; j < cols; ++j) {
          const double v = rows >= cols ? q(i, j) : q(j, i);
          data[i * cols + j] = static_cast<float>(init.value * v);
        }
      return;
    }
  }
}

}  // namespace seedrl::nn
