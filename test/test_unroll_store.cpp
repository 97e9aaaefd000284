// UnrollStore: unroll contents across episode ends, overlaps, burn-in, resets.
#include <doctest/doctest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "seedrl/core/binary_io.hpp"
#include "seedrl/experience/unroll_codec.hpp"
#include "seedrl/experience/unroll_store.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_unroll_store {

using namespace seedrl;

namespace {

UnrollSpec spec(std::int64_t length, std::int64_t overlap, std::int64_t state_size = 0) {
  UnrollSpec s;
  s.observation = {{2}, DType::f32};
  s.num_actions = 3;
  s.length = length;
  s.overlap = overlap;
  s.store_behaviour = true;
  s.state_size = state_size;
  return s;
}

// The discrete actions a step points at (UnrollStep::set_action takes a view).
constexpr std::int32_t kActions[3] = {0, 1, 2};

// Step number k of a slot: observation {k, slot}, reward k / 10, action k % 3, logits {k, k, k}.
struct Stepper {
  Tensor obs = Tensor::empty({2});
  float logits[3];
  float h[2], c[2];
  UnrollStep make(int k, int slot, std::uint8_t flags) {
    obs.data<float>()[0] = static_cast<float>(k);
    obs.data<float>()[1] = static_cast<float>(slot);
    for (float& l : logits) l = static_cast<float>(k);
    h[0] = h[1] = static_cast<float>(100 + k);
    c[0] = c[1] = static_cast<float>(200 + k);
    UnrollStep s;
    s.observation = obs;
    s.reward = static_cast<float>(k) / 10.0f;
    s.flags = flags;
    s.set_action(&kActions[k % 3]);
    s.behaviour = logits;
    s.policy_version = k;
    s.state_h = h;
    s.state_c = c;
    return s;
  }
};

float obs_at(const Unroll& u, std::int64_t t) {
  return u.observations[t].data<float>()[0];
}

}  // namespace

TEST_CASE("UnrollStore: T+1 steps per unroll, consecutive unrolls share one step") {
  UnrollStore store(2, spec(4, 1, 2));  // T = 3
  Stepper s;
  std::vector<std::unique_ptr<Unroll>> done;
  for (int k = 0; k < 10; ++k) {
    const std::uint8_t flags = k == 0   ? step_flags::kFirst
                               : k == 5 ? step_flags::kTerminated
                               : k == 6 ? step_flags::kFirst
                                        : 0;
    if (auto u = store.append(1, s.make(k, 1, flags))) done.push_back(std::move(u));
  }
  // Steps 0..3, 3..6, 6..9.
  REQUIRE(done.size() == 3);
  for (std::size_t j = 0; j < done.size(); ++j) {
    const Unroll& u = *done[j];
    CHECK(u.slot == 1);
    for (std::int64_t t = 0; t < 4; ++t) {
      const int k = static_cast<int>(3 * j) + static_cast<int>(t);
      CHECK(obs_at(u, t) == static_cast<float>(k));
      CHECK(u.rewards.data<float>()[t] == doctest::Approx(k / 10.0));
      CHECK(u.actions.data<std::int32_t>()[t] == k % 3);
      CHECK(u.behaviour[t].data<float>()[2] == static_cast<float>(k));
      CHECK(u.policy_versions.data<std::int32_t>()[t] == k);
    }
    // The recurrent state before the unroll's first step.
    CHECK(u.initial_state.h.data<float>()[0] == static_cast<float>(100 + 3 * j));
    CHECK(u.initial_state.c.data<float>()[1] == static_cast<float>(200 + 3 * j));
  }
  // The episode end (step 5) and the next first step (6) sit inside the second unroll with
  // their flags; the third starts at the first step of the new episode.
  CHECK(done[1]->flags.data<std::uint8_t>()[2] == step_flags::kTerminated);
  CHECK(done[1]->flags.data<std::uint8_t>()[3] == step_flags::kFirst);
  CHECK(done[2]->flags.data<std::uint8_t>()[0] == step_flags::kFirst);
  CHECK(store.pending_steps(1) == 1);
  CHECK(store.pending_steps(0) == 0);
}

TEST_CASE("UnrollStore: burn-in unrolls overlap by burn_in + 1 steps") {
  UnrollStore store(1, spec(5, 3, 2));  // burn-in 2, T = 2
  Stepper s;
  std::vector<std::unique_ptr<Unroll>> done;
  for (int k = 0; k < 9; ++k)
    if (auto u = store.append(0, s.make(k, 0, k == 0 ? step_flags::kFirst : 0)))
      done.push_back(std::move(u));
  // Steps 0..4, 2..6, 4..8.
  REQUIRE(done.size() == 3);
  CHECK(obs_at(*done[1], 0) == 2.0f);
  CHECK(obs_at(*done[1], 4) == 6.0f);
  CHECK(obs_at(*done[2], 0) == 4.0f);
  CHECK(done[1]->initial_state.h.data<float>()[0] == 102.0f);
  CHECK(done[2]->initial_state.h.data<float>()[0] == 104.0f);
}

TEST_CASE("UnrollStore: reset drops the partial unroll of one slot only") {
  UnrollStore store(2, spec(3, 1));
  Stepper s;
  store.append(0, s.make(0, 0, step_flags::kFirst));
  store.append(0, s.make(1, 0, 0));
  store.append(1, s.make(50, 1, step_flags::kFirst));
  store.reset(0);
  CHECK(store.pending_steps(0) == 0);
  CHECK(store.pending_steps(1) == 1);
  CHECK_FALSE(store.append(0, s.make(10, 0, step_flags::kFirst)));
  CHECK_FALSE(store.append(0, s.make(11, 0, 0)));
  const auto u = store.append(0, s.make(12, 0, 0));
  REQUIRE(u);
  CHECK(obs_at(*u, 0) == 10.0f);  // nothing from before the reset
  CHECK_THROWS_WITH_AS(store.append(2, s.make(0, 2, 0)),
                       doctest::Contains("slot 2 out of range [0, 2)"), Error);
  CHECK_THROWS_AS(UnrollStore(1, spec(3, 3)), Error);
}

TEST_CASE("UnrollBatch: stacks unrolls time-major") {
  UnrollStore store(3, spec(3, 1, 2));
  Stepper s;
  std::vector<std::unique_ptr<Unroll>> done;
  for (int k = 0; k < 3; ++k)
    for (int slot = 0; slot < 3; ++slot)
      if (auto u = store.append(slot, s.make(10 * slot + k, slot, k == 0 ? step_flags::kFirst : 0)))
        done.push_back(std::move(u));
  REQUIRE(done.size() == 3);
  UnrollBatch batch;
  batch.stack(done, store.spec());
  CHECK(batch.observations.shape() == Shape{3, 3, 2});
  for (int t = 0; t < 3; ++t)
    for (int b = 0; b < 3; ++b) {
      CHECK(batch.observations[t][b].data<float>()[0] == static_cast<float>(10 * b + t));
      CHECK(batch.rewards.data<float>()[t * 3 + b] == doctest::Approx((10 * b + t) / 10.0));
      CHECK(batch.actions.data<std::int32_t>()[t * 3 + b] == (10 * b + t) % 3);
      CHECK(batch.behaviour[t][b].data<float>()[1] == static_cast<float>(10 * b + t));
    }
  CHECK(batch.flags.data<std::uint8_t>()[0 * 3 + 2] == step_flags::kFirst);
  CHECK(batch.initial_state.h[2].data<float>()[0] == 120.0f);
}

TEST_CASE("UnrollStore and UnrollBatch: box actions are D floats per step, the behaviour 2 D") {
  UnrollSpec box = spec(3, 1);
  box.num_actions = 0;
  box.action_dims = 2;
  REQUIRE(box.behaviour_size() == 4);
  UnrollStore store(2, box);
  Stepper s;
  float action[2], behaviour[4];
  std::vector<std::unique_ptr<Unroll>> done;
  for (int k = 0; k < 5; ++k) {
    for (int slot = 0; slot < 2; ++slot) {
      UnrollStep step = s.make(10 * slot + k, slot, k == 0 ? step_flags::kFirst : 0);
      action[0] = static_cast<float>(10 * slot + k) + 0.25f;
      action[1] = -action[0];
      for (int j = 0; j < 4; ++j) behaviour[j] = static_cast<float>(100 * slot + 10 * k + j);
      step.set_action(action, 2);
      step.behaviour = behaviour;
      if (auto u = store.append(slot, step)) done.push_back(std::move(u));
    }
  }
  REQUIRE(done.size() == 4);        // two per slot: steps 0-2 and 2-4
  const Unroll& second = *done[2];  // slot 0, steps 2, 3, 4
  CHECK(second.actions.shape() == Shape{3, 2});
  CHECK(second.actions.dtype() == DType::f32);
  CHECK(second.behaviour.shape() == Shape{3, 4});
  for (int t = 0; t < 3; ++t) {
    CHECK(second.actions[t].data<float>()[0] == static_cast<float>(2 + t) + 0.25f);
    CHECK(second.actions[t].data<float>()[1] == -(static_cast<float>(2 + t) + 0.25f));
    CHECK(second.behaviour[t].data<float>()[3] == static_cast<float>(10 * (2 + t) + 3));
  }
  CHECK(matches(second, box));
  CHECK_FALSE(matches(second, spec(3, 1)));
  UnrollBatch batch;
  batch.stack(std::vector<const Unroll*>{done[2].get(), done[3].get()}, box);
  CHECK(batch.actions.shape() == Shape{3, 2, 2});
  for (int t = 0; t < 3; ++t) {
    CHECK(batch.actions[t][1].data<float>()[0] == static_cast<float>(10 + 2 + t) + 0.25f);
    CHECK(batch.behaviour[t][1].data<float>()[0] == static_cast<float>(100 + 10 * (2 + t)));
  }
  UnrollStep missing = s.make(0, 0, step_flags::kFirst);
  CHECK_THROWS_WITH_AS(
      store.append(0, missing),
      doctest::Contains(
          "the step's action is 4 bytes, the spec's actions are 8 bytes a step (f32[2])"),
      Error);
}

TEST_CASE("ReplayItemCodec<Unroll>: round trip, layout check, corrupt data named") {
  UnrollStore store(1, spec(3, 1, 2));
  Stepper s;
  std::unique_ptr<Unroll> u;
  for (int k = 0; k < 3 && !u; ++k)
    u = store.append(0, s.make(k, 0, k == 0 ? step_flags::kFirst : 0));
  REQUIRE(u != nullptr);
  CHECK(matches(*u, store.spec()));
  CHECK_FALSE(matches(*u, spec(4, 1, 2)));
  CHECK_FALSE(matches(*u, spec(3, 1, 0)));

  ByteWriter w;
  ReplayItemCodec<Unroll>::write(w, *u);
  const std::string bytes = w.data();
  ByteReader r(std::span<const char>(bytes.data(), bytes.size()), "state.bin");
  const Unroll back = ReplayItemCodec<Unroll>::read(r);
  CHECK(r.remaining() == 0);
  CHECK(matches(back, store.spec()));
  CHECK(obs_at(back, 2) == 2.0f);
  CHECK(back.behaviour[1].data<float>()[2] == 1.0f);
  CHECK(back.initial_state.c.data<float>()[0] == 200.0f);

  // Every truncation is an error naming the source, never a crash.
  for (std::size_t n = 0; n < bytes.size(); n += 7) {
    ByteReader cut(std::span<const char>(bytes.data(), n), "state.bin");
    CHECK_THROWS_WITH_AS(ReplayItemCodec<Unroll>::read(cut), doctest::Contains("state.bin"), Error);
  }
  std::string bad = bytes;
  bad[0] = 9;  // unknown dtype of the observations
  ByteReader corrupt(std::span<const char>(bad.data(), bad.size()), "state.bin");
  CHECK_THROWS_WITH_AS(ReplayItemCodec<Unroll>::read(corrupt), doctest::Contains("dtype"), Error);
}

TEST_CASE("UnrollStore with a pool: given-back unrolls are refilled in place, whole") {
  // Burn-in unrolls (overlap 3 of 5 steps) with recurrent state: every field of a reused unroll,
  // overlapping rows and initial state included, must be this unroll's and not the stale one's.
  const UnrollSpec sp = spec(5, 3, 2);
  UnrollQueue queue(4);
  UnrollStore store(1, sp, &queue.pool());
  Stepper s;
  std::vector<std::unique_ptr<Unroll>> done;
  std::vector<const Unroll*> first_round;
  int k = 0;
  auto produce = [&](std::size_t count) {
    while (done.size() < count) {
      const std::uint8_t flags = k == 0 ? step_flags::kFirst : 0;
      if (auto u = store.append(0, s.make(k, 0, flags))) done.push_back(std::move(u));
      ++k;
    }
  };
  produce(3);  // steps 0..4, 2..6, 4..8
  for (const auto& u : done) first_round.push_back(u.get());
  CHECK(queue.pool().size() == 0);
  queue.pool().give(done);
  CHECK(done.empty());
  CHECK(queue.pool().size() == 3);

  produce(3);  // steps 6..10, 8..12, 10..14: two of them in given-back unrolls
  CHECK(queue.pool().size() == 0);
  int reused = 0;
  for (std::size_t j = 0; j < done.size(); ++j) {
    const Unroll& u = *done[j];
    for (const Unroll* old : first_round) reused += (&u == old) ? 1 : 0;
    const int first = 6 + 2 * static_cast<int>(j);
    for (std::int64_t t = 0; t < 5; ++t) {
      const int step = first + static_cast<int>(t);
      CHECK(obs_at(u, t) == static_cast<float>(step));
      CHECK(u.rewards.data<float>()[t] == doctest::Approx(step / 10.0));
      CHECK(u.flags.data<std::uint8_t>()[t] == 0);
      CHECK(u.actions.data<std::int32_t>()[t] == step % 3);
      CHECK(u.behaviour[t].data<float>()[1] == static_cast<float>(step));
      CHECK(u.policy_versions.data<std::int32_t>()[t] == step);
    }
    CHECK(u.initial_state.h.data<float>()[1] == static_cast<float>(100 + first));
    CHECK(u.initial_state.c.data<float>()[0] == static_cast<float>(200 + first));
  }
  // The store held one unroll under construction when the batch came back: it took two of the
  // three for the unrolls it started since, and the third is what it is filling now.
  CHECK(reused == 2);
}

TEST_CASE("UnrollPool: an unroll still viewed, or of another spec, is never refilled") {
  const UnrollSpec sp = spec(4, 1);
  UnrollPool pool(2);
  std::vector<std::unique_ptr<Unroll>> back;
  back.push_back(Unroll::allocate(sp));
  const Tensor kept_view = back[0]->observations[1];  // e.g. a consumer kept a slice
  const Unroll* viewed = back[0].get();
  pool.give(back);
  REQUIRE(pool.size() == 1);
  CHECK(pool.take(sp).get() != viewed);  // freed instead; the view still owns its buffer
  CHECK(kept_view.defined());

  back.push_back(Unroll::allocate(spec(6, 1)));  // another length
  const Unroll* other = back[0].get();
  pool.give(back);
  CHECK(pool.take(sp).get() != other);

  UnrollSpec no_logits = sp;
  no_logits.store_behaviour = false;
  back.push_back(Unroll::allocate(sp));
  pool.give(back);
  const std::unique_ptr<Unroll> u = pool.take(no_logits);
  CHECK_FALSE(u->behaviour.defined());  // a fresh one: the given-back unroll has logits
  CHECK(u->reusable_for(no_logits));
  CHECK_FALSE(u->reusable_for(sp));

  // The capacity bounds what is kept; null entries are skipped.
  for (int i = 0; i < 3; ++i) back.push_back(Unroll::allocate(sp));
  back.push_back(nullptr);
  pool.give(back);
  CHECK(back.empty());
  CHECK(pool.size() == 2);
}

TEST_CASE("UnrollQueue: popping the next batch gives the previous one back to the pool") {
  const UnrollSpec sp = spec(3, 1);
  UnrollQueue queue(4);
  for (int i = 0; i < 4; ++i) REQUIRE(queue.push(Unroll::allocate(sp)));
  std::vector<std::unique_ptr<Unroll>> batch;
  REQUIRE(queue.pop_many(2, batch));
  CHECK(queue.pool().size() == 0);
  const Unroll* first = batch[0].get();
  std::unique_ptr<Unroll> kept = std::move(batch[1]);  // a consumer that keeps one moves it out
  REQUIRE(queue.pop_available(4, batch));
  CHECK(batch.size() == 2);
  CHECK(queue.pool().size() == 1);
  CHECK(queue.pool().take(sp).get() == first);
  queue.close();
  CHECK_FALSE(queue.pop_many(1, batch));  // closed and empty; the last batch went to the pool
  CHECK(queue.pool().size() == 2);
}

TEST_CASE("ActingGate: wait() passes while open, blocks while held, close() opens it for good") {
  const UnrollSpec sp = spec(3, 1);
  UnrollQueue queue(2);
  ActingGate& gate = queue.acting();
  gate.wait();  // open: returns at once
  CHECK(gate.waits() == 0);
  gate.hold_after(1);
  REQUIRE(queue.push(Unroll::allocate(sp)));
  CHECK(gate.held());
  std::atomic<bool> passed{false};
  std::thread waiter([&] {
    gate.wait();
    passed = true;
  });
  while (gate.waits() == 0) std::this_thread::yield();  // the waiter is blocked
  CHECK_FALSE(passed.load());
  std::vector<std::unique_ptr<Unroll>> taken;
  REQUIRE(queue.pop_available(1, taken));
  gate.release();
  waiter.join();
  CHECK(passed.load());
  CHECK_FALSE(gate.held());

  // Closing the queue opens the gate, and a push after that holds nothing: a run that ends wakes
  // inference whatever the learner does.
  REQUIRE(queue.push(Unroll::allocate(sp)));
  CHECK(gate.held());
  std::thread closed_waiter([&] { gate.wait(); });
  while (gate.waits() < 2) std::this_thread::yield();
  queue.close();
  closed_waiter.join();
  CHECK_FALSE(queue.push(Unroll::allocate(sp)));
  CHECK_FALSE(gate.held());
  gate.wait();
  CHECK(gate.waits() == 2);
}

TEST_CASE(
    "ActingGate: hold_after(n): n unrolls queued hold the producers until the next is asked") {
  const UnrollSpec sp = spec(3, 1);
  UnrollQueue queue(8);
  ActingGate& gate = queue.acting();
  gate.hold_after(3);
  for (int i = 0; i < 2; ++i) REQUIRE(queue.push(Unroll::allocate(sp)));
  CHECK_FALSE(gate.held());
  REQUIRE(queue.push(Unroll::allocate(sp)));
  CHECK(gate.held());  // at once, in the pushing thread: no later step gets through
  gate.release();      // asked for with a batch queued: that batch comes first, still held
  CHECK(gate.held());
  std::vector<std::unique_ptr<Unroll>> batch;
  REQUIRE(queue.pop_many(3, batch));
  CHECK(gate.held());  // taking the batch does not open it; asking for the next does
  gate.release();
  CHECK_FALSE(gate.held());
  // What is queued counts toward the next batch, what is taken no longer does.
  for (int i = 0; i < 2; ++i) REQUIRE(queue.push(Unroll::allocate(sp)));
  CHECK_FALSE(gate.held());
  REQUIRE(queue.pop_available(1, batch));  // one taken: one queued
  REQUIRE(queue.push(Unroll::allocate(sp)));
  CHECK_FALSE(gate.held());
  REQUIRE(queue.push(Unroll::allocate(sp)));
  CHECK(gate.held());
  queue.close();
  CHECK_FALSE(gate.held());
}

}  // namespace test_unroll_store
