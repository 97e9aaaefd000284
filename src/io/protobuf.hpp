// Protocol-buffer wire format, the writing half: what seedrl needs to emit TensorBoard event
// records and ONNX models without linking protobuf. A message is built into a std::string; a
// nested message is encoded on its own and added as a length-delimited field.
//
// Private to src/ (and the tests).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "seedrl/core/binary_io.hpp"

namespace seedrl::io::proto {

enum class WireType : int { varint = 0, fixed64 = 1, bytes = 2, fixed32 = 5 };

inline void put_varint(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

inline void put_tag(std::string& out, int field, WireType type) {
  put_varint(out, static_cast<std::uint64_t>(field) << 3 | static_cast<std::uint64_t>(type));
}

/// A little-endian fixed-size value, without a tag.
template <class T>
void put_fixed(std::string& out, T value) {
  value = detail::to_little_endian(value);
  out.append(reinterpret_cast<const char*>(&value), sizeof(T));
}

/// Builds one message field by field.
class Message {
 public:
  /// An integer field (int32, int64, uint64, enum, bool): negative values take ten bytes, as
  /// protobuf encodes them.
  Message& integer(int field, std::int64_t value) {
    put_tag(bytes_, field, WireType::varint);
    put_varint(bytes_, static_cast<std::uint64_t>(value));
    return *this;
  }
  Message& float32(int field, float value) {
    put_tag(bytes_, field, WireType::fixed32);
    put_fixed<float>(bytes_, value);
    return *this;
  }
  Message& float64(int field, double value) {
    put_tag(bytes_, field, WireType::fixed64);
    put_fixed<double>(bytes_, value);
    return *this;
  }
  /// A string, bytes or an encoded nested message.
  Message& bytes(int field, std::string_view value) {
    put_tag(bytes_, field, WireType::bytes);
    put_varint(bytes_, value.size());
    bytes_.append(value);
    return *this;
  }
  Message& message(int field, const Message& nested) { return bytes(field, nested.encoded()); }

  const std::string& encoded() const { return bytes_; }
  std::string take() { return std::move(bytes_); }

 private:
  std::string bytes_;
};

}  // namespace seedrl::io::proto
