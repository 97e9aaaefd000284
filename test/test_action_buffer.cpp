// ActionBuffer (core/action_buffer.hpp): one view for a step's actions of any kind, typed by what
// it was made from, and its check against an action spec.
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "seedrl/core/action_buffer.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_action_buffer {

using namespace seedrl;

TEST_CASE("ActionBuffer: made from i32 it is discrete, from f32 a box; the other view throws") {
  std::vector<std::int32_t> discrete(6, 0);
  std::vector<float> box(4, 0.0f);
  const ActionBuffer d = std::span<std::int32_t>(discrete);
  const ActionBuffer b = std::span<float>(box);
  CHECK(d.dtype() == DType::i32);
  CHECK(b.dtype() == DType::f32);
  d.discrete()[5] = 7;  // a view: writes land in the caller's storage
  b.box()[3] = 0.5f;
  CHECK(discrete[5] == 7);
  CHECK(box[3] == 0.5f);
  CHECK_THROWS_WITH_AS((void)d.box(), doctest::Contains("asked for box actions"), Error);
  CHECK_THROWS_WITH_AS((void)b.discrete(), doctest::Contains("asked for discrete actions"), Error);
  CHECK(ActionBuffer().empty());
}

TEST_CASE("ActionBuffer::mismatch: room and type for N environments of a spec, named when not") {
  std::vector<std::int32_t> six(6, 0);
  std::vector<float> four(4, 0.0f);
  const ActionBuffer d = std::span<std::int32_t>(six);
  const ActionBuffer b = std::span<float>(four);
  CHECK(d.mismatch(ActionSpec{3}, 6).empty());
  CHECK(d.mismatch(ActionSpec::branched({3, 2}), 3).empty());  // 3 environments x 2 branches
  CHECK(b.mismatch(ActionSpec::box(2, -1.0f, 1.0f), 2).empty());
  CHECK(d.mismatch(ActionSpec{3}, 5) ==
        "discrete actions need room for 5 values (5 environments x 1 action), got 6 discrete "
        "values");
  CHECK(d.mismatch(ActionSpec::branched({3, 2}), 2) ==
        "discrete actions need room for 4 values (2 environments x 2 branches), got 6 discrete "
        "values");
  CHECK(b.mismatch(ActionSpec{3}, 4) ==
        "discrete actions need room for 4 values (4 environments x 1 action), got 4 box values");
  CHECK(d.mismatch(ActionSpec::box(2, -1.0f, 1.0f), 3) ==
        "box actions need room for 6 values (3 environments x 2), got 6 discrete values");
}

}  // namespace test_action_buffer
