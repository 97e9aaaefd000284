// SlotTable: slot ranges per connection, ids the table issues, and what a stale or forged
// connection may do (nothing).
#include <doctest/doctest.h>

#include "seedrl/inference/slot_table.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_slot_table {

using namespace seedrl;

namespace {

ConnectRequest wanting(std::int32_t envs, std::int32_t first_slot = -1, bool evaluation = false) {
  ConnectRequest r;
  r.run_id = 42;
  r.num_envs = envs;
  r.first_slot = first_slot;
  r.evaluation = evaluation;
  return r;
}

}  // namespace

TEST_CASE("SlotTable: fixed and free ranges, slots in use, a full table") {
  SlotTable table(6);
  Connection a, b, c;
  REQUIRE(table.connect(wanting(2, 1), &a).is_ok());
  CHECK(a.first_slot == 1);
  CHECK(a.num_envs == 2);
  CHECK(a.run_id == 42);
  CHECK(a.id != 0);
  CHECK(table.connect(wanting(2, 2), &b).is_invalid_argument());  // slot 2 is a's
  CHECK(table.connect(wanting(2, 5), &b).is_invalid_argument());  // past max_slots
  REQUIRE(table.connect(wanting(3), &b).is_ok());                 // the first free run of 3
  CHECK(b.first_slot == 3);
  CHECK(b.id != a.id);
  CHECK(table.occupied() == 5);
  CHECK(table.connect(wanting(2), &c).is_unavailable());  // only slot 0 is free
  REQUIRE(table.connect(wanting(1), &c).is_ok());
  CHECK(c.first_slot == 0);
}

TEST_CASE("SlotTable: only the connection that holds the slots may use or free them") {
  SlotTable table(4);
  Connection a, b;
  REQUIRE(table.connect(wanting(2, 0), &a).is_ok());
  CHECK(table.owns(a));
  Connection forged = a;
  forged.id += 100;
  CHECK_FALSE(table.owns(forged));
  CHECK(table.disconnect(forged) == 0);  // frees nothing
  Connection wider = a;
  wider.num_envs = 3;
  CHECK_FALSE(table.owns(wider));  // slot 2 is not a's
  CHECK_FALSE(table.owns(Connection{}));

  CHECK(table.disconnect(a) == 2);
  CHECK(table.occupied() == 0);
  CHECK_FALSE(table.owns(a));  // stale after disconnect
  REQUIRE(table.connect(wanting(2, 0), &b).is_ok());
  CHECK(b.id != a.id);  // ids are never reused: a stale receipt never matches again
  CHECK_FALSE(table.owns(a));
  CHECK(table.disconnect(a) == 0);
  CHECK(table.owns(b));
}

TEST_CASE("SlotTable: evaluation slots are counted apart, and their mark cannot be changed") {
  SlotTable table(8);
  Connection train, eval;
  REQUIRE(table.connect(wanting(3), &train).is_ok());
  REQUIRE(table.connect(wanting(2, -1, /*evaluation=*/true), &eval).is_ok());
  CHECK(eval.evaluation);
  CHECK(table.occupied() == 5);
  CHECK(table.training_occupied() == 3);
  CHECK(table.owns(eval));
  Connection flipped = eval;  // an evaluation actor's steps presented as training: refused
  flipped.evaluation = false;
  CHECK_FALSE(table.owns(flipped));
  flipped = train;
  flipped.evaluation = true;
  CHECK_FALSE(table.owns(flipped));
  CHECK(table.disconnect(eval) == 2);
  CHECK(table.training_occupied() == 3);
  CHECK(table.occupied() == 3);
  CHECK(table.disconnect(train) == 3);
  CHECK(table.training_occupied() == 0);
  // A slot freed by an evaluation connection serves training afterwards.
  Connection again;
  REQUIRE(table.connect(wanting(5, 3), &again).is_ok());
  CHECK(table.training_occupied() == 5);
  CHECK(table.owns(again));
}

}  // namespace test_slot_table
