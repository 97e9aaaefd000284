// TensorBoard event files, read back with an independent decoder: a bit-by-bit CRC-32C and a
// minimal protocol-buffer reader.
#include <doctest/doctest.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "seedrl/core/binary_io.hpp"
#include "seedrl/io/tensorboard.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_tensorboard {

using namespace seedrl;

namespace {

std::uint32_t crc32c_bitwise(const std::string& data) {
  std::uint32_t crc = 0xFFFFFFFFu;
  for (unsigned char byte : data) {
    crc ^= byte;
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
  }
  return ~crc;
}
std::uint32_t masked(const std::string& data) {
  const std::uint32_t crc = crc32c_bitwise(data);
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

std::vector<std::string> read_records(const std::string& file) {
  std::vector<std::string> records;
  std::size_t pos = 0;
  while (pos < file.size()) {
    REQUIRE(pos + 12 <= file.size());
    const std::string length_bytes = file.substr(pos, 8);
    std::uint64_t length = 0;
    std::memcpy(&length, length_bytes.data(), 8);
    std::uint32_t length_crc = 0, data_crc = 0;
    std::memcpy(&length_crc, file.data() + pos + 8, 4);
    REQUIRE(length_crc == masked(length_bytes));
    const std::string data = file.substr(pos + 12, length);
    std::memcpy(&data_crc, file.data() + pos + 12 + length, 4);
    REQUIRE(data_crc == masked(data));
    records.push_back(data);
    pos += 12 + length + 4;
  }
  return records;
}

// Fields of one protobuf message: field number -> raw bytes (varints decoded into 8 bytes).
std::multimap<int, std::string> fields(const std::string& message) {
  std::multimap<int, std::string> out;
  std::size_t pos = 0;
  auto varint = [&] {
    std::uint64_t v = 0;
    for (int shift = 0;; shift += 7) {
      const auto byte = static_cast<unsigned char>(message.at(pos++));
      v |= static_cast<std::uint64_t>(byte & 0x7F) << shift;
      if (!(byte & 0x80)) return v;
    }
  };
  while (pos < message.size()) {
    const std::uint64_t key = varint();
    const int field = static_cast<int>(key >> 3), type = static_cast<int>(key & 7);
    std::string value;
    if (type == 0) {
      const std::uint64_t v = varint();
      value.assign(reinterpret_cast<const char*>(&v), 8);
    } else if (type == 1 || type == 5) {
      const std::size_t n = type == 1 ? 8 : 4;
      value = message.substr(pos, n);
      pos += n;
    } else {
      REQUIRE(type == 2);
      const std::uint64_t n = varint();
      value = message.substr(pos, n);
      pos += n;
    }
    out.emplace(field, value);
  }
  return out;
}

}  // namespace

TEST_CASE("TensorBoardWriter: TFRecord framing and Event/Summary encoding") {
  const auto dir = std::filesystem::temp_directory_path() / "seedrl_test_tb";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::string path;
  {
    io::TensorBoardWriter writer(dir.string());
    path = writer.path();
    writer.scalar("mean_return", 12.5f, 1000);
    writer.scalar("loss/total", -0.25f, 300000000000LL);
  }
  CHECK(std::filesystem::path(path).filename().string().rfind("events.out.tfevents.", 0) == 0);
  const std::vector<std::string> records = read_records(read_file(path));
  REQUIRE(records.size() == 3);

  const auto first = fields(records[0]);
  CHECK(first.find(3)->second == "brain.Event:2");
  double wall_time = 0;
  std::memcpy(&wall_time, first.find(1)->second.data(), 8);
  CHECK(wall_time > 1.6e9);

  auto check_scalar = [](const std::string& record, const char* tag, float value,
                         std::int64_t step) {
    const auto event = fields(record);
    std::int64_t got_step = 0;
    std::memcpy(&got_step, event.find(2)->second.data(), 8);
    CHECK(got_step == step);
    const auto summary = fields(event.find(5)->second);
    const auto v = fields(summary.find(1)->second);
    CHECK(v.find(1)->second == tag);
    float got = 0;
    std::memcpy(&got, v.find(2)->second.data(), 4);
    CHECK(got == value);
  };
  check_scalar(records[1], "mean_return", 12.5f, 1000);
  check_scalar(records[2], "loss/total", -0.25f, 300000000000LL);
  std::filesystem::remove_all(dir);
}

}  // namespace test_tensorboard
