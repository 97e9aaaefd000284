// Learner metrics: each learner reports its own named values; the training session averages them
// between reports with one accumulator, whatever the learner.
//
//   learner step ──▶ MetricList {"total_loss" 0.31, "entropy" 1.02, ..., "grad_norm" 2.4, ...}
//   session: MetricsAccumulator::add(list) per step ── take() per report ──▶ metrics.csv row,
//            TensorBoard scalars, the progress line (the values a learner marks for it)
//
// A learner's list has the same names in the same order at every step (its schema): the CSV
// columns are fixed by it before the first step. A non-finite value (the loss of a step that was
// skipped) is left out of the mean; a name with nothing to average reports NaN ("nan" in the
// CSV): nothing was measured.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string_view>
#include <vector>

#include "seedrl/core/error.hpp"

namespace seedrl {

/// How a value is summarised over the steps between two reports.
enum class Reduce : std::uint8_t {
  mean,  ///< the average (losses, norms)
  last,  ///< the latest value (a learning rate, a running count)
};

/// A metric's name and how it is shown. `progress` is its label on the progress line (null: not
/// shown there).
struct MetricInfo {
  std::string_view name;
  Reduce reduce = Reduce::mean;
  const char* progress = nullptr;
};

struct Metric {
  MetricInfo info;
  double value = 0.0;
};

/// A learner step's named values, in a fixed order. Holds up to kCapacity values without
/// allocating (learner steps run in the hot loop).
class MetricList {
 public:
  static constexpr std::size_t kCapacity = 24;

  void add(const MetricInfo& info, double value) {
    SEEDRL_REQUIRE(size_ < kCapacity, "MetricList: more than ", kCapacity, " metrics");
    items_[size_++] = {info, value};
  }
  std::span<const Metric> items() const { return {items_.data(), size_}; }
  std::size_t size() const { return size_; }

  /// The value named `name`; throws seedrl::Error naming it when there is none.
  double operator[](std::string_view name) const {
    for (const Metric& m : items())
      if (m.info.name == name) return m.value;
    fail("MetricList: no metric named '", name, "'");
  }

 private:
  std::array<Metric, kCapacity> items_{};
  std::size_t size_ = 0;
};

/// Sums a learner's metrics over steps and gives their summaries. Not thread-safe: the session
/// guards it.
class MetricsAccumulator {
 public:
  /// `schema`: the learner's names, in the order every list will have them.
  explicit MetricsAccumulator(std::vector<MetricInfo> schema)
      : schema_(std::move(schema)), sums_(schema_.size(), 0.0), counts_(schema_.size(), 0) {}

  void add(const MetricList& list) {
    SEEDRL_REQUIRE(list.size() == schema_.size(), "MetricsAccumulator: a step reported ",
                   list.size(), " metrics, the learner's schema has ", schema_.size());
    for (std::size_t i = 0; i < schema_.size(); ++i) {
      const Metric& m = list.items()[i];
      SEEDRL_REQUIRE(m.info.name == schema_[i].name, "MetricsAccumulator: metric ", i, " is '",
                     m.info.name, "', the schema says '", schema_[i].name, "'");
      if (!std::isfinite(m.value)) continue;
      if (schema_[i].reduce == Reduce::last) {
        sums_[i] = m.value;
        counts_[i] = 1;
      } else {
        sums_[i] += m.value;
        ++counts_[i];
      }
    }
  }

  /// The summaries since the last take() (NaN where nothing finite came), in schema order; then
  /// starts over. A `last` value is kept until a newer one arrives.
  std::vector<Metric> take() {
    std::vector<Metric> out;
    out.reserve(schema_.size());
    for (std::size_t i = 0; i < schema_.size(); ++i) {
      const double value = counts_[i] > 0 ? sums_[i] / static_cast<double>(counts_[i])
                                          : std::numeric_limits<double>::quiet_NaN();
      out.push_back({schema_[i], value});
      if (schema_[i].reduce == Reduce::mean) {
        sums_[i] = 0.0;
        counts_[i] = 0;
      }
    }
    return out;
  }

  const std::vector<MetricInfo>& schema() const { return schema_; }

 private:
  std::vector<MetricInfo> schema_;
  std::vector<double> sums_;
  std::vector<std::int64_t> counts_;
};

}  // namespace seedrl
