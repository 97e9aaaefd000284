#include "seedrl/env/render.hpp"

#include <algorithm>
#include <cmath>

#include "seedrl/core/error.hpp"

namespace seedrl {
namespace {

struct Canvas {
  Image image;
  Canvas(int width, int height, std::uint8_t background) {
    image.width = width;
    image.height = height;
    image.pixels.assign(static_cast<std::size_t>(width) * static_cast<std::size_t>(height),
                        background);
  }
  void fill_rect(int x0, int y0, int x1, int y1, std::uint8_t colour) {  // [x0, x1) x [y0, y1)
    x0 = std::max(x0, 0);
    y0 = std::max(y0, 0);
    x1 = std::min(x1, image.width);
    y1 = std::min(y1, image.height);
    for (int y = y0; y < y1; ++y)
      for (int x = x0; x < x1; ++x)
        image.pixels[static_cast<std::size_t>(y) * static_cast<std::size_t>(image.width) +
                     static_cast<std::size_t>(x)] = colour;
  }
  // A filled disc of `radius` pixels centred on (cx, cy).
  void disc(double cx, double cy, double radius, std::uint8_t colour) {
    const int x0 = static_cast<int>(std::floor(cx - radius)), x1 = static_cast<int>(cx + radius);
    const int y0 = static_cast<int>(std::floor(cy - radius)), y1 = static_cast<int>(cy + radius);
    for (int y = std::max(y0, 0); y <= std::min(y1, image.height - 1); ++y)
      for (int x = std::max(x0, 0); x <= std::min(x1, image.width - 1); ++x)
        if (std::hypot(x + 0.5 - cx, y + 0.5 - cy) <= radius)
          image.pixels[static_cast<std::size_t>(y) * static_cast<std::size_t>(image.width) +
                       static_cast<std::size_t>(x)] = colour;
  }
  // A line `thickness` pixels wide, as squares stamped every half pixel along it.
  void line(double x0, double y0, double x1, double y1, int thickness, std::uint8_t colour) {
    const double length = std::hypot(x1 - x0, y1 - y0);
    const int steps = std::max(1, static_cast<int>(std::ceil(2.0 * length)));
    const int half = thickness / 2;
    for (int i = 0; i <= steps; ++i) {
      const double t = static_cast<double>(i) / steps;
      const int x = static_cast<int>(std::lround(x0 + t * (x1 - x0)));
      const int y = static_cast<int>(std::lround(y0 + t * (y1 - y0)));
      fill_rect(x - half, y - half, x - half + thickness, y - half + thickness, colour);
    }
  }
};

// Element `i` of a f32 or u8 observation, as a float.
float element(const Tensor& t, std::int64_t i) {
  return t.dtype() == DType::u8 ? static_cast<float>(t.data<std::uint8_t>()[i])
                                : t.data<float>()[i];
}

[[noreturn]] void cannot_draw(std::string_view kind, const TensorSpec& spec, const char* wants) {
  throw Error(str_cat("make_renderer: '", kind, "' draws ", wants, ", not ", spec.to_string()));
}

void require_spec(const Tensor& observation, const TensorSpec& spec, std::string_view kind) {
  require_tensor(observation, spec.shape, spec.dtype, "render ", kind, ": observation");
}

constexpr int kCell = 16;  // pixels per board cell

ObservationRenderer cartpole(const TensorSpec& spec) {
  if (spec.shape != Shape{4} || spec.dtype != DType::f32)
    cannot_draw("cartpole", spec, "f32 [4] (x, x', theta, theta')");
  ObservationRenderer r;
  r.palette = {{255, 255, 255}, {0, 0, 0}, {60, 60, 60}, {204, 153, 102}, {127, 127, 204}};
  r.render = [spec](const Tensor& obs) {
    require_spec(obs, spec, "cartpole");
    constexpr int kWidth = 300, kHeight = 150, kTrack = 100;
    constexpr double kScale = kWidth / 4.8;  // the track is x in [-2.4, 2.4]
    Canvas c(kWidth, kHeight, 0);
    c.fill_rect(0, kTrack, kWidth, kTrack + 1, 1);
    const double x = kWidth / 2.0 + kScale * element(obs, 0), theta = element(obs, 2);
    const int cx = static_cast<int>(std::lround(x));
    c.fill_rect(cx - 20, kTrack - 10, cx + 20, kTrack + 10, 2);
    const double pole = kScale * 1.0;  // the pole is 1.0 long (half-length 0.5)
    c.line(x, kTrack - 10, x + pole * std::sin(theta), kTrack - 10 - pole * std::cos(theta), 6, 3);
    c.fill_rect(cx - 2, kTrack - 12, cx + 3, kTrack - 7, 4);
    return c.image;
  };
  return r;
}

ObservationRenderer catch_board(const TensorSpec& spec) {
  std::int64_t rows = 0, columns = 0;
  if (spec.shape.rank() == 2) {
    rows = spec.shape[0];
    columns = spec.shape[1];
  } else if (spec.shape == Shape{50}) {
    rows = 10;
    columns = 5;
  }
  if (rows < 1 || columns < 1 || rows > 256 || columns > 256 || spec.dtype != DType::f32)
    cannot_draw("catch", spec, "f32 [rows, columns] or the flattened 10 x 5 board [50]");
  ObservationRenderer r;
  // Background, ball, paddle (the bottom row), grid.
  r.palette = {{20, 20, 30}, {255, 160, 40}, {80, 200, 255}, {45, 45, 60}};
  r.render = [spec, rows, columns](const Tensor& obs) {
    require_spec(obs, spec, "catch");
    Canvas c(static_cast<int>(columns) * kCell, static_cast<int>(rows) * kCell, 0);
    for (std::int64_t y = 0; y < rows; ++y)
      for (std::int64_t x = 0; x < columns; ++x) {
        const int px = static_cast<int>(x) * kCell, py = static_cast<int>(y) * kCell;
        const bool set = element(obs, y * columns + x) != 0.0f;
        c.fill_rect(px, py, px + kCell, py + kCell, 3);
        c.fill_rect(px + 1, py + 1, px + kCell - 1, py + kCell - 1,
                    !set            ? 0
                    : y == rows - 1 ? 2
                                    : 1);
      }
    return c.image;
  };
  return r;
}

ObservationRenderer minatar(const TensorSpec& spec) {
  if (spec.shape.rank() != 3 || spec.shape[2] < 1 || spec.shape[2] > 255 || spec.shape[0] > 256 ||
      spec.shape[1] > 256 || (spec.dtype != DType::f32 && spec.dtype != DType::u8))
    cannot_draw("minatar", spec, "[rows, columns, channels] f32 or u8 with 1 to 255 channels");
  const std::int64_t rows = spec.shape[0], columns = spec.shape[1], channels = spec.shape[2];
  ObservationRenderer r;
  r.palette = {{0, 0, 0}};
  // Channel k takes colour k + 1: ten distinct colours, then again.
  static const io::Rgb kColours[] = {
      {255, 255, 255}, {230, 25, 75},  {60, 180, 75},  {255, 225, 25}, {0, 130, 200},
      {245, 130, 48},  {145, 30, 180}, {70, 240, 240}, {240, 50, 230}, {170, 110, 40}};
  for (std::int64_t k = 0; k < channels; ++k) r.palette.push_back(kColours[k % 10]);
  r.render = [spec, rows, columns, channels](const Tensor& obs) {
    require_spec(obs, spec, "minatar");
    Canvas c(static_cast<int>(columns) * kCell, static_cast<int>(rows) * kCell, 0);
    for (std::int64_t y = 0; y < rows; ++y)
      for (std::int64_t x = 0; x < columns; ++x) {
        std::uint8_t colour = 0;
        for (std::int64_t k = 0; k < channels; ++k)
          if (element(obs, (y * columns + x) * channels + k) != 0.0f)
            colour = static_cast<std::uint8_t>(k + 1);
        const int px = static_cast<int>(x) * kCell, py = static_cast<int>(y) * kCell;
        c.fill_rect(px, py, px + kCell, py + kCell, colour);
      }
    return c.image;
  };
  return r;
}

ObservationRenderer pixels(const TensorSpec& spec) {
  if (spec.shape.rank() != 3 || spec.dtype != DType::u8 || spec.shape[1] > 4096 ||
      spec.shape[2] > 4096)
    cannot_draw("pixels", spec, "u8 [frames, height, width]");
  ObservationRenderer r;
  for (int v = 0; v < 256; ++v) {
    const auto g = static_cast<std::uint8_t>(v);
    r.palette.push_back({g, g, g});
  }
  r.render = [spec](const Tensor& obs) {
    require_spec(obs, spec, "pixels");
    const std::int64_t frames = spec.shape[0], h = spec.shape[1], w = spec.shape[2];
    constexpr int kZoom = 2;
    Image image;
    image.width = static_cast<int>(w) * kZoom;
    image.height = static_cast<int>(h) * kZoom;
    image.pixels.resize(static_cast<std::size_t>(image.width) *
                        static_cast<std::size_t>(image.height));
    const std::uint8_t* last = obs.data<std::uint8_t>() + (frames - 1) * h * w;
    for (int y = 0; y < image.height; ++y)
      for (int x = 0; x < image.width; ++x)
        image.pixels[static_cast<std::size_t>(y) * static_cast<std::size_t>(image.width) +
                     static_cast<std::size_t>(x)] = last[(y / kZoom) * w + x / kZoom];
    return image;
  };
  return r;
}

ObservationRenderer board(const TensorSpec& spec) {
  if (spec.shape.rank() != 3 || spec.shape[0] != 2 || spec.shape[1] < 1 || spec.shape[2] < 1 ||
      spec.shape[1] > 64 || spec.shape[2] > 64 || spec.dtype != DType::f32)
    cannot_draw("board", spec, "f32 [2, rows, columns] (player 0's stones, player 1's)");
  const std::int64_t rows = spec.shape[1], columns = spec.shape[2];
  ObservationRenderer r;
  // Frame, empty hole, player 0's stone (red), player 1's (yellow).
  r.palette = {{25, 70, 170}, {235, 235, 240}, {215, 40, 40}, {245, 200, 30}};
  r.render = [spec, rows, columns](const Tensor& obs) {
    require_spec(obs, spec, "board");
    constexpr int kSquare = 2 * kCell;
    Canvas c(static_cast<int>(columns) * kSquare, static_cast<int>(rows) * kSquare, 0);
    for (std::int64_t y = 0; y < rows; ++y)
      for (std::int64_t x = 0; x < columns; ++x) {
        const std::int64_t i = y * columns + x;
        const std::uint8_t colour = element(obs, i) != 0.0f                    ? 2
                                    : element(obs, rows * columns + i) != 0.0f ? 3
                                                                               : 1;
        c.disc((static_cast<double>(x) + 0.5) * kSquare, (static_cast<double>(y) + 0.5) * kSquare,
               0.4 * kSquare, colour);
      }
    return c.image;
  };
  return r;
}

// Standoff (env/standoff.hpp) from player 0's side: f32 [9] = its bullets and the opponent's as
// fractions of a full gun, the steps left as a fraction, its last move and the opponent's one-hot
// (reload, block, shoot).
ObservationRenderer standoff(const TensorSpec& spec) {
  if (spec.shape != Shape{9} || spec.dtype != DType::f32)
    cannot_draw("standoff", spec, "f32 [9] (bullets, steps left, last moves)");
  ObservationRenderer r;
  // Background, figures, bullets, reload (green), block (grey shield), shot (red), clock.
  r.palette = {{250, 245, 230}, {40, 40, 40},  {190, 140, 40}, {50, 170, 70},
               {130, 130, 140}, {220, 30, 30}, {90, 120, 200}};
  r.render = [spec](const Tensor& obs) {
    require_spec(obs, spec, "standoff");
    constexpr int kWidth = 240, kHeight = 120, kGround = 100;
    Canvas c(kWidth, kHeight, 0);
    const auto fraction = [&](std::int64_t i) {
      return std::clamp(static_cast<double>(element(obs, i)), 0.0, 1.0);
    };
    c.fill_rect(0, kHeight - 6, static_cast<int>(std::lround(kWidth * fraction(2))), kHeight, 6);
    for (int p = 0; p < 2; ++p) {
      const int x = p == 0 ? 40 : kWidth - 40, facing = p == 0 ? 1 : -1;
      c.fill_rect(x - 6, kGround - 50, x + 6, kGround, 1);  // the body
      c.disc(x, kGround - 58, 8, 1);                        // the head
      const int bar = static_cast<int>(std::lround(60 * fraction(p)));
      c.fill_rect(x - 30, 6, x - 30 + bar, 14, 2);  // the bullets in the gun
      int move = -1;
      for (int m = 0; m < 3; ++m)
        if (element(obs, 3 + 3 * p + m) != 0.0f) move = m;
      if (move == 0) c.fill_rect(x - 4, kGround - 40, x + 4, kGround - 32, 3);
      if (move == 1)
        c.fill_rect(x + facing * 12 - 3, kGround - 62, x + facing * 12 + 3, kGround - 20, 4);
      if (move == 2) c.line(x + facing * 10, kGround - 40, x + facing * 80, kGround - 40, 3, 5);
    }
    return c.image;
  };
  return r;
}

}  // namespace

ObservationRenderer make_renderer(std::string_view kind, const TensorSpec& observation) {
  if (kind == "cartpole") return cartpole(observation);
  if (kind == "catch") return catch_board(observation);
  if (kind == "minatar") return minatar(observation);
  if (kind == "pixels") return pixels(observation);
  if (kind == "board") return board(observation);
  if (kind == "standoff") return standoff(observation);
  throw Error(str_cat("make_renderer: unknown kind '", kind,
                      "' (cartpole, catch, minatar, pixels, board or standoff)"));
}

std::string renderer_kind(std::string_view environment) {
  if (environment == "cartpole" || environment == "catch") return std::string(environment);
  for (std::string_view game : {"breakout", "freeway", "asterix", "seaquest", "space_invaders"})
    if (environment == game) return "minatar";
  if (environment == "tictactoe" || environment == "connect4") return "board";
  if (environment == "standoff") return "standoff";
  throw Error(str_cat("renderer_kind: no renderer for environment '", environment,
                      "' (cartpole, catch, a MinAtar game, tictactoe, connect4 or standoff; pixel "
                      "observations: 'pixels')"));
}

}  // namespace seedrl
