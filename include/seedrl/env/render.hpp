// Pictures of the built-in environments, drawn from their observations alone (so a host that only
// has what the agent saw can draw it too): CartPole's cart and pole, Catch's board, a MinAtar
// game's object channels, the pixel pipeline's last grayscale frame, the board games' stones and
// Standoff's duel. Frames go into an io::GifAnimation (examples/play --gif).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "seedrl/core/tensor.hpp"
#include "seedrl/core/tensor_spec.hpp"
#include "seedrl/io/gif.hpp"

namespace seedrl {

/// Palette indices, row-major.
struct Image {
  int width = 0, height = 0;
  std::vector<std::uint8_t> pixels;
};

/// Draws one kind of observation; every image has the same size and uses `palette`.
struct ObservationRenderer {
  std::vector<io::Rgb> palette;
  std::function<Image(const Tensor& observation)> render;
};

/// The renderer for `kind`: "cartpole" (observation [4]), "catch" ([rows, columns], or flattened
/// [50] for the 10 x 5 board), "minatar" ([10, 10, C] channels-last, f32 or u8; each cell takes
/// the colour of its highest set channel), "pixels" ([C, H, W] u8 stacked frames: the last
/// one), "board" (f32 [2, rows, columns] as a board game's player 0 sees it: its stones red, the
/// other's yellow) or "standoff" (f32 [9], Standoff from player 0's side: the two duellists, their
/// guns' bullets, their last moves and the steps left). Throws naming the kind and the observation
/// spec it cannot draw.
ObservationRenderer make_renderer(std::string_view kind, const TensorSpec& observation);

/// The renderer kind of a built-in environment or MinAtar game by name ("cartpole", "catch",
/// "breakout", "connect4", ...).
std::string renderer_kind(std::string_view environment);

}  // namespace seedrl
