// Helpers for the MinAtar tests: observations of a game and reading their cells.
#pragma once

#include <cstdint>

#include "seedrl/env/minatar/minatar.hpp"

namespace seedrl::test {

inline constexpr minatar::Options kNoSticky{0.0, true};

template <class Env>
Tensor observation_for(const Env& env) {
  return Tensor::zeros(env.observation_spec().shape, DType::u8);
}

/// Channel `channel` of cell (row, column) of a [10, 10, C] observation.
inline std::uint8_t cell(const Tensor& obs, std::int32_t row, std::int32_t column,
                         std::int32_t channel) {
  const auto channels = static_cast<std::int32_t>(obs.shape()[2]);
  return obs.data<std::uint8_t>()[(row * minatar::kSize + column) * channels + channel];
}

/// How many cells have `channel` set.
inline std::int64_t channel_count(const Tensor& obs, std::int32_t channel) {
  std::int64_t n = 0;
  for (std::int32_t r = 0; r < minatar::kSize; ++r)
    for (std::int32_t c = 0; c < minatar::kSize; ++c) n += cell(obs, r, c, channel);
  return n;
}

}  // namespace seedrl::test
