// RandomOpenings<Game>: a board game (env/board_game.hpp) whose every reset() is followed by a
// random opening, k uniformly random legal moves with k drawn uniformly from [0, max_moves].
//
// Self-play between a policy and a few deterministic opponents (its snapshots, a search player)
// keeps meeting the same few games; a policy trained so plays those well and little else. Random
// openings put it in many positions, as an evaluation with random opening moves (play_games'
// opening_moves) will. The opening is part of reset(): nobody acts in it and it pays no reward,
// so a game starts with the player of move k to move. An opening that ends the game (a line of
// three on tic-tac-toe's small board) is drawn again.
//
//   RandomOpenings<ConnectFour> game(ConnectFour(), /*max_moves=*/4, /*seed=*/17);
//   game.reset();  // 0 - 4 random stones on the board, drawn from the game's own Rng
#pragma once

#include <concepts>
#include <cstdint>
#include <utility>
#include <vector>

#include "seedrl/core/error.hpp"
#include "seedrl/core/random.hpp"
#include "seedrl/env/board_game.hpp"

namespace seedrl {

template <class Game>
requires std::derived_from<Game, BoardGame>
class RandomOpenings : public Game {
 public:
  RandomOpenings(Game game, int max_moves, std::uint64_t seed)
      : Game(std::move(game)), max_moves_(max_moves), rng_(seed) {
    SEEDRL_REQUIRE(max_moves >= 0 && max_moves < this->rules().rows * this->rules().columns,
                   this->rules().name, ": random openings of 0 to ", max_moves,
                   " moves; the most is one less than the board's cells (",
                   this->rules().rows * this->rules().columns, ")");
    reset();
  }

  /// A new game, then its random opening.
  void reset() {
    // A redraw is rare (an opening of random moves seldom completes a line), and draws of fewer
    // moves end fewer games: after 64 tries the game starts from the empty board.
    for (int attempt = 0; attempt < 64; ++attempt) {
      Game::reset();
      const auto moves = static_cast<int>(rng_.below(static_cast<std::uint64_t>(max_moves_) + 1));
      if (play_opening(moves)) return;
    }
    Game::reset();
  }

  int max_moves() const { return max_moves_; }

 private:
  // Plays `moves` random legal moves; false if the game ended on one of them.
  bool play_opening(int moves) {
    std::vector<std::int32_t> legal;
    for (int m = 0; m < moves; ++m) {
      legal.clear();
      for (std::int32_t a = 0; a < this->actions(); ++a)
        if (this->legal(a)) legal.push_back(a);
      if (legal.empty()) return false;
      std::int32_t actions[2] = {0, 0};
      actions[this->to_move()] = legal[static_cast<std::size_t>(rng_.below(legal.size()))];
      if (Game::step(actions).episode_over()) return false;
    }
    return true;
  }

  int max_moves_;
  Rng rng_;
};

}  // namespace seedrl
