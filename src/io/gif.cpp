#include "seedrl/io/gif.hpp"

#include <gif_lib.h>

#include <cstring>
#include <memory>
#include <string>

#include "seedrl/core/atomic_file.hpp"
#include "seedrl/core/error.hpp"

namespace seedrl::io {
namespace {

int append_to_string(GifFileType* gif, const GifByteType* bytes, int count) {
  static_cast<std::string*>(gif->UserData)
      ->append(reinterpret_cast<const char*>(bytes), static_cast<std::size_t>(count));
  return count;
}

void check(int status, GifFileType* gif, const char* what) {
  SEEDRL_REQUIRE(status == GIF_OK, "encode_gif: giflib failed to ", what, ": ",
                 GifErrorString(gif->Error));
}

}  // namespace

void GifAnimation::validate(std::string_view owner) const {
  SEEDRL_REQUIRE(width >= 1 && width <= 65535 && height >= 1 && height <= 65535, owner,
                 ": width and height must be 1 to 65535, got ", width, " x ", height);
  SEEDRL_REQUIRE(!palette.empty() && palette.size() <= 256, owner,
                 ": the palette must have 1 to 256 colours, got ", palette.size());
  SEEDRL_REQUIRE(!frames.empty(), owner, ": no frames");
  SEEDRL_REQUIRE(delay_centiseconds >= 0 && delay_centiseconds <= 65535, owner,
                 ": delay_centiseconds must be 0 to 65535, got ", delay_centiseconds);
  const std::size_t pixels = static_cast<std::size_t>(width) * static_cast<std::size_t>(height);
  for (std::size_t f = 0; f < frames.size(); ++f) {
    SEEDRL_REQUIRE(frames[f].size() == pixels, owner, ": frame ", f, " has ", frames[f].size(),
                   " pixels, width x height is ", pixels);
    for (std::uint8_t index : frames[f])
      SEEDRL_REQUIRE(index < palette.size(), owner, ": frame ", f, " uses colour ",
                     static_cast<int>(index), " of a palette of ", palette.size());
  }
}

std::string encode_gif(const GifAnimation& animation) {
  animation.validate();
  std::string bytes;
  int error = 0;
  GifFileType* gif = EGifOpen(&bytes, append_to_string, &error);
  SEEDRL_REQUIRE(gif != nullptr,
                 "encode_gif: giflib could not start a file: ", GifErrorString(error));
  // Closes the file on every path (EGifCloseFile also frees the colour maps it was given).
  auto close = [](GifFileType* g) {
    int ignored = 0;
    EGifCloseFile(g, &ignored);
  };
  std::unique_ptr<GifFileType, decltype(close)> owner(gif, close);
  EGifSetGifVersion(gif, true);  // GIF89a: frame delays and looping

  // The colour table's size must be a power of two: pad with black.
  int bits = 1;
  while ((1 << bits) < static_cast<int>(animation.palette.size())) ++bits;
  ColorMapObject* colours = GifMakeMapObject(1 << bits, nullptr);
  SEEDRL_REQUIRE(colours != nullptr, "encode_gif: out of memory for the palette");
  for (int i = 0; i < (1 << bits); ++i) {
    const Rgb c = i < static_cast<int>(animation.palette.size())
                      ? animation.palette[static_cast<std::size_t>(i)]
                      : Rgb{};
    colours->Colors[i] = {c.r, c.g, c.b};
  }
  const int status = EGifPutScreenDesc(gif, animation.width, animation.height, bits, 0, colours);
  GifFreeMapObject(colours);  // EGifPutScreenDesc keeps a copy
  check(status, gif, "write the screen descriptor");

  if (animation.loop) {
    static const GifByteType kNetscape[] = "NETSCAPE2.0";
    static const GifByteType kForever[] = {1, 0, 0};
    check(EGifPutExtensionLeader(gif, APPLICATION_EXT_FUNC_CODE), gif, "start the loop block");
    check(EGifPutExtensionBlock(gif, 11, kNetscape), gif, "write the loop block");
    check(EGifPutExtensionBlock(gif, 3, kForever), gif, "write the loop count");
    check(EGifPutExtensionTrailer(gif), gif, "end the loop block");
  }
  GraphicsControlBlock control{};
  control.DisposalMode = DISPOSAL_UNSPECIFIED;
  control.UserInputFlag = false;
  control.DelayTime = animation.delay_centiseconds;
  control.TransparentColor = NO_TRANSPARENT_COLOR;
  GifByteType control_bytes[4];
  EGifGCBToExtension(&control, control_bytes);

  std::vector<GifPixelType> row(static_cast<std::size_t>(animation.width));
  for (const std::vector<std::uint8_t>& frame : animation.frames) {
    check(EGifPutExtension(gif, GRAPHICS_EXT_FUNC_CODE, 4, control_bytes), gif,
          "write a frame's delay");
    check(EGifPutImageDesc(gif, 0, 0, animation.width, animation.height, false, nullptr), gif,
          "write a frame's descriptor");
    for (int y = 0; y < animation.height; ++y) {
      std::memcpy(row.data(), frame.data() + static_cast<std::size_t>(y) * row.size(), row.size());
      check(EGifPutLine(gif, row.data(), animation.width), gif, "write a frame's pixels");
    }
  }
  int close_error = 0;
  const int closed = EGifCloseFile(owner.release(), &close_error);
  SEEDRL_REQUIRE(closed == GIF_OK,
                 "encode_gif: giflib failed to finish the file: ", GifErrorString(close_error));
  return bytes;
}

void write_gif(const std::string& path, const GifAnimation& animation) {
  write_file_atomically(path, encode_gif(animation), {}, 0644);
}

}  // namespace seedrl::io
