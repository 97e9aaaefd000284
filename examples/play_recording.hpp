// play's --gif: the frames of one episode (or game), drawn from observations (env/render.hpp),
// gathered into an animated GIF (io/gif.hpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

#include "seedrl/env/render.hpp"
#include "seedrl/io/gif.hpp"

namespace seedrl::examples {

/// What --gif asks for: the first episode of environment 0 (the first game), drawn by `renderer`.
struct Recording {
  std::string path;  // empty: none
  std::int64_t max_frames = 1000;
  int fps = 20;
  std::string kind;  // renderer_kind() of the environment
  std::optional<ObservationRenderer> renderer;
  io::GifAnimation animation;
  bool done = false;

  void start(const TensorSpec& spec) {
    if (path.empty()) return;
    renderer = make_renderer(kind, spec);
    animation.palette = renderer->palette;
    animation.delay_centiseconds = std::max(1, 100 / fps);
  }
  void add(const Tensor& observation) {
    if (!renderer || done) return;
    Image image = renderer->render(observation);
    animation.width = image.width;
    animation.height = image.height;
    animation.frames.push_back(std::move(image.pixels));
    done = static_cast<std::int64_t>(animation.frames.size()) >= max_frames;
  }
};

}  // namespace seedrl::examples
