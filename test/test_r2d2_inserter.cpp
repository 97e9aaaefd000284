// R2D2's concurrent insertion (R2D2AgentOptions::concurrent_insertion): the inserter thread's
// priorities are those the learner's own networks give, the replay ratio holds, a closed queue
// ends step() after everything was inserted and trained, an error in the inserter comes out of
// step(), and a learner destroyed with its queue still open does not hang. (Also run under
// ThreadSanitizer in CI.)
#include <doctest/doctest.h>

#include <thread>

#include "seedrl/agents/r2d2.hpp"
#include "seedrl/backend/cpu/backend.hpp"
#include "support/r2d2_fixtures.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_r2d2_inserter {

using namespace seedrl;
using namespace seedrl::test;
using Backend = cpu::Backend;
using R2D2Learner = Learner<R2D2Agent, Backend>;

TEST_CASE("R2D2 concurrent insertion: the priorities are those of the learner's networks") {
  R2D2AgentOptions o = tiny_options();
  o.min_replay_size = 64;  // no training: the networks stay as they are
  const R2D2Agent agent(o);
  const UnrollSpec spec = spec_for(agent, 2, 5);
  UnrollQueue queue(64);
  R2D2Learner learner(agent, spec, queue);
  for (auto& u : random_sequences(spec, 12, 21)) queue.push(std::move(u));
  queue.close();
  CHECK_FALSE(learner.step().has_value());  // everything inserted, nothing to train on yet
  CHECK(learner.inserted() == 12);
  CHECK(learner.replay().size() == 12);

  // The same sequences' priorities from the learner itself, in insertion order.
  auto reference = random_sequences(spec, 12, 21);
  const Eigen::ArrayXf expected = learner.sequence_priorities_of(reference);
  for (std::uint64_t i = 0; i < 12; ++i) {
    CAPTURE(i);
    CHECK(learner.replay().priority(i) ==
          doctest::Approx(
              std::max<double>(expected(static_cast<Eigen::Index>(i)), R2D2Learner::kMinPriority))
              .epsilon(1e-6));
  }
}

TEST_CASE("R2D2 concurrent insertion: the replay ratio holds and a closed queue drains") {
  for (const double ratio : {2.0, 0.25}) {  // above and below one sample per insert
    CAPTURE(ratio);
    R2D2AgentOptions o = tiny_options();
    o.replay_ratio = ratio;
    o.replay_capacity = 256;
    const R2D2Agent agent(o);
    const UnrollSpec spec = spec_for(agent, 2, 5);
    UnrollQueue queue(8);
    R2D2Learner learner(agent, spec, queue);
    std::thread producer([&] {
      for (int round = 0; round < 10; ++round)
        for (auto& u : random_sequences(spec, 8, static_cast<std::uint64_t>(100 + round)))
          queue.push(std::move(u));
      queue.close();
    });
    std::int64_t steps = 0;
    while (const auto stats = learner.step()) {
      ++steps;
      // Never more samples than the ratio allows for what was inserted.
      CHECK(static_cast<double>(learner.sampled()) <=
            ratio * static_cast<double>(learner.inserted()));
    }
    producer.join();
    CHECK(learner.inserted() == 80);
    // After the drain the learner has sampled all the ratio allows, to within one batch.
    CHECK(learner.sampled() == steps * o.batch_size);
    CHECK(static_cast<double>(learner.sampled()) > ratio * 80 - static_cast<double>(o.batch_size));
    CHECK(learner.steps() + learner.skipped_steps() == steps);
  }
}

TEST_CASE("R2D2 concurrent insertion: an error in the inserter comes out of step()") {
  const R2D2Agent agent(tiny_options());
  const UnrollSpec spec = spec_for(agent, 2, 5);
  const UnrollSpec other = spec_for(agent, 1, 5);  // another layout
  UnrollQueue queue(8);
  R2D2Learner learner(agent, spec, queue);
  for (auto& u : random_sequences(other, 4, 3)) queue.push(std::move(u));
  CHECK_THROWS_WITH_AS(learner.step(), doctest::Contains("does not have the learner's layout"),
                       Error);
}

TEST_CASE("R2D2 concurrent insertion: a learner destroyed with its queue open stops its thread") {
  R2D2AgentOptions o = tiny_options();
  o.min_replay_size = 8;
  const R2D2Agent agent(o);
  const UnrollSpec spec = spec_for(agent, 2, 5);
  UnrollQueue queue(16);
  {
    R2D2Learner learner(agent, spec, queue);
    for (auto& u : random_sequences(spec, 8, 9)) queue.push(std::move(u));
    REQUIRE(learner.step().has_value());  // the inserter runs, then waits for more
  }                                       // must not hang
  CHECK(queue.closed());
}

}  // namespace test_r2d2_inserter
