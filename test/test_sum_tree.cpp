#include <doctest/doctest.h>

#include <vector>

#include "seedrl/replay/sum_tree.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_sum_tree {

using seedrl::Error;
using seedrl::SumTree;

TEST_CASE("SumTree: totals and prefix search agree with a linear scan") {
  SumTree tree(13);  // not a power of two
  std::vector<double> w(13, 0.0);
  for (std::size_t i = 0; i < 13; ++i) {
    w[i] = static_cast<double>((i * 7) % 5);
    tree.set(i, w[i]);
  }
  double total = 0.0;
  for (double x : w) total += x;
  CHECK(tree.total() == doctest::Approx(total));
  for (double mass = 0.0; mass < total; mass += 0.25) {
    std::size_t expected = 0;
    double prefix = 0.0;
    while (prefix + w[expected] <= mass) prefix += w[expected++];
    CHECK(tree.find(mass) == expected);
    CHECK(w[tree.find(mass)] > 0.0);
  }
  tree.set(3, 0.0);
  CHECK(tree.get(3) == 0.0);
  CHECK(tree.total() == doctest::Approx(total - w[3]));
}

TEST_CASE("SumTree: rounding past the total never lands on an empty leaf") {
  SumTree tree(8);
  tree.set(2, 1.0);
  tree.set(5, 2.0);
  CHECK(tree.find(3.0) == 5);
  CHECK(tree.find(3.5) == 5);
  CHECK(tree.find(0.0) == 2);
}

TEST_CASE("SumTree: invalid use is an error") {
  SumTree tree(4);
  CHECK_THROWS_WITH_AS(tree.find(0.0), doctest::Contains("empty tree"), Error);
  CHECK_THROWS_WITH_AS(tree.set(4, 1.0), doctest::Contains("index 4 out of range [0, 4)"), Error);
  CHECK_THROWS_WITH_AS(tree.set(0, -1.0), doctest::Contains("finite and >= 0"), Error);
  CHECK_THROWS_AS(SumTree(0), Error);
}

}  // namespace test_sum_tree
