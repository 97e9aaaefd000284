// Shape: the dimensions of a tensor, stored inline (no allocation).
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <span>
#include <string>

#include "seedrl/core/error.hpp"

namespace seedrl {

/// Dimensions of a row-major tensor, outermost first, at most Shape::kMaxRank of them.
/// A rank-0 shape describes a scalar (one element).
class Shape {
 public:
  static constexpr int kMaxRank = 6;

  Shape() = default;
  Shape(std::initializer_list<std::int64_t> dims)
      : Shape(std::span<const std::int64_t>(dims.begin(), dims.size())) {}
  explicit Shape(std::span<const std::int64_t> dims) {
    SEEDRL_REQUIRE(dims.size() <= kMaxRank, "Shape: rank ", dims.size(), " exceeds the maximum of ",
                   kMaxRank);
    std::int64_t product = 1;
    for (std::int64_t d : dims) {
      SEEDRL_REQUIRE(d >= 0, "Shape: negative dimension ", d);
      // numel() multiplies unchecked: no shape holds more elements than an int64 counts.
      SEEDRL_REQUIRE(!__builtin_mul_overflow(product, d, &product), "Shape: dimensions of ",
                     dims.size(), " elements overflow 64 bits (dimension ", rank_, " is ", d, ")");
      dims_[static_cast<std::size_t>(rank_++)] = d;
    }
  }

  int rank() const { return rank_; }
  std::int64_t operator[](int axis) const { return dims_[static_cast<std::size_t>(checked(axis))]; }
  std::span<const std::int64_t> dims() const {
    return {dims_.data(), static_cast<std::size_t>(rank_)};
  }

  /// Number of elements (1 for a scalar).
  std::int64_t numel() const {
    std::int64_t n = 1;
    for (int i = 0; i < rank_; ++i) n *= dims_[static_cast<std::size_t>(i)];
    return n;
  }

  /// The shape without its first `count` dimensions: [T, B, 4] -> drop_front(2) == [4].
  Shape drop_front(int count = 1) const {
    SEEDRL_REQUIRE(count >= 0 && count <= rank_, "Shape::drop_front(", count, ") on ", to_string());
    return Shape(dims().subspan(static_cast<std::size_t>(count)));
  }

  /// The shape with `outer` dimensions put in front: [4].prepend({T, B}) == [T, B, 4].
  Shape prepend(std::initializer_list<std::int64_t> outer) const {
    std::array<std::int64_t, kMaxRank + 4> all{};
    std::size_t n = 0;
    for (std::int64_t d : outer) all[n++] = d;
    for (std::int64_t d : dims()) all[n++] = d;
    return Shape(std::span<const std::int64_t>(all.data(), n));
  }

  /// "[2, 3, 4]".
  std::string to_string() const {
    std::string s = "[";
    for (int i = 0; i < rank_; ++i) {
      if (i) s += ", ";
      s += std::to_string(dims_[static_cast<std::size_t>(i)]);
    }
    return s + "]";
  }

  friend bool operator==(const Shape& a, const Shape& b) {
    if (a.rank_ != b.rank_) return false;
    for (int i = 0; i < a.rank_; ++i)
      if (a.dims_[static_cast<std::size_t>(i)] != b.dims_[static_cast<std::size_t>(i)])
        return false;
    return true;
  }

 private:
  int checked(int axis) const {
    SEEDRL_REQUIRE(axis >= 0 && axis < rank_, "Shape: axis ", axis, " out of range for ",
                   to_string());
    return axis;
  }

  std::array<std::int64_t, kMaxRank> dims_{};
  int rank_ = 0;
};

inline std::ostream& operator<<(std::ostream& out, const Shape& shape) {
  return out << shape.to_string();
}

}  // namespace seedrl
