// io/gif: an animation encoded by seedrl reads back through giflib's decoder (DGifSlurp, code
// separate from its encoder) with the same size, palette, pixels, delays and loop block; bad
// animations are refused by name; write_gif replaces a file whole.
#include <doctest/doctest.h>
#include <gif_lib.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "seedrl/core/error.hpp"
#include "seedrl/io/gif.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_gif {

using namespace seedrl;
using io::GifAnimation;

namespace {

struct Source {
  const std::string* bytes;
  std::size_t offset = 0;
};

int read_from_string(GifFileType* gif, GifByteType* out, int count) {
  auto* s = static_cast<Source*>(gif->UserData);
  const std::size_t n =
      std::min<std::size_t>(static_cast<std::size_t>(count), s->bytes->size() - s->offset);
  std::memcpy(out, s->bytes->data() + s->offset, n);
  s->offset += n;
  return static_cast<int>(n);
}

GifAnimation three_frames() {
  GifAnimation a;
  a.width = 7;
  a.height = 5;
  a.palette = {{0, 0, 0}, {255, 0, 0}, {10, 200, 30}};
  for (int f = 0; f < 3; ++f) {
    std::vector<std::uint8_t> frame(35);
    for (int i = 0; i < 35; ++i)
      frame[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>((i + f) % 3);
    a.frames.push_back(frame);
  }
  a.delay_centiseconds = 7;
  return a;
}

}  // namespace

TEST_CASE("GIF: what encode_gif writes, giflib's decoder reads back exactly") {
  const GifAnimation a = three_frames();
  const std::string bytes = io::encode_gif(a);
  CHECK(bytes.substr(0, 6) == "GIF89a");

  Source source{&bytes};
  int error = 0;
  GifFileType* gif = DGifOpen(&source, read_from_string, &error);
  REQUIRE(gif != nullptr);
  REQUIRE(DGifSlurp(gif) == GIF_OK);
  CHECK(gif->SWidth == 7);
  CHECK(gif->SHeight == 5);
  REQUIRE(gif->ImageCount == 3);
  REQUIRE(gif->SColorMap != nullptr);
  CHECK(gif->SColorMap->ColorCount == 4);  // padded to a power of two
  for (int i = 0; i < 3; ++i) {
    const GifColorType c = gif->SColorMap->Colors[i];
    CHECK(io::Rgb{c.Red, c.Green, c.Blue} == a.palette[static_cast<std::size_t>(i)]);
  }
  bool loop = false;
  for (int f = 0; f < 3; ++f) {
    const SavedImage& image = gif->SavedImages[f];
    CHECK(std::memcmp(image.RasterBits, a.frames[static_cast<std::size_t>(f)].data(), 35) == 0);
    GraphicsControlBlock control{};
    REQUIRE(DGifSavedExtensionToGCB(gif, f, &control) == GIF_OK);
    CHECK(control.DelayTime == 7);
    for (int e = 0; e < image.ExtensionBlockCount; ++e) {
      const ExtensionBlock& block = image.ExtensionBlocks[e];
      if (block.Function == APPLICATION_EXT_FUNC_CODE && block.ByteCount == 11 &&
          std::memcmp(block.Bytes, "NETSCAPE2.0", 11) == 0)
        loop = true;
    }
  }
  CHECK(loop);
  DGifCloseFile(gif, &error);
}

TEST_CASE("GIF: animations it cannot encode are refused by name") {
  GifAnimation a = three_frames();
  a.frames[1][4] = 3;
  CHECK_THROWS_WITH_AS(io::encode_gif(a), doctest::Contains("frame 1 uses colour 3"), Error);
  a = three_frames();
  a.frames[2].pop_back();
  CHECK_THROWS_WITH_AS(io::encode_gif(a), doctest::Contains("frame 2 has 34 pixels"), Error);
  a = three_frames();
  a.frames.clear();
  CHECK_THROWS_WITH_AS(io::encode_gif(a), doctest::Contains("no frames"), Error);
  a = three_frames();
  a.palette.resize(257);
  CHECK_THROWS_WITH_AS(io::encode_gif(a), doctest::Contains("1 to 256 colours"), Error);
  a = three_frames();
  a.width = 0;
  CHECK_THROWS_WITH_AS(io::encode_gif(a), doctest::Contains("width and height"), Error);
}

TEST_CASE("GIF: write_gif replaces a file whole, and a refused animation leaves it as it was") {
  const auto path = std::filesystem::temp_directory_path() / "seedrl_test_gif.gif";
  io::write_gif(path.string(), three_frames());
  auto read = [&] {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  };
  const std::string before = read();
  CHECK(before == io::encode_gif(three_frames()));
  GifAnimation bad = three_frames();
  bad.frames[0][0] = 9;
  CHECK_THROWS_AS(io::write_gif(path.string(), bad), Error);
  CHECK(read() == before);
  std::filesystem::remove(path);
}

}  // namespace test_gif
