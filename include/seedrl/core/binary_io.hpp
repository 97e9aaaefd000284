// Little-endian binary encoding for seedrl's files and wire formats.
//
// ByteWriter appends fixed-width little-endian fields to a byte string. ByteReader reads them
// back from a span and throws seedrl::Error, naming its source and the byte offset, when the data
// end too early: a truncated file or frame never becomes undefined behaviour.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

#include "seedrl/core/error.hpp"

namespace seedrl {

namespace detail {
template <class T>
T to_little_endian(T value) {
  if constexpr (std::endian::native == std::endian::big && sizeof(T) > 1) {
    unsigned char bytes[sizeof(T)];
    std::memcpy(bytes, &value, sizeof(T));
    for (std::size_t i = 0; i < sizeof(T) / 2; ++i) std::swap(bytes[i], bytes[sizeof(T) - 1 - i]);
    std::memcpy(&value, bytes, sizeof(T));
  }
  return value;
}
}  // namespace detail

class ByteWriter {
 public:
  /// Appends an arithmetic value in little-endian byte order.
  template <class T>
  requires std::is_arithmetic_v<T>
  void put(T value) {
    value = detail::to_little_endian(value);
    bytes(&value, sizeof(T));
  }
  void bytes(const void* data, std::size_t size) {
    buffer_.append(static_cast<const char*>(data), size);
  }
  /// A length (u64) followed by the bytes.
  void blob(std::string_view data) {
    put<std::uint64_t>(data.size());
    bytes(data.data(), data.size());
  }
  const std::string& data() const { return buffer_; }
  std::string& data() { return buffer_; }

 private:
  std::string buffer_;
};

class ByteReader {
 public:
  /// `source` names the data in error messages (a file path, "frame from 10.0.0.2", ...).
  ByteReader(std::span<const char> data, std::string source)
      : data_(data), source_(std::move(source)) {}

  template <class T>
  requires std::is_arithmetic_v<T> T get() {
    T value;
    std::memcpy(&value, take(sizeof(T)), sizeof(T));
    return detail::to_little_endian(value);
  }
  void bytes(void* out, std::size_t size) { std::memcpy(out, take(size), size); }
  std::string_view blob() {
    const auto size = get<std::uint64_t>();
    SEEDRL_REQUIRE(size <= remaining(), source_, ": record at byte ", offset_ - 8, " claims ", size,
                   " bytes but only ", remaining(), " remain (truncated or corrupt)");
    const char* p = take(static_cast<std::size_t>(size));
    return {p, static_cast<std::size_t>(size)};
  }
  std::size_t remaining() const { return data_.size() - offset_; }
  std::size_t offset() const { return offset_; }
  const std::string& source() const { return source_; }

 private:
  const char* take(std::size_t size) {
    SEEDRL_REQUIRE(size <= remaining(), source_, ": unexpected end of data at byte ", offset_,
                   " (needed ", size, " more bytes, ", remaining(), " left): truncated or corrupt");
    const char* p = data_.data() + offset_;
    offset_ += size;
    return p;
  }

  std::span<const char> data_;
  std::size_t offset_ = 0;
  std::string source_;
};

/// The whole content of a file; throws seedrl::Error naming the path when it cannot be read.
inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  SEEDRL_REQUIRE(in.good(), path, ": cannot open for reading");
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  SEEDRL_REQUIRE(!in.bad(), path, ": read error");
  return data;
}

}  // namespace seedrl
