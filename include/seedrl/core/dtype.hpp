// Element types a Tensor can hold.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string_view>

namespace seedrl {

/// Element type of a tensor. Values are stable: checkpoints and the wire protocol store them.
enum class DType : std::uint8_t {
  f32 = 0,  ///< 32-bit IEEE float
  u8 = 1,   ///< unsigned byte (pixels, booleans)
  i32 = 2,  ///< 32-bit signed integer (actions)
};

/// Size of one element in bytes.
constexpr std::size_t size_of(DType dtype) {
  switch (dtype) {
    case DType::f32:
      return 4;
    case DType::u8:
      return 1;
    case DType::i32:
      return 4;
  }
  return 0;
}

/// Short lower-case name, as used in error messages ("f32", "u8", "i32").
constexpr std::string_view name(DType dtype) {
  switch (dtype) {
    case DType::f32:
      return "f32";
    case DType::u8:
      return "u8";
    case DType::i32:
      return "i32";
  }
  return "?";
}

inline std::ostream& operator<<(std::ostream& out, DType dtype) {
  return out << name(dtype);
}

/// The DType of a C++ element type: dtype_of<float>() == DType::f32.
template <class T>
constexpr DType dtype_of();
template <>
constexpr DType dtype_of<float>() {
  return DType::f32;
}
template <>
constexpr DType dtype_of<std::uint8_t>() {
  return DType::u8;
}
template <>
constexpr DType dtype_of<std::int32_t>() {
  return DType::i32;
}

}  // namespace seedrl
