// RunningMoments: batch-by-batch statistics against a two-pass computation over all samples in
// double precision (any split and merge order), the prior, the normalisation with its clip, the
// restore of saved statistics, and clear errors.
#include <doctest/doctest.h>

#include <cmath>

#include "seedrl/core/error.hpp"
#include "seedrl/core/random.hpp"
#include "seedrl/math/running_moments.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_running_moments {

using namespace seedrl;
using math::RunningMoments;

namespace {

RowMatrixXf samples(Eigen::Index rows, Eigen::Index cols, Rng& rng) {
  RowMatrixXf m(rows, cols);
  for (Eigen::Index i = 0; i < rows; ++i)
    for (Eigen::Index j = 0; j < cols; ++j)
      m(i, j) = static_cast<float>(3.0 * j - 2.0 + (j + 1) * rng.normal());
  return m;
}

}  // namespace

TEST_CASE("RunningMoments: batches and merges give the two-pass mean and variance") {
  Rng rng(1);
  const RowMatrixXf all = samples(1000, 3, rng);
  const Eigen::MatrixXd x = all.cast<double>();
  const Eigen::VectorXd mean = x.colwise().mean().transpose();
  const Eigen::VectorXd variance =
      (x.rowwise() - mean.transpose()).array().square().colwise().mean().transpose();

  RunningMoments in_batches(3, 0.0), halves(3, 0.0), other_half(3, 0.0);
  for (Eigen::Index begin = 0; begin < 1000; begin += 37) {
    const Eigen::Index n = std::min<Eigen::Index>(37, 1000 - begin);
    in_batches.update(all.middleRows(begin, n));
  }
  halves.update(all.topRows(400));
  other_half.update(all.bottomRows(600));
  other_half.merge(halves);  // merged the other way round
  for (const RunningMoments* m : {&in_batches, &other_half}) {
    CHECK(m->count() == 1000.0);
    for (int j = 0; j < 3; ++j) {
      CHECK(m->mean()(j) == doctest::Approx(mean(j)).epsilon(1e-9));
      CHECK(m->variance()(j) == doctest::Approx(variance(j)).epsilon(1e-9));
    }
  }

  // The default prior: 1e-4 samples of mean 0 and variance 1, so a first normalisation is finite.
  RunningMoments with_prior(3);
  CHECK(with_prior.count() == doctest::Approx(1e-4));
  with_prior.update(all);
  CHECK(with_prior.mean()(2) == doctest::Approx(mean(2)).epsilon(1e-6));
}

TEST_CASE("RunningMoments: normalisation, its clip, restore and errors") {
  Rng rng(2);
  RunningMoments m(2, 0.0);
  m.update(samples(500, 2, rng));
  RowMatrixXf x(3, 2);
  x << static_cast<float>(m.mean()(0)), static_cast<float>(m.mean()(1)),
      static_cast<float>(m.mean()(0) + 2 * std::sqrt(m.variance()(0))), 1e6f, -1e6f, 0.0f;
  RowMatrixXf out(3, 2);
  m.normalize(x, out, 5.0f);
  CHECK(out(0, 0) == doctest::Approx(0.0).scale(1.0));
  CHECK(out(0, 1) == doctest::Approx(0.0).scale(1.0));
  CHECK(out(1, 0) == doctest::Approx(2.0).epsilon(1e-5));
  CHECK(out(1, 1) == 5.0f);   // clipped
  CHECK(out(2, 0) == -5.0f);  // clipped

  RunningMoments copy(2);
  copy.restore(m.count(), m.mean(), m.variance());
  RowMatrixXf again(3, 2);
  copy.normalize(x, again, 5.0f);
  CHECK(again == out);  // restored statistics normalise identically

  CHECK_THROWS_WITH_AS(m.update(samples(4, 3, rng)), doctest::Contains("rows of 3 values"), Error);
  RowMatrixXf bad = samples(4, 2, rng);
  bad(2, 1) = std::nanf("");
  CHECK_THROWS_WITH_AS(m.update(bad), doctest::Contains("row 2 holds a non-finite value"), Error);
  CHECK_THROWS_WITH_AS(copy.restore(1.0, Eigen::VectorXd::Zero(2), -Eigen::VectorXd::Ones(2)),
                       doctest::Contains("negative"), Error);
  CHECK_THROWS_WITH_AS(RunningMoments(0), doctest::Contains("size must be positive"), Error);
}

}  // namespace test_running_moments
