// BoardGame's observation (declared in env/board_game.hpp).
#include "seedrl/env/board_game.hpp"

namespace seedrl {

void BoardGame::observe(int player, const StepRow& row) const {
  SEEDRL_REQUIRE(player == 0 || player == 1, rules_.name, ": player ", player,
                 " out of range [0, 2)");
  float* planes = row.observation().data<float>();
  const std::size_t n = cells_.size();
  for (std::size_t i = 0; i < n; ++i) {
    planes[i] = cells_[i] == player + 1 ? 1.0f : 0.0f;
    planes[n + i] = cells_[i] == 2 - player ? 1.0f : 0.0f;
  }
  std::uint8_t* mask = row.field(kActionMaskField).data<std::uint8_t>();
  for (std::int32_t a = 0; a < actions(); ++a) mask[a] = acts(player) && legal(a) ? 1 : 0;
}

}  // namespace seedrl
