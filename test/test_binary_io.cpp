#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "seedrl/core/atomic_file.hpp"
#include "seedrl/core/binary_io.hpp"
#include "seedrl/core/crc32c.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_binary_io {

using namespace seedrl;

TEST_CASE("crc32c: the standard check value and incremental use") {
  const std::string s = "123456789";
  CHECK(crc32c(s.data(), s.size()) == 0xE3069283u);
  CHECK(crc32c(s.data() + 4, 5, crc32c(s.data(), 4)) == 0xE3069283u);
  CHECK(crc32c(nullptr, 0) == 0u);
}

TEST_CASE(
    "ByteWriter/ByteReader: little-endian round trip; truncation is an error naming the source") {
  ByteWriter w;
  w.put<std::uint32_t>(0x01020304u);
  w.put<double>(-2.5);
  w.put<std::int8_t>(-3);
  w.blob("hello");
  CHECK(static_cast<unsigned char>(w.data()[0]) == 0x04);  // little-endian on the wire
  ByteReader r(w.data(), "test data");
  CHECK(r.get<std::uint32_t>() == 0x01020304u);
  CHECK(r.get<double>() == -2.5);
  CHECK(r.get<std::int8_t>() == -3);
  CHECK(r.blob() == "hello");
  CHECK(r.remaining() == 0);
  CHECK_THROWS_WITH_AS(r.get<std::uint16_t>(),
                       doctest::Contains("test data: unexpected end of data at byte"), Error);

  ByteWriter lying;
  lying.put<std::uint64_t>(1000);  // claims 1000 bytes
  lying.bytes("abc", 3);
  ByteReader r2(lying.data(), "frame");
  CHECK_THROWS_WITH_AS(
      r2.blob(), doctest::Contains("frame: record at byte 0 claims 1000 bytes but only 3 remain"),
      Error);
}

TEST_CASE("write_file_atomically replaces the file and leaves no temporary behind") {
  const auto dir = std::filesystem::temp_directory_path() / "seedrl_test_atomic";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "state.bin").string();
  write_file_atomically(path, "first");
  write_file_atomically(path, "second version");
  CHECK(read_file(path) == "second version");
  CHECK_FALSE(std::filesystem::exists(path + ".tmp"));
  CHECK_THROWS_WITH_AS(write_file_atomically((dir / "missing" / "x").string(), "data"),
                       doctest::Contains("cannot create"), Error);
  CHECK_THROWS_WITH_AS(read_file((dir / "nope").string()),
                       doctest::Contains("nope: cannot open for reading"), Error);
  std::filesystem::remove_all(dir);
}

}  // namespace test_binary_io
