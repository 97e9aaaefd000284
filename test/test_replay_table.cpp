// Replay tables: the uniform and FIFO samplers, the rate limiter's two rules against a brute-force
// statement of them, a ReplayTable's waiting on both sides and its saved state, and a TableFeeder
// fed from a queue. (Also run under ThreadSanitizer in CI.)
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "seedrl/experience/bounded_queue.hpp"
#include "seedrl/replay/replay_table.hpp"
#include "seedrl/replay/table_feeder.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_replay_table {

using namespace seedrl;

namespace {

ReplayTableOptions table_options(std::size_t capacity, RateLimiterOptions limiter,
                                 SamplerKind sampler = SamplerKind::prioritized) {
  ReplayTableOptions o;
  o.capacity = capacity;
  o.replay.sampler = sampler;
  o.limiter = limiter;
  o.seed = 7;
  return o;
}

}  // namespace

TEST_CASE("ReplayBuffer: the uniform sampler draws every live item equally, with unit weights") {
  ReplayOptions options;
  options.sampler = SamplerKind::uniform;
  ReplayBuffer<int> buffer(8, options, 3);
  for (int i = 0; i < 20; ++i) buffer.insert(i, 1.0 + 50.0 * i);  // priorities play no part
  std::vector<int> counts(20, 0);
  const int draws = 80000;
  for (int k = 0; k < draws / 1000; ++k) {
    const auto s = buffer.sample(1000);
    for (std::size_t j = 0; j < s.items.size(); ++j) {
      REQUIRE(static_cast<std::uint64_t>(*s.items[j]) == s.indices[j]);
      ++counts[static_cast<std::size_t>(*s.items[j])];
      CHECK(s.weights[j] == 1.0f);
      CHECK(s.probabilities[j] == doctest::Approx(1.0 / 8));
    }
  }
  // Only the live items, 12 to 19 (the buffer wrapped), each about 1/8 of the draws.
  const double expected = draws / 8.0, sigma = std::sqrt(expected * (1.0 - 1.0 / 8));
  for (int i = 0; i < 20; ++i) {
    CAPTURE(i);
    if (i < 12) {
      CHECK(counts[static_cast<std::size_t>(i)] == 0);
    } else {
      CHECK(std::abs(counts[static_cast<std::size_t>(i)] - expected) < 5.0 * sigma);
    }
  }
}

TEST_CASE("ReplayBuffer: the fifo sampler hands out each item once, oldest first") {
  ReplayOptions options;
  options.sampler = SamplerKind::fifo;
  ReplayBuffer<int> buffer(4, options, 3);
  for (int i = 0; i < 3; ++i) buffer.insert(i, 1.0);
  CHECK(buffer.can_sample(3));
  CHECK_FALSE(buffer.can_sample(4));
  const auto first = buffer.sample(2);
  CHECK(*first.items[0] == 0);
  CHECK(*first.items[1] == 1);
  CHECK(buffer.can_sample(1));
  CHECK_FALSE(buffer.can_sample(2));
  CHECK_THROWS_WITH_AS(buffer.sample(2), doctest::Contains("fifo replay that has 1 to give"),
                       Error);
  // Items evicted before they were handed out are passed over: 2 and 3 go, 4 to 7 remain.
  for (int i = 3; i < 8; ++i) buffer.insert(i, 1.0);
  CHECK(buffer.can_sample(4));
  const auto rest = buffer.sample(4);
  for (int k = 0; k < 4; ++k) CHECK(*rest.items[static_cast<std::size_t>(k)] == 4 + k);
  CHECK_FALSE(buffer.can_sample(1));
  // The cursor travels with the state.
  buffer.insert(8, 1.0);
  ReplayBuffer<int> restored(4, options, 3);
  restored.load(buffer.save(true), "state");
  CHECK(restored.can_sample(1));
  CHECK_FALSE(restored.can_sample(2));
  CHECK(*restored.sample(1).items[0] == 8);
}

TEST_CASE("RateLimiter: its two rules agree with a brute-force statement of them") {
  for (const double spi : {0.5, 1.0, 2.0, 4.0}) {
    for (const std::int64_t margin : {0, 3, 8}) {
      for (const std::int64_t free : {0, 5, 11}) {
        const RateLimiterOptions options{spi, 5, 4, margin, free};
        for (std::int64_t inserts = 0; inserts <= 30; ++inserts) {
          for (std::int64_t samples = 0; samples <= 60; samples += 3) {
            RateLimiter limiter(options);
            limiter.inserted(inserts);
            limiter.sampled(samples);
            for (const std::size_t size :
                 {std::size_t{0}, std::size_t{4}, std::size_t{5}, std::size_t{20}}) {
              CAPTURE(spi);
              CAPTURE(margin);
              CAPTURE(inserts);
              CAPTURE(samples);
              CAPTURE(size);
              CAPTURE(free);
              // Sampling 4: enough items, and 4 more samples within spi per insert past the free
              // ones.
              const bool may_sample =
                  size >= 5 && samples + 4 <= spi * static_cast<double>(inserts - free);
              CHECK(limiter.can_sample(size, 4) == may_sample);
              // Inserting: no margin, too few items, or fewer inserts than the free ones plus
              // what the next 4 samples need plus the margin.
              const bool may_insert =
                  margin == 0 || size < 5 ||
                  static_cast<double>(inserts - free) * spi <
                      static_cast<double>(samples + 4) + static_cast<double>(margin) * spi;
              CHECK(limiter.can_insert(size) == may_insert);
              // Whenever insertion stops, the next batch may be sampled: no deadlock.
              if (!may_insert) CHECK(limiter.can_sample(size, 4));
            }
          }
        }
      }
    }
  }
  CHECK_THROWS_WITH_AS(RateLimiter({0.0, 1, 1, 0}), doctest::Contains("samples_per_insert"), Error);
  CHECK_THROWS_WITH_AS(RateLimiter({1.0, 0, 1, 0}), doctest::Contains("min_size_to_sample"), Error);
}

TEST_CASE("ReplayTable: a sampler waits for inserts, an inserter for samples; close ends both") {
  ReplayTable<int> table(table_options(100, {1.0, 4, 2, 2}));
  CHECK_FALSE(table.can_sample(2));
  std::atomic<bool> sampled{false};
  std::thread sampler([&] {
    if (table.wait_to_sample(2)) {
      table.sample(2);
      sampled = true;
    }
  });
  for (int i = 0; i < 3; ++i) table.insert(i, 1.0);
  CHECK_FALSE(sampled.load());  // 3 items: below min_size_to_sample
  table.insert(3, 1.0);
  sampler.join();
  CHECK(sampled.load());
  CHECK(table.sampled() == 2);

  // Inserts run ahead until they are 2 past what the next 2 samples need: 2 + 2 + 2 = 6.
  CHECK(table.can_insert());
  table.insert(4, 1.0);
  table.insert(5, 1.0);
  CHECK_FALSE(table.can_insert());
  std::atomic<bool> inserted{false};
  std::thread inserter([&] {
    if (table.wait_to_insert()) {
      table.insert(6, 1.0);
      inserted = true;
    }
  });
  table.sample(2);  // now 4 samples: the next 2 need 6 inserts, the margin allows 8
  inserter.join();
  CHECK(inserted.load());
  CHECK(table.inserted() == 7);

  // close(): the waits end; a sampler learns whether it may still draw.
  ReplayTable<int> empty(table_options(10, {1.0, 1, 1, 0}));
  std::thread waiting([&] { CHECK_FALSE(empty.wait_to_sample(1)); });
  empty.close();
  waiting.join();
  CHECK_FALSE(empty.wait_to_insert());
  CHECK(table.counters().size == 7);
  CHECK_THROWS_WITH_AS(ReplayTable<int>(table_options(4, {1.0, 5, 1, 0})),
                       doctest::Contains("min_size_to_sample (5) must not exceed the capacity (4)"),
                       Error);
}

TEST_CASE("ReplayTable: its state, the limiter's counters included, survives save and load") {
  ReplayTable<int> table(table_options(8, {2.0, 2, 2, 0}));
  for (int i = 0; i < 6; ++i) table.insert(i, 1.0 + i);
  table.sample(4);
  const std::string state = table.save(true);

  ReplayTable<int> restored(table_options(8, {2.0, 2, 2, 0}));
  restored.load(state, "table state");
  CHECK(restored.size() == 6);
  CHECK(restored.inserted() == 6);
  CHECK(restored.sampled() == 4);
  for (std::uint64_t i = 0; i < 6; ++i) CHECK(restored.priority(i) == table.priority(i));
  CHECK(restored.can_sample(8));  // 4 + 8 samples <= 2 x 6 inserts
  CHECK_FALSE(restored.can_sample(10));

  // What seedrl saved before tables, a buffer's state alone, loads with the counters at zero.
  ReplayBuffer<int> buffer(8, {}, 1);
  buffer.insert(41, 2.0);
  ReplayTable<int> from_buffer(table_options(8, {1.0, 1, 1, 0}));
  from_buffer.load(buffer.save(true), "old replay state");
  CHECK(from_buffer.size() == 1);
  CHECK(from_buffer.inserted() == 0);

  std::string corrupt = state;
  corrupt[corrupt.size() / 2] ^= 0x20;
  CHECK_THROWS_WITH_AS(restored.load(corrupt, "table state"),
                       doctest::Contains("table state: checksum mismatch"), Error);
  CHECK(restored.size() == 6);  // unchanged
}

TEST_CASE("TableFeeder: feeds a table from a queue at the limiter's pace; its errors come out") {
  BoundedQueue<int> queue(64);
  const RateLimiterOptions limiter{1.0, 4, 4, 8};
  ReplayTable<int> table(table_options(1000, limiter));
  std::vector<int> batch;
  std::int64_t most_ahead = 0;
  TableFeeder<ReplayTable<int>> feeder(
      table,
      [&] {
        if (!queue.pop_available(4, batch)) return false;
        for (int item : batch) table.insert(item, 1.0);
        // Never further ahead than the margin past the next batch (4 samples, 8 inserts).
        most_ahead = std::max(most_ahead, table.inserted() - table.sampled());
        batch.clear();
        return true;
      },
      [&] { queue.close(); }, "test-feeder");
  feeder.start();
  std::thread producer([&] {
    for (int i = 0; i < 200; ++i) queue.push(i);
    queue.close();
  });
  std::int64_t samples = 0;
  while (table.wait_to_sample(4)) {
    feeder.rethrow_error();
    table.sample(4);
    samples += 4;
  }
  producer.join();
  feeder.stop();
  CHECK(table.inserted() == 200);
  CHECK(samples == 200);  // one sample per insert, all of them drawn once the feeder stopped
  CHECK(most_ahead <= 4 + 8 + 4);

  ReplayTable<int> failing(table_options(100, {1.0, 1, 1, 0}));
  int calls = 0;
  TableFeeder<ReplayTable<int>> broken(
      failing,
      [&]() -> bool {
        if (++calls == 3) throw std::runtime_error("the simulator crashed");
        failing.insert(calls, 1.0);
        return true;
      },
      {}, "test-feeder");
  broken.start();
  while (failing.wait_to_sample(1)) failing.sample(1);
  CHECK_THROWS_WITH_AS(broken.rethrow_error(), "the simulator crashed", std::runtime_error);
}

}  // namespace test_replay_table
