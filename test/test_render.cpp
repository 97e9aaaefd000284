// env/render: pictures drawn from observations put the cart, the pole, the ball, the paddle and
// MinAtar's objects, a board's stones and a duel where the observation says they are.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "seedrl/core/error.hpp"
#include "seedrl/env/render.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_render {

using namespace seedrl;

namespace {

std::uint8_t at(const Image& image, int x, int y) {
  return image.pixels[static_cast<std::size_t>(y * image.width + x)];
}

}  // namespace

TEST_CASE("render: CartPole's cart follows x and its pole leans with theta") {
  const TensorSpec spec{{4}, DType::f32};
  const ObservationRenderer r = make_renderer("cartpole", spec);
  constexpr std::uint8_t kBackground = 0, kCart = 2, kPole = 3;
  Tensor obs = Tensor::zeros({4});

  Image upright = r.render(obs);
  CHECK(upright.width == 300);
  CHECK(upright.height == 150);
  CHECK(upright.pixels.size() == 300u * 150u);
  CHECK(at(upright, 150, 100) == kCart);  // the cart, centred
  CHECK(at(upright, 150, 50) == kPole);   // the pole straight up
  CHECK(at(upright, 180, 50) == kBackground);

  obs.data<float>()[0] = 1.2f;  // half-way to the right edge: the cart moves 75 pixels
  const Image moved = r.render(obs);
  CHECK(at(moved, 225, 100) == kCart);
  CHECK(at(moved, 150, 100) != kCart);

  obs.data<float>()[0] = 0.0f;
  obs.data<float>()[2] = 0.5f;  // leaning right
  const Image leaning = r.render(obs);
  const int tip_x = static_cast<int>(std::lround(150 + 62.5 * 0.8 * std::sin(0.5)));
  const int tip_y = static_cast<int>(std::lround(90 - 62.5 * 0.8 * std::cos(0.5)));
  CHECK(at(leaning, tip_x, tip_y) == kPole);
  CHECK(at(leaning, 300 - tip_x, tip_y) == kBackground);  // not on the left
  CHECK(*std::max_element(leaning.pixels.begin(), leaning.pixels.end()) < r.palette.size());
}

TEST_CASE("render: Catch's ball and paddle, flattened or not") {
  for (const Shape& shape : {Shape{10, 5}, Shape{50}}) {
    const ObservationRenderer r = make_renderer("catch", {shape, DType::f32});
    Tensor obs = Tensor::zeros(shape);
    obs.data<float>()[0 * 5 + 3] = 1.0f;  // ball: row 0, column 3
    obs.data<float>()[9 * 5 + 1] = 1.0f;  // paddle: row 9, column 1
    const Image image = r.render(obs);
    CHECK(image.width == 80);
    CHECK(image.height == 160);
    CHECK(at(image, 3 * 16 + 8, 8) == 1);
    CHECK(at(image, 1 * 16 + 8, 9 * 16 + 8) == 2);
    CHECK(at(image, 2 * 16 + 8, 5 * 16 + 8) == 0);
  }
}

TEST_CASE("render: a MinAtar cell takes the colour of its highest channel") {
  for (DType dtype : {DType::u8, DType::f32}) {
    const ObservationRenderer r = make_renderer("minatar", {{10, 10, 4}, dtype});
    CHECK(r.palette.size() == 5);
    Tensor obs = Tensor::zeros({10, 10, 4}, dtype);
    auto set = [&](int row, int column, int channel) {
      const std::int64_t i = (row * 10 + column) * 4 + channel;
      if (dtype == DType::u8) {
        obs.data<std::uint8_t>()[i] = 1;
      } else {
        obs.data<float>()[i] = 1.0f;
      }
    };
    set(3, 4, 1);
    set(7, 2, 0);
    set(7, 2, 3);
    const Image image = r.render(obs);
    CHECK(image.width == 160);
    CHECK(at(image, 4 * 16 + 5, 3 * 16 + 5) == 2);
    CHECK(at(image, 2 * 16 + 5, 7 * 16 + 5) == 4);
    CHECK(at(image, 0, 0) == 0);
  }
}

TEST_CASE("render: pixels show the last stacked frame, twice the size") {
  const ObservationRenderer r = make_renderer("pixels", {{2, 3, 4}, DType::u8});
  Tensor obs = Tensor::zeros({2, 3, 4}, DType::u8);
  for (int i = 0; i < 12; ++i) {
    obs.data<std::uint8_t>()[i] = 200;                                     // frame 0
    obs.data<std::uint8_t>()[12 + i] = static_cast<std::uint8_t>(10 * i);  // frame 1, the last
  }
  const Image image = r.render(obs);
  CHECK(image.width == 8);
  CHECK(image.height == 6);
  CHECK(at(image, 2 * 3 + 1, 2 * 2) == 10 * (2 * 4 + 3));
  CHECK(r.palette[77] == io::Rgb{77, 77, 77});
}

TEST_CASE("render: a board game's stones where its planes put them, from player 0's side") {
  const ObservationRenderer r = make_renderer("board", {{2, 6, 7}, DType::f32});
  constexpr std::uint8_t kFrame = 0, kHole = 1, kRed = 2, kYellow = 3;
  Tensor obs = Tensor::zeros({2, 6, 7});
  obs.data<float>()[5 * 7 + 3] = 1.0f;       // player 0: bottom row, column 3
  obs.data<float>()[42 + 4 * 7 + 3] = 1.0f;  // player 1: on top of it
  const Image image = r.render(obs);
  CHECK(image.width == 7 * 32);
  CHECK(image.height == 6 * 32);
  CHECK(at(image, 3 * 32 + 16, 5 * 32 + 16) == kRed);
  CHECK(at(image, 3 * 32 + 16, 4 * 32 + 16) == kYellow);
  CHECK(at(image, 0 * 32 + 16, 0 * 32 + 16) == kHole);
  CHECK(at(image, 3 * 32, 5 * 32) == kFrame);  // the corner between holes
  CHECK_THROWS_WITH_AS(make_renderer("board", {{3, 3, 3}, DType::f32}),
                       doctest::Contains("'board' draws f32 [2, rows, columns]"), Error);
}

TEST_CASE("render: Standoff's guns, moves and clock as player 0's observation says") {
  const ObservationRenderer r = make_renderer("standoff", {{9}, DType::f32});
  constexpr std::uint8_t kBackground = 0, kBullets = 2, kReload = 3, kShield = 4, kShot = 5;
  Tensor obs = Tensor::zeros({9});
  float* o = obs.data<float>();
  o[0] = 1.0f;      // player 0's gun full
  o[1] = 0.0f;      // player 1's empty
  o[2] = 0.5f;      // half the steps left
  o[3 + 2] = 1.0f;  // player 0 shot
  o[6 + 0] = 1.0f;  // player 1 reloaded
  Image image = r.render(obs);
  CHECK(image.width == 240);
  CHECK(at(image, 40, 10) == kBullets);  // player 0's bar, full
  CHECK(at(image, 69, 10) == kBullets);
  CHECK(at(image, 200, 10) == kBackground);   // player 1's, empty
  CHECK(at(image, 100, 60) == kShot);         // the shot flies right, from player 0
  CHECK(at(image, 200, 64) == kReload);       // player 1 reloaded
  CHECK(at(image, 119, 117) != kBackground);  // the clock: half the width
  CHECK(at(image, 121, 117) == kBackground);
  o[3 + 2] = 0.0f;
  o[3 + 1] = 1.0f;  // player 0 blocked instead: a shield in front of it, no shot
  image = r.render(obs);
  CHECK(at(image, 52, 60) == kShield);
  CHECK(at(image, 100, 60) == kBackground);
}

TEST_CASE("render: what it cannot draw is named") {
  CHECK_THROWS_WITH_AS(make_renderer("atari", {{4}, DType::f32}),
                       doctest::Contains("unknown kind 'atari'"), Error);
  CHECK_THROWS_WITH_AS(make_renderer("cartpole", {{5}, DType::f32}),
                       doctest::Contains("'cartpole' draws f32 [4]"), Error);
  CHECK_THROWS_WITH_AS(make_renderer("pixels", {{4, 84, 84}, DType::f32}),
                       doctest::Contains("'pixels' draws u8"), Error);
  const ObservationRenderer r = make_renderer("cartpole", {{4}, DType::f32});
  CHECK_THROWS_WITH_AS(r.render(Tensor::zeros({3})), doctest::Contains("render cartpole"), Error);
  CHECK(renderer_kind("space_invaders") == "minatar");
  CHECK(renderer_kind("catch") == "catch");
  CHECK(renderer_kind("connect4") == "board");
  CHECK(renderer_kind("standoff") == "standoff");
  CHECK_THROWS_WITH_AS(renderer_kind("pong"),
                       doctest::Contains("no renderer for environment 'pong'"), Error);
}

}  // namespace test_render
