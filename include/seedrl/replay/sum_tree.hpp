// SumTree: a complete binary tree of non-negative weights for O(log N) proportional sampling.
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

#include "seedrl/core/error.hpp"

namespace seedrl {

/// Leaves hold weights; every inner node holds the sum of its children (recomputed from them on
/// each update, so sums never drift). find(u) returns the leaf whose cumulative interval holds
/// u in [0, total()). Not thread-safe: ReplayBuffer guards it.
class SumTree {
 public:
  explicit SumTree(std::size_t capacity) : capacity_(capacity) {
    SEEDRL_REQUIRE(capacity > 0, "SumTree: capacity must be positive");
    while (leaves_ < capacity) leaves_ *= 2;
    nodes_.assign(2 * leaves_, 0.0);
  }

  std::size_t capacity() const { return capacity_; }
  double total() const { return nodes_[1]; }
  double get(std::size_t index) const { return nodes_[leaves_ + checked(index)]; }

  /// Sets the weight of leaf `index` (>= 0, finite) and updates the sums above it: O(log N).
  void set(std::size_t index, double weight) {
    SEEDRL_REQUIRE(weight >= 0.0 && std::isfinite(weight),
                   "SumTree: weight must be finite and >= 0, got ", weight);
    std::size_t node = leaves_ + checked(index);
    nodes_[node] = weight;
    for (node /= 2; node >= 1; node /= 2) nodes_[node] = nodes_[2 * node] + nodes_[2 * node + 1];
  }

  /// The leaf whose interval [prefix, prefix + weight) contains `mass`; a leaf of weight zero is
  /// never returned while total() > 0 (rounding at the right edge goes to the last non-zero
  /// leaf). O(log N).
  std::size_t find(double mass) const {
    SEEDRL_REQUIRE(total() > 0.0, "SumTree::find on an empty tree");
    std::size_t node = 1;
    while (node < leaves_) {
      const double left = nodes_[2 * node];
      if (mass < left || nodes_[2 * node + 1] <= 0.0) {
        node = 2 * node;
      } else {
        mass -= left;
        node = 2 * node + 1;
      }
    }
    return node - leaves_;
  }

  void clear() { std::fill(nodes_.begin(), nodes_.end(), 0.0); }

 private:
  std::size_t checked(std::size_t index) const {
    SEEDRL_REQUIRE(index < capacity_, "SumTree: index ", index, " out of range [0, ", capacity_,
                   ")");
    return index;
  }

  std::size_t capacity_;
  std::size_t leaves_ = 1;
  std::vector<double> nodes_;  // nodes_[1] is the root; leaves at [leaves_, 2 * leaves_)
};

}  // namespace seedrl
