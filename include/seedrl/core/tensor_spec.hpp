// TensorSpec: the shape and element type a tensor must have (an observation, for instance).
#pragma once

#include <string>

#include "seedrl/core/dtype.hpp"
#include "seedrl/core/shape.hpp"

namespace seedrl {

struct TensorSpec {
  Shape shape;
  DType dtype = DType::f32;

  std::size_t bytes() const { return static_cast<std::size_t>(shape.numel()) * size_of(dtype); }
  std::string to_string() const { return std::string(name(dtype)) + shape.to_string(); }
  friend bool operator==(const TensorSpec& a, const TensorSpec& b) {
    return a.shape == b.shape && a.dtype == b.dtype;
  }
};

}  // namespace seedrl
