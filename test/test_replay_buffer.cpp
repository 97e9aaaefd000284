// ReplayBuffer: sampling distribution, importance weights, FIFO eviction, stale updates,
// validation, save/restore, and a concurrent stress test (run under ThreadSanitizer in CI).
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <map>
#include <thread>
#include <vector>

#include "seedrl/replay/replay_buffer.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_replay_buffer {

using seedrl::Error;
using seedrl::ReplayBuffer;
using seedrl::ReplayOptions;

TEST_CASE("ReplayBuffer: sampling frequencies match p^alpha / sum p^alpha") {
  const double alpha = 0.7;
  ReplayBuffer<int> buffer(16, {alpha, 0.5}, 42);
  std::vector<double> p(10);
  double norm = 0.0;
  for (int i = 0; i < 10; ++i) {
    p[static_cast<std::size_t>(i)] = 0.5 + i;
    buffer.insert(i, p[static_cast<std::size_t>(i)]);
    norm += std::pow(p[static_cast<std::size_t>(i)], alpha);
  }
  std::vector<int> counts(10, 0);
  const int draws = 200000;
  for (int k = 0; k < draws / 1000; ++k) {
    const auto s = buffer.sample(1000);
    for (std::size_t j = 0; j < s.items.size(); ++j) {
      const int item = *s.items[j];
      REQUIRE(static_cast<std::uint64_t>(item) == s.indices[j]);
      ++counts[static_cast<std::size_t>(item)];
      CHECK(s.probabilities[j] ==
            doctest::Approx(std::pow(p[static_cast<std::size_t>(item)], alpha) / norm));
    }
  }
  for (int i = 0; i < 10; ++i) {
    const double expected = draws * std::pow(p[static_cast<std::size_t>(i)], alpha) / norm;
    const double sigma = std::sqrt(expected * (1.0 - expected / draws));
    CAPTURE(i);
    CHECK(std::abs(counts[static_cast<std::size_t>(i)] - expected) < 5.0 * sigma);
  }
}

TEST_CASE("ReplayBuffer: alpha = 0 samples uniformly with unit weights") {
  ReplayBuffer<int> buffer(8, {0.0, 1.0}, 1);
  for (int i = 0; i < 4; ++i) buffer.insert(i, 1.0 + 100.0 * i);
  std::vector<int> counts(4, 0);
  for (int k = 0; k < 40; ++k) {
    const auto s = buffer.sample(1000);
    for (std::size_t j = 0; j < s.items.size(); ++j) {
      ++counts[static_cast<std::size_t>(*s.items[j])];
      CHECK(s.weights[j] == doctest::Approx(1.0));
    }
  }
  for (int c : counts) CHECK(std::abs(c - 10000) < 5 * std::sqrt(10000 * 0.75));
}

TEST_CASE("ReplayBuffer: importance weights (N P(i))^-beta normalised by the batch maximum") {
  const double alpha = 1.0, beta = 0.4;
  ReplayBuffer<int> buffer(4, {alpha, beta}, 5);
  buffer.insert(0, 1.0);
  buffer.insert(1, 3.0);
  buffer.insert(2, 6.0);
  const auto s = buffer.sample(64);
  double max_w = 0.0;
  std::vector<double> raw;
  for (std::size_t j = 0; j < s.items.size(); ++j) {
    const double prob =
        std::vector<double>{1.0, 3.0, 6.0}[static_cast<std::size_t>(*s.items[j])] / 10.0;
    raw.push_back(std::pow(3.0 * prob, -beta));
    max_w = std::max(max_w, raw.back());
  }
  for (std::size_t j = 0; j < s.items.size(); ++j)
    CHECK(s.weights[j] == doctest::Approx(raw[j] / max_w));
  CHECK(*std::max_element(s.weights.begin(), s.weights.end()) == doctest::Approx(1.0));
}

TEST_CASE("ReplayBuffer: FIFO eviction; stale priority updates are ignored") {
  ReplayBuffer<std::string> buffer(3, {1.0, 1.0}, 0);
  const auto first = buffer.insert("a", 1.0);
  buffer.insert("b", 1.0);
  buffer.insert("c", 1.0);
  CHECK(buffer.size() == 3);
  const auto sampled = buffer.sample(1);
  const auto d = buffer.insert("d", 1.0);  // evicts "a", the oldest
  CHECK(buffer.size() == 3);
  CHECK(buffer.inserted() == 4);
  CHECK(buffer.priority(first) < 0.0);
  for (int k = 0; k < 50; ++k)
    for (const auto& item : buffer.sample(10).items) CHECK(*item != "a");
  // The sampled item stays readable after eviction.
  CHECK_FALSE(sampled.items[0]->empty());

  const std::vector<std::uint64_t> keys{first, d};
  const std::vector<double> priorities{50.0, 7.0};
  CHECK(buffer.update_priorities(keys, priorities) == 1);  // only d's applied; "a" was evicted
  CHECK(buffer.priority(d) == 7.0);
  CHECK(buffer.priority(first) < 0.0);
}

TEST_CASE("ReplayBuffer: zero, negative and NaN priorities are rejected with nothing changed") {
  ReplayBuffer<int> buffer(4, {}, 0);
  CHECK_THROWS_WITH_AS(buffer.insert(1, 0.0),
                       doctest::Contains("insert: priority must be finite and > 0, got 0"), Error);
  CHECK_THROWS_WITH_AS(buffer.insert(1, -1.0), doctest::Contains("priority"), Error);
  CHECK_THROWS_WITH_AS(buffer.insert(1, NAN), doctest::Contains("priority"), Error);
  CHECK_THROWS_WITH_AS(buffer.insert(1, INFINITY), doctest::Contains("priority"), Error);
  CHECK(buffer.size() == 0);
  CHECK_THROWS_WITH_AS(buffer.sample(2), doctest::Contains("the buffer is empty"), Error);
  const auto a = buffer.insert(1, 2.0);
  const auto b = buffer.insert(2, 2.0);
  const std::vector<std::uint64_t> keys{a, b};
  CHECK_THROWS_WITH_AS(buffer.update_priorities(keys, std::vector<double>{3.0, NAN}),
                       doctest::Contains("update_priorities: priority must be finite and > 0"),
                       Error);
  CHECK(buffer.priority(a) == 2.0);  // the valid first entry was not applied either
  CHECK_THROWS_WITH_AS(buffer.update_priorities(keys, std::vector<double>{3.0}),
                       doctest::Contains("2 indices but 1 priorities"), Error);
  CHECK_THROWS_WITH_AS(ReplayBuffer<int>(4, {-1.0, 0.5}),
                       doctest::Contains("ReplayOptions.priority_exponent"), Error);
  CHECK_THROWS_WITH_AS(ReplayBuffer<int>(4, {0.5, NAN}),
                       doctest::Contains("importance_sampling_exponent"), Error);
}

TEST_CASE("ReplayBuffer: save and restore with items continues exactly") {
  ReplayBuffer<std::vector<float>> original(5, {0.8, 0.5}, 9);
  for (int i = 0; i < 7; ++i)
    original.insert(std::vector<float>(static_cast<std::size_t>(i + 1), static_cast<float>(i)),
                    1.0 + i);
  const std::string state = original.save(true);

  ReplayBuffer<std::vector<float>> restored(5, {0.8, 0.5}, 123);
  restored.load(state, "memory");
  CHECK(restored.size() == 5);
  CHECK(restored.inserted() == 7);
  CHECK(restored.priority(6) == 7.0);
  CHECK(restored.priority(1) < 0.0);  // evicted before the save
  // Same generator state, same contents: the next samples are identical.
  const auto a = original.sample(20), b = restored.sample(20);
  CHECK(a.indices == b.indices);
  for (std::size_t j = 0; j < a.items.size(); ++j) CHECK(*a.items[j] == *b.items[j]);
  CHECK(original.insert({1.0f}, 1.0) == restored.insert({1.0f}, 1.0));
}

TEST_CASE("ReplayBuffer: save without items restores counters and an empty buffer") {
  ReplayBuffer<int> original(4, {}, 3);
  for (int i = 0; i < 6; ++i) original.insert(i, 1.0);
  const std::string state = original.save(false);
  CHECK(state.size() < 200);
  ReplayBuffer<int> restored(4, {}, 0);
  restored.insert(99, 1.0);
  restored.load(state, "memory");
  CHECK(restored.size() == 0);
  CHECK(restored.inserted() == 6);
  CHECK(restored.insert(7, 1.0) == 6);  // indices stay unique across the restart
}

TEST_CASE("ReplayBuffer: a corrupt, truncated or mismatched state is refused and the buffer kept") {
  ReplayBuffer<int> original(4, {}, 3);
  for (int i = 0; i < 3; ++i) original.insert(i, 1.0 + i);
  const std::string state = original.save(true);
  ReplayBuffer<int> target(4, {}, 0);
  target.insert(42, 1.0);

  std::string flipped = state;
  flipped[state.size() / 2] ^= 0x10;
  CHECK_THROWS_WITH_AS(target.load(flipped, "replay.bin"),
                       doctest::Contains("replay.bin: checksum mismatch"), Error);
  CHECK_THROWS_WITH_AS(target.load(state.substr(0, state.size() - 9), "replay.bin"),
                       doctest::Contains("replay.bin"), Error);
  CHECK_THROWS_WITH_AS(target.load("garbage", "replay.bin"),
                       doctest::Contains("not a seedrl replay state"), Error);
  ReplayBuffer<int> other_capacity(8, {}, 0);
  CHECK_THROWS_WITH_AS(other_capacity.load(state, "replay.bin"),
                       doctest::Contains("capacity 4, this buffer has capacity 8"), Error);
  CHECK(target.size() == 1);
  CHECK(*target.sample(1).items[0] == 42);
}

TEST_CASE("ReplayBuffer: save_file/load_file round trip") {
  const std::string path = "replay_buffer_test_state.bin";
  ReplayBuffer<double> a(3, {}, 1);
  a.insert(1.5, 2.0);
  a.save_file(path, true);
  ReplayBuffer<double> b(3, {}, 2);
  b.load_file(path);
  CHECK(*b.sample(1).items[0] == 1.5);
  std::remove(path.c_str());
  CHECK_THROWS_WITH_AS(b.load_file(path), doctest::Contains("cannot open"), Error);
}

TEST_CASE("ReplayBuffer: concurrent inserts, samples and updates keep every invariant") {
  // Items carry their own index, so a sample that returned the wrong item would be caught.
  ReplayBuffer<std::uint64_t> buffer(500, {0.6, 0.4}, 17);
  for (std::uint64_t i = 0; i < 50; ++i) buffer.insert(i, 1.0);
  std::atomic<std::uint64_t> inserted{50};
  std::atomic<bool> wrong{false};
  std::atomic<int> applied{0};
  auto inserter = [&] {
    for (int k = 0; k < 4000; ++k) {
      // The item value is only known after insertion; use the index reported back as a check.
      const auto index = buffer.insert(0, 1.0 + (k % 7));
      (void)index;
      inserted.fetch_add(1);
    }
  };
  auto sampler = [&](bool update) {
    seedrl::Rng rng(update ? 1 : 2);
    for (int k = 0; k < 1500; ++k) {
      const auto s = buffer.sample(16);
      for (std::size_t j = 0; j < s.items.size(); ++j) {
        if (s.weights[j] <= 0.0f || s.weights[j] > 1.0f) wrong = true;
        if (s.indices[j] < 50 && *s.items[j] != s.indices[j]) wrong = true;
      }
      if (update) {
        std::vector<double> priorities(s.indices.size());
        for (double& p : priorities) p = 0.1 + rng.uniform();
        applied += static_cast<int>(buffer.update_priorities(s.indices, priorities));
      }
      if (buffer.size() > buffer.capacity()) wrong = true;
    }
  };
  std::thread threads[] = {std::thread(inserter), std::thread(inserter), std::thread(sampler, true),
                           std::thread(sampler, false), std::thread(sampler, true)};
  for (auto& t : threads) t.join();
  CHECK_FALSE(wrong.load());
  CHECK(buffer.inserted() == inserted.load());
  CHECK(buffer.size() == 500);
  CHECK(applied.load() > 0);
}

}  // namespace test_replay_buffer
