// BoundedQueue: blocking, closing, draining and the batch pops learners use.
#include <doctest/doctest.h>

#include <thread>
#include <vector>

#include "seedrl/experience/bounded_queue.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_bounded_queue {

using namespace seedrl;

TEST_CASE("BoundedQueue: pop_available takes what is there, up to a limit, without waiting") {
  BoundedQueue<int> queue(8);
  for (int i = 0; i < 5; ++i) CHECK(queue.push(i));
  std::vector<int> out;
  CHECK(queue.pop_available(3, out));
  CHECK(out == std::vector<int>{0, 1, 2});
  CHECK(queue.pop_available(10, out));  // only two are left: it does not wait for more
  CHECK(out == std::vector<int>{3, 4});

  // Blocks while empty, then returns what a producer pushed.
  std::thread producer([&] { queue.push(42); });
  CHECK(queue.pop_available(4, out));
  CHECK(out == std::vector<int>{42});
  producer.join();

  // After close: drains what is left, then reports the end.
  queue.push(7);
  queue.close();
  CHECK_FALSE(queue.push(8));
  CHECK(queue.pop_available(4, out));
  CHECK(out == std::vector<int>{7});
  CHECK_FALSE(queue.pop_available(4, out));
  CHECK(out.empty());
}

TEST_CASE("BoundedQueue: pop_many blocks for every item and stops at close") {
  BoundedQueue<int> queue(2);
  std::thread producer([&] {
    for (int i = 0; i < 3; ++i) queue.push(i);
    queue.close();
  });
  std::vector<int> out;
  CHECK(queue.pop_many(2, out));
  CHECK(out == std::vector<int>{0, 1});
  CHECK_FALSE(queue.pop_many(2, out));  // one item, then closed
  CHECK(out == std::vector<int>{2});
  producer.join();
}

}  // namespace test_bounded_queue
