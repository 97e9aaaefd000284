#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

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
  CHECK(detail::crc32c_portable(s.data(), s.size()) == 0xE3069283u);
}

// The definition itself, one bit at a time: the reference both computations are checked against.
std::uint32_t crc32c_bitwise(const unsigned char* p, std::size_t n, std::uint32_t crc = 0) {
  crc = ~crc;
  for (std::size_t i = 0; i < n; ++i) {
    crc ^= p[i];
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
  }
  return ~crc;
}

TEST_CASE("crc32c: the table and the CPU instruction agree with the bitwise definition") {
  std::vector<unsigned char> bytes(4099);
  std::uint32_t state = 12345;
  for (unsigned char& b : bytes) {
    state = state * 1664525u + 1013904223u;
    b = static_cast<unsigned char>(state >> 24);
  }
  // Every length up to 40 (the 8-byte loops' tails) at every alignment, then long runs.
  for (std::size_t offset = 0; offset < 8; ++offset) {
    for (std::size_t n = 0; n <= 40; ++n) {
      const std::uint32_t expected = crc32c_bitwise(bytes.data() + offset, n);
      CHECK(crc32c(bytes.data() + offset, n) == expected);
      CHECK(detail::crc32c_portable(bytes.data() + offset, n) == expected);
    }
  }
  const std::uint32_t expected = crc32c_bitwise(bytes.data() + 3, 4096);
  CHECK(crc32c(bytes.data() + 3, 4096) == expected);
  CHECK(detail::crc32c_portable(bytes.data() + 3, 4096) == expected);
  // Continuing from a previous CRC is the same as one pass.
  CHECK(crc32c(bytes.data() + 1003, 3096, crc32c(bytes.data() + 3, 1000)) == expected);
  CHECK(detail::crc32c_portable(bytes.data() + 1003, 3096,
                                detail::crc32c_portable(bytes.data() + 3, 1000)) == expected);
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
