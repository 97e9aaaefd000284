// The metrics a learner reports (learner/learner_metrics.hpp): the accumulator's means and latest
// values, values nothing measured, and a list that does not match the schema.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "seedrl/learner/learner_metrics.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_learner_metrics {

using namespace seedrl;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST_CASE("MetricsAccumulator: means, latest values, and nothing measured is NaN") {
  static constexpr MetricInfo loss{"loss", Reduce::mean, "loss"}, rate{"rate", Reduce::last};
  MetricsAccumulator acc({loss, rate});
  MetricList step;
  step.add(loss, 2.0);
  step.add(rate, 0.1);
  acc.add(step);
  MetricList skipped;  // a skipped step: its loss is not finite and does not count
  skipped.add(loss, kNaN);
  skipped.add(rate, 0.05);
  acc.add(skipped);
  MetricList third;
  third.add(loss, 4.0);
  third.add(rate, kNaN);
  acc.add(third);
  std::vector<Metric> summary = acc.take();
  REQUIRE(summary.size() == 2);
  CHECK(summary[0].info.name == "loss");
  CHECK(summary[0].value == 3.0);
  CHECK(summary[1].value == 0.05);
  summary = acc.take();  // nothing since: the mean is unmeasured, the latest stays
  CHECK(std::isnan(summary[0].value));
  CHECK(summary[1].value == 0.05);

  MetricList other;
  other.add({"other"}, 1.0);
  other.add(rate, 1.0);
  CHECK_THROWS_WITH_AS(acc.add(other), doctest::Contains("metric 0 is 'other'"), Error);
  CHECK_THROWS_WITH_AS(step["missing"], doctest::Contains("no metric named 'missing'"), Error);
}

}  // namespace test_learner_metrics
