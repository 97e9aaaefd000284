// safetensors files: the byte layout, round trips, and every kind of broken or hostile file.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "seedrl/core/binary_io.hpp"
#include "seedrl/core/crc32c.hpp"
#include "seedrl/io/safetensors.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_safetensors {

using namespace seedrl;
using namespace seedrl::io;

namespace {

std::string header_of(const std::string& file) {
  std::uint64_t n = 0;
  std::memcpy(&n, file.data(), 8);
  return file.substr(8, n);
}

// A file with `header` as its JSON and `data_bytes` zero bytes of data.
std::string make_file(const std::string& header, std::size_t data_bytes) {
  ByteWriter w;
  w.put<std::uint64_t>(header.size());
  w.bytes(header.data(), header.size());
  w.data().append(data_bytes, '\0');
  return w.data();
}

}  // namespace

TEST_CASE("safetensors: the layout is length, JSON header, then the raw data in order") {
  const Tensor a = Tensor::from_values<float>({2, 2}, {1, 2, 3, 4});
  const Tensor b = Tensor::from_values<std::uint8_t>({3}, {7, 8, 9});
  const NamedTensor tensors[] = {{"a", a}, {"b.bytes", b}};
  const std::string file = encode_safetensors(tensors, {{"frames", "42"}});
  const std::string header = header_of(file);
  CHECK((8 + header.size()) % 8 == 0);  // data starts 8-byte aligned
  CHECK(header.find(R"("a":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]})") !=
        std::string::npos);
  CHECK(header.find(R"("b.bytes":{"dtype":"U8","shape":[3],"data_offsets":[16,19]})") !=
        std::string::npos);
  CHECK(header.find(R"("frames":"42")") != std::string::npos);
  // Each tensor's checksum is the CRC-32C of its bytes, as 8 hex digits.
  char a_crc[32];
  std::snprintf(a_crc, sizeof a_crc, R"("crc32c/a":"%08x")", crc32c(a.raw_data(), a.bytes()));
  CHECK(header.find(a_crc) != std::string::npos);
  const std::size_t data = 8 + header.size();
  CHECK(file.size() == data + 19);
  float third = 0;
  std::memcpy(&third, file.data() + data + 8, 4);
  CHECK(third == 3.0f);
  CHECK(static_cast<unsigned char>(file[data + 18]) == 9);
}

TEST_CASE("safetensors: write, read and copy back") {
  const auto path = (std::filesystem::temp_directory_path() / "seedrl_test.safetensors").string();
  const Tensor a = Tensor::from_values<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor n = Tensor::from_values<std::int32_t>({2}, {-5, 7});
  const Tensor empty = Tensor::zeros({0, 4});
  const NamedTensor tensors[] = {{"weights", a}, {"counts", n}, {"empty", empty}};
  write_safetensors(path, tensors, {{"k", "v \"quoted\""}});
  const SafetensorsFile file = SafetensorsFile::read(path);
  CHECK(file.entries().size() == 3);
  CHECK(file.metadata().at("k") == "v \"quoted\"");
  CHECK(file.tensor("weights").data<float>()[5] == 6.0f);
  CHECK(file.tensor("counts").data<std::int32_t>()[0] == -5);
  CHECK(file.tensor("empty").shape() == Shape{0, 4});
  CHECK_THROWS_WITH_AS(
      file.copy_to("weights", Tensor::zeros({3, 2})),
      doctest::Contains("tensor 'weights' is f32[2, 3] in the file but f32[3, 2] here"), Error);
  CHECK_THROWS_WITH_AS(file.tensor("nope"), doctest::Contains("no tensor named 'nope'"), Error);
  std::filesystem::remove(path);
}

TEST_CASE("safetensors: truncated, oversized and malformed files are refused with a reason") {
  const Tensor a = Tensor::from_values<float>({4}, {1, 2, 3, 4});
  const NamedTensor tensors[] = {{"a", a}};
  const std::string good = encode_safetensors(tensors);
  auto refuse = [](const std::string& bytes, const char* reason) {
    CAPTURE(reason);
    std::string message;
    try {
      SafetensorsFile::parse(bytes, "model.safetensors");
    } catch (const Error& e) {
      message = e.what();
    }
    CAPTURE(message);
    CHECK(message.find("model.safetensors") != std::string::npos);
    CHECK(message.find(reason) != std::string::npos);
  };
  refuse(good.substr(0, good.size() - 1), "outside");  // data cut short
  refuse(good.substr(0, 5), "shorter than the 8-byte header length");
  std::string huge = good;
  std::memset(huge.data(), 0xFF, 8);  // header length 2^64 - 1
  refuse(huge, "does not fit");
  refuse(make_file("not json", 0), "invalid JSON");
  refuse(make_file("[1, 2]", 0), "header: expected an object");
  refuse(make_file(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", 8), "outside");
  refuse(make_file(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,8]}})", 16),
         "holds 8 bytes but F32[4] needs 16");
  refuse(make_file(R"({"a":{"dtype":"F64","shape":[1],"data_offsets":[0,8]}})", 8), "dtype F64");
  refuse(make_file(R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,0]}})", 0),
         "non-negative integer");
  refuse(make_file(R"({"a":{"dtype":"F32","shape":[1,1,1,1,1,1,1],"data_offsets":[0,4]}})", 4),
         "rank 7");
  refuse(make_file(R"({"a":{"dtype":"F32","shape":[1]}})", 4), "lacks");
  refuse(
      make_file(
          R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
          12),
      "overlap");
  refuse(make_file(R"({"__metadata__":{"k":1}})", 0), "metadata 'k': expected a string");
  // A name twice: readers that keep the first and readers that keep the last would disagree.
  refuse(make_file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                   R"("a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                   8),
         "header holds the name 'a' twice");
  refuse(make_file(R"({"__metadata__":{"format":"seedrl.checkpoint","format":"other"}})", 0),
         "__metadata__ holds the name 'format' twice");
  refuse(
      make_file(R"({"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,4]}})", 4),
      "too large");
}

TEST_CASE("safetensors: a byte changed anywhere in a checksummed file is refused") {
  const Tensor a = Tensor::from_values<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor b = Tensor::from_values<std::uint8_t>({3}, {7, 8, 9});
  const NamedTensor tensors[] = {{"layer.weight", a}, {"counts", b}};
  const std::string good = encode_safetensors(tensors, {{"frames", "100000"}, {"agent", "vtrace"}});
  const SafetensorsFile file = SafetensorsFile::parse(good, "run/checkpoint.safetensors");
  CHECK(file.checksummed());
  const std::size_t data = 8 + header_of(good).size();
  // Every byte, changed in two ways (one bit, all bits): the length, the header's JSON (names,
  // shapes, offsets, metadata, the checksums themselves, the padding) and every tensor's data.
  int refused = 0, named_tensor = 0;
  for (std::size_t i = 0; i < good.size(); ++i) {
    for (const unsigned char mask : {0x01, 0xFF}) {
      std::string bad = good;
      bad[i] = static_cast<char>(static_cast<unsigned char>(bad[i]) ^ mask);
      std::string message;
      try {
        SafetensorsFile::parse(bad, "run/checkpoint.safetensors");
      } catch (const Error& e) {
        message = e.what();
      }
      CAPTURE(i);
      CAPTURE(int(mask));
      CHECK(message.find("run/checkpoint.safetensors") != std::string::npos);
      refused += message.empty() ? 0 : 1;
      if (i >= data) {
        // A change in the data names the tensor it hit.
        const bool in_a = i < data + a.bytes();
        CHECK(message.find(in_a ? "tensor 'layer.weight' fails its checksum"
                                : "tensor 'counts' fails its checksum") != std::string::npos);
        ++named_tensor;
      }
    }
  }
  CHECK(refused == static_cast<int>(2 * good.size()));
  CHECK(named_tensor == static_cast<int>(2 * (a.bytes() + b.bytes())));
}

TEST_CASE("safetensors: a file without checksums still reads; reserved metadata keys are refused") {
  // As other tools (and seedrl before it recorded checksums) write them.
  std::string old = make_file(
      R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"__metadata__":{"k":"v"}})", 8);
  const float values[] = {1.5f, -2.0f};
  std::memcpy(old.data() + old.size() - 8, values, 8);
  const SafetensorsFile file = SafetensorsFile::parse(old, "old.safetensors");
  CHECK_FALSE(file.checksummed());
  CHECK(file.tensor("a").data<float>()[1] == -2.0f);
  CHECK(file.first_non_finite("a") == -1);

  // One checksum removed from a checksummed file (its key renamed) is not taken for an old file.
  const Tensor a = Tensor::from_values<float>({2}, {1, 2});
  const NamedTensor tensors[] = {{"a", a}};
  std::string renamed = encode_safetensors(tensors);
  renamed.replace(renamed.find("crc32c/a"), 8, "crc32x/a");
  CHECK_THROWS_WITH_AS(SafetensorsFile::parse(renamed, "f"),
                       doctest::Contains("tensor 'a' has no checksum while the file has others"),
                       Error);
  CHECK_THROWS_WITH_AS(encode_safetensors(tensors, {{"crc32c/a", "0"}}),
                       doctest::Contains("metadata key 'crc32c/a' is reserved for checksums"),
                       Error);

  const Tensor nan = Tensor::from_values<float>({3}, {0.0f, 1.0f, std::nanf("")});
  const NamedTensor with_nan[] = {{"x", nan}};
  CHECK(SafetensorsFile::parse(encode_safetensors(with_nan), "f").first_non_finite("x") == 2);
}

}  // namespace test_safetensors
