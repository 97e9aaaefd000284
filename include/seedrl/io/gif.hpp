// Animated GIF files, for watching an agent play (examples/play --gif). Encoded with giflib
// (Debian's libgif-dev), the maintained GIF library: its LZW coder and file layout are well
// tested and it is one small C library, so seedrl keeps no image code of its own.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace seedrl::io {

struct Rgb {
  std::uint8_t r = 0, g = 0, b = 0;
  friend bool operator==(const Rgb&, const Rgb&) = default;
};

/// Frames of palette indices, all `width` x `height`, row-major, sharing one palette.
struct GifAnimation {
  int width = 0, height = 0;
  std::vector<Rgb> palette;                       ///< 1 to 256 colours
  std::vector<std::vector<std::uint8_t>> frames;  ///< width * height indices into palette each
  int delay_centiseconds = 5;                     ///< per frame (GIF's unit; 5: 20 frames/s)
  bool loop = true;                               ///< play again and again (NETSCAPE2.0)

  /// Throws naming what is wrong (sizes, an index past the palette, no frames).
  void validate(std::string_view owner = "GifAnimation") const;
};

/// The bytes of a GIF89a file holding `animation`.
std::string encode_gif(const GifAnimation& animation);

/// encode_gif() written to `path` atomically (temporary file, flush, rename): an existing file
/// is replaced whole or not at all.
void write_gif(const std::string& path, const GifAnimation& animation);

}  // namespace seedrl::io
