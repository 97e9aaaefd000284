// safetensors files: the byte layout, round trips, and every kind of broken or hostile file.
#include <doctest/doctest.h>

#include <cstring>
#include <filesystem>

#include "seedrl/core/binary_io.hpp"
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
  CHECK(header.find(R"("__metadata__":{"frames":"42"})") != std::string::npos);
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
  // A repeated name is checked like any other entry, not replaced by the last one.
  refuse(
      make_file(
          R"({"a":{"dtype":"F64","shape":[1],"data_offsets":[0,8]},"a":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})",
          12),
      "dtype F64");
  refuse(
      make_file(R"({"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,4]}})", 4),
      "too large");
}

}  // namespace test_safetensors
