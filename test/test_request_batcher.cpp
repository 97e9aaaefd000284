// RequestBatcher: when batches are served, what a failing batch and a stop answer, and that
// every request is answered exactly once. (Also run under ThreadSanitizer in CI.)
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "seedrl/inference/request_batcher.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_request_batcher {

using namespace seedrl;
using namespace std::chrono_literals;

namespace {

// A request that records its answer and lets a test wait for it.
struct Probe {
  explicit Probe(std::int32_t envs, std::uint64_t connection_id = 1, bool evaluation = false)
      : actions(static_cast<std::size_t>(envs), -1) {
    request.connection = Connection{0, envs, 1, evaluation, connection_id};
    request.actions = std::span<std::int32_t>(actions);
    request.on_complete = [this](const Status& answer) {
      std::lock_guard lock(mutex);
      ++answers;
      status = answer;
      done.notify_all();
    };
  }
  Status wait() {
    std::unique_lock lock(mutex);
    done.wait(lock, [&] { return answers > 0; });
    return status;
  }
  std::vector<std::int32_t> actions;
  StepRequest request;
  std::mutex mutex;
  std::condition_variable done;
  int answers = 0;
  Status status;
};

// Answers every environment with action = its position in the batch.
RequestBatcher::Process numbering(std::vector<std::int64_t>* batch_frames) {
  return
      [batch_frames](std::span<StepRequest* const> batch, std::int64_t frames, std::span<Status>) {
        std::int32_t next = 0;
        for (StepRequest* r : batch)
          for (std::int32_t& a : r->actions.discrete()) a = next++;
        CHECK(next == frames);
        batch_frames->push_back(frames);
      };
}

}  // namespace

// No test here asserts on elapsed time: a batch that should be served at once is given a timeout
// of an hour (were it to wait for it, the test's own CTest timeout would fail it), and waiting is
// shown by what was batched together.

TEST_CASE("RequestBatcher: a full batch is served at once, in arrival order") {
  std::vector<std::int64_t> frames;
  RequestBatcher batcher(4, 1h, numbering(&frames));
  batcher.set_connected_frames(100);
  batcher.start();
  Probe a(2), b(2);
  batcher.submit(a.request);
  batcher.submit(b.request);
  CHECK(a.wait().is_ok());
  CHECK(b.wait().is_ok());
  batcher.stop(Status::closed("done"));
  CHECK(frames == std::vector<std::int64_t>{4});
  CHECK(a.actions == std::vector<std::int32_t>{0, 1});
  CHECK(b.actions == std::vector<std::int32_t>{2, 3});
  CHECK(batcher.stats().timeouts == 0);
}

TEST_CASE(
    "RequestBatcher: a partial batch waits until every connected environment waits, or the "
    "timeout") {
  std::vector<std::int64_t> frames;
  {
    // a waits for b: they are served in one batch of 6, the connected environments.
    RequestBatcher batcher(8, 1h, numbering(&frames));
    batcher.set_connected_frames(6);
    batcher.start();
    Probe a(2), b(4);
    batcher.submit(a.request);
    batcher.submit(b.request);
    CHECK(a.wait().is_ok());
    CHECK(b.wait().is_ok());
    CHECK(frames == std::vector<std::int64_t>{6});
    CHECK(b.actions == std::vector<std::int32_t>{2, 3, 4, 5});

    // Everything that is connected is waiting: no reason to wait any longer.
    batcher.set_connected_frames(2);
    Probe c(2);
    batcher.submit(c.request);
    CHECK(c.wait().is_ok());
    batcher.stop(Status::closed("done"));
    CHECK(frames == std::vector<std::int64_t>{6, 2});
    CHECK(batcher.stats().timeouts == 2);  // neither batch was full (8)
  }
  {
    // Nobody else comes: the timeout serves the partial batch.
    frames.clear();
    RequestBatcher batcher(8, 20ms, numbering(&frames));
    batcher.set_connected_frames(6);
    batcher.start();
    Probe a(2);
    batcher.submit(a.request);
    CHECK(a.wait().is_ok());
    batcher.stop(Status::closed("done"));
    const BatcherStats stats = batcher.stats();
    CHECK(frames == std::vector<std::int64_t>{2});
    CHECK(stats.batches == 1);
    CHECK(stats.timeouts == 1);
    CHECK(stats.mean_batch_size() == doctest::Approx(2.0));
  }
}

TEST_CASE("RequestBatcher: evaluation requests ride along but are never waited for") {
  std::vector<std::int64_t> frames;
  RequestBatcher batcher(8, 1h, numbering(&frames));
  batcher.set_connected_frames(4);  // training environments; an evaluating actor has 4 more
  batcher.start();
  // As many evaluation environments as training ones are not "every training environment
  // waiting": the request waits for the training ones and goes with them.
  Probe eval(4, 1, /*evaluation=*/true), a(4, 2);
  batcher.submit(eval.request);
  std::this_thread::sleep_for(20ms);  // time to serve it alone, were it counted (not a deadline)
  batcher.submit(a.request);
  CHECK(eval.wait().is_ok());
  CHECK(a.wait().is_ok());
  CHECK(frames == std::vector<std::int64_t>{8});
  CHECK(eval.actions == std::vector<std::int32_t>{0, 1, 2, 3});
  // Every training environment waits: served at once, the evaluating actor not waited for (with
  // it counted, this would wait for the hour).
  Probe b(4, 2);
  batcher.submit(b.request);
  CHECK(b.wait().is_ok());
  CHECK(frames == std::vector<std::int64_t>{8, 4});
  // Only evaluation connected: served at once.
  batcher.set_connected_frames(0);
  Probe eval2(2, 1, /*evaluation=*/true);
  batcher.submit(eval2.request);
  CHECK(eval2.wait().is_ok());
  batcher.stop(Status::closed("done"));
  CHECK(frames == std::vector<std::int64_t>{8, 4, 2});
}

TEST_CASE("RequestBatcher: a batch never exceeds max_batch frames; a larger request goes alone") {
  std::vector<std::int64_t> frames;
  RequestBatcher batcher(4, 20ms, numbering(&frames));
  batcher.set_connected_frames(100);
  Probe a(3), b(3), c(6);
  batcher.submit(a.request);  // queued before the thread starts: one ready decision for all
  batcher.submit(b.request);
  batcher.submit(c.request);
  batcher.start();
  CHECK(a.wait().is_ok());
  CHECK(b.wait().is_ok());
  CHECK(c.wait().is_ok());
  batcher.stop(Status::closed("done"));
  CHECK(frames == std::vector<std::int64_t>{3, 3, 6});
}

TEST_CASE("RequestBatcher: a throwing batch answers its requests with internal and keeps serving") {
  std::atomic<int> calls{0};
  RequestBatcher batcher(1, 1ms,
                         [&](std::span<StepRequest* const> batch, std::int64_t, std::span<Status>) {
                           if (calls++ == 0) throw std::runtime_error("broken invariant");
                           for (StepRequest* r : batch) r->actions.discrete()[0] = 7;
                         });
  batcher.set_connected_frames(1);
  batcher.start();
  Probe a(1), b(1);
  batcher.submit(a.request);
  const Status failed = a.wait();
  CHECK(failed.code() == Status::Code::internal);
  CHECK(failed.message().find("broken invariant") != std::string::npos);
  batcher.submit(b.request);
  CHECK(b.wait().is_ok());
  CHECK(b.actions[0] == 7);
}

TEST_CASE("RequestBatcher: a failure that belongs to one request answers it alone") {
  RequestBatcher batcher(
      3, 1h, [&](std::span<StepRequest* const> batch, std::int64_t, std::span<Status> outcomes) {
        REQUIRE(batch.size() == 3);
        for (StepRequest* r : batch) r->actions.discrete()[0] = 5;
        outcomes[1] = Status::internal("this request's opponent set cannot act");
      });
  batcher.set_connected_frames(3);
  batcher.start();
  Probe a(1), b(1), c(1);
  batcher.submit(a.request);
  batcher.submit(b.request);
  batcher.submit(c.request);
  CHECK(a.wait().is_ok());
  CHECK(c.wait().is_ok());
  CHECK(a.actions[0] == 5);
  const Status failed = b.wait();
  CHECK(failed.code() == Status::Code::internal);
  CHECK(failed.message() == "this request's opponent set cannot act");
}

TEST_CASE("RequestBatcher: stop answers waiting and later requests exactly once with its status") {
  std::vector<std::int64_t> frames;
  RequestBatcher batcher(8, 60s, numbering(&frames));
  batcher.set_connected_frames(100);
  batcher.start();
  Probe waiting(1);
  batcher.submit(waiting.request);
  batcher.stop(Status::closed("server stops"));
  CHECK(waiting.wait().is_closed());
  CHECK(waiting.status.message() == "server stops");
  Probe late(1);
  batcher.submit(late.request);
  CHECK(late.wait().is_closed());
  batcher.stop(Status::unavailable("second stop keeps the first status"));
  Probe later(1);
  batcher.submit(later.request);
  CHECK(later.wait().is_closed());
  CHECK(waiting.answers == 1);
  CHECK(late.answers == 1);
  CHECK(frames.empty());
}

TEST_CASE("RequestBatcher: many threads, every request answered exactly once") {
  std::atomic<std::int64_t> served{0};
  RequestBatcher batcher(
      16, 500us, [&](std::span<StepRequest* const> batch, std::int64_t frames, std::span<Status>) {
        for (StepRequest* r : batch)
          for (std::int32_t& a : r->actions.discrete())
            a = static_cast<std::int32_t>(r->connection.id);
        served += frames;
      });
  constexpr int kThreads = 6, kSteps = 300;
  batcher.set_connected_frames(kThreads * 2);
  batcher.start();
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kSteps; ++i) {
        Probe p(2, static_cast<std::uint64_t>(t + 1));
        batcher.submit(p.request);
        if (!p.wait().is_ok() || p.actions[0] != t + 1 || p.actions[1] != t + 1) ++wrong;
        std::lock_guard lock(p.mutex);  // on_complete has returned before p goes away
        if (p.answers != 1) ++wrong;
      }
    });
  }
  for (auto& th : threads) th.join();
  batcher.stop(Status::closed("done"));
  CHECK(wrong == 0);
  CHECK(served == kThreads * kSteps * 2);
  CHECK(batcher.stats().frames == served);
}

}  // namespace test_request_batcher
