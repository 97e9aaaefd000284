#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <sstream>
#include <string>
#include <string_view>

#include "seedrl/core/error.hpp"
#include "seedrl/core/random.hpp"
#include "seedrl/core/shape.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_error {

// The reference: what str_cat promises, every argument printed by one std::ostringstream.
template <class... Args>
std::string streamed(const Args&... args) {
  std::ostringstream out;
  (out << ... << args);
  return out.str();
}

template <class... Args>
void check_like_a_stream(const Args&... args) {
  const std::string expected = streamed(args...);
  CAPTURE(expected);
  CHECK(seedrl::str_cat(args...) == expected);
}

enum Unscoped { kZero, kSeven = 7 };

TEST_CASE("str_cat: every argument as std::ostream prints it") {
  check_like_a_stream("text ", std::string("string "), std::string_view("view"));
  check_like_a_stream('c', static_cast<signed char>('s'), static_cast<unsigned char>('u'));
  check_like_a_stream(true, false);
  check_like_a_stream(0, -1, std::numeric_limits<int>::min(), std::numeric_limits<int>::max());
  check_like_a_stream(std::numeric_limits<std::int64_t>::min(),
                      std::numeric_limits<std::uint64_t>::max(), std::size_t{42},
                      static_cast<short>(-5), static_cast<unsigned short>(65535));
  check_like_a_stream(kZero, kSeven);
  check_like_a_stream(std::filesystem::path("/tmp/run dir/x.safetensors"));
  check_like_a_stream(seedrl::Shape{2, 3});
  check_like_a_stream(nullptr);
  const int value = 3;
  check_like_a_stream(static_cast<const void*>(&value));
  check_like_a_stream(std::string(""), "", std::string_view());
}

TEST_CASE("str_cat: floating point as std::ostream's default format, six digits") {
  const double cases[] = {0.0,
                          -0.0,
                          1.0,
                          0.1,
                          1.0 / 3.0,
                          2.5e-7,
                          1e15,
                          123456.0,
                          1234567,
                          -3.25e100,
                          1e-320,
                          65504.0,
                          0.95,
                          std::numeric_limits<double>::infinity(),
                          -std::numeric_limits<double>::infinity(),
                          std::numeric_limits<double>::quiet_NaN(),
                          std::numeric_limits<double>::max(),
                          std::numeric_limits<double>::min()};
  for (const double x : cases) {
    check_like_a_stream(x);
    check_like_a_stream(static_cast<float>(x));
  }
  seedrl::Rng rng(11);
  for (int i = 0; i < 2000; ++i) {
    const double x =
        (rng.uniform() - 0.5) * std::pow(10.0, static_cast<double>(rng.below(81)) - 40.0);
    check_like_a_stream(x, " ", static_cast<float>(x));
  }
}

TEST_CASE("fail and SEEDRL_REQUIRE throw seedrl::Error with the concatenated message") {
  try {
    seedrl::fail("bad setting --lr=", -0.5, " (", 3, " of ", std::size_t{4}, ')');
    FAIL("fail returned");
  } catch (const seedrl::Error& error) {
    CHECK(std::string(error.what()) == "bad setting --lr=-0.5 (3 of 4)");
  }
  const int frames = -1;
  CHECK_THROWS_WITH_AS(SEEDRL_REQUIRE(frames > 0, "--frames must be positive, got ", frames),
                       "--frames must be positive, got -1", seedrl::Error);
  CHECK_NOTHROW(SEEDRL_REQUIRE(frames < 0, "unreached"));
}

}  // namespace test_error
