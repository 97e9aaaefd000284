// PlayersActor<Game>: steps games of several players (env/players.hpp) through central inference;
// seat 0 of every game is the learner, the other seats its opponents (issue 37).
//
//   connect one connection per seat (num_games slots each) ─┐
//   every game: reset, the learner's side drawn (it plays first in half the games), the
//   opponent from the Matchmaker (its slot assigned there) ─┤
//   loop: every seat's step submitted at once, so that the learner's and the opponents' rows
//         share the server's batches ──▶ the acting players' actions (a fixed opponent's from its
//         scripted player) ──▶ game.step ──▶ every seat's next row
//
// A seat's row at a step its player does not act is flagged waiting (step_flags::kWaiting): the
// server answers it and keeps nothing. Its first acting row is flagged first (reward 0), its later
// ones carry the rewards it earned since its last action, and when the game ends every seat that
// has acted sends its final view flagged terminated (or truncated) with what it earned since; the
// answer to it is not played. The learner's score of a game (1 a win, 0.5 a draw, 0 a loss: the
// sign of its return) goes to the Matchmaker.
//
// Frames (stats().frames) are game steps; the server counts the learner's moves as its training
// frames. Discrete, unbranched actions.
//
// Thread-safety: run() on one thread; stop() and stats() from any thread.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "seedrl/acting/actor.hpp"  // new_run_id
#include "seedrl/acting/inference_endpoint.hpp"
#include "seedrl/core/random.hpp"
#include "seedrl/core/step_flags.hpp"
#include "seedrl/core/thread_annotations.hpp"
#include "seedrl/env/players.hpp"
#include "seedrl/league/league.hpp"

namespace seedrl {

/// Whom a PlayersActor's games are played against (session/self_play.hpp's league implements
/// it). Thread-safe: every actor calls it.
class Matchmaker {
 public:
  virtual ~Matchmaker() = default;
  /// The opponent of a game starting now; assigns the policy that acts for `opponent_slots`.
  virtual Opponent start_game(std::span<const std::int32_t> opponent_slots) = 0;
  /// The game against `opponent` ended; the learner scored `score` (1, 0.5 or 0).
  virtual void end_game(const Opponent& opponent, double score) = 0;
};

/// A fixed opponent's move: an action `player` may take in `game`.
template <class Game>
using ScriptedPlayer = std::function<std::int32_t(const Game& game, int player, Rng& rng)>;

struct PlayersActorStats {
  std::int64_t frames = 0;  ///< game steps
  std::int64_t games = 0;
  double mean_return = 0.0;  ///< the learner's, over the last 100 games
};

template <PlayersEnvironment Game>
class PlayersActor {
 public:
  /// `first_slot`: the actor's slots are [first_slot, first_slot + players * games), seat s's
  /// games at first_slot + s * games.
  PlayersActor(std::vector<Game> games, InferenceEndpoint& endpoint, Matchmaker& matchmaker,
               std::map<std::string, ScriptedPlayer<Game>> scripted, std::int32_t first_slot,
               std::uint64_t seed)
      : games_(std::move(games)),
        endpoint_(endpoint),
        matchmaker_(matchmaker),
        scripted_(std::move(scripted)),
        first_slot_(first_slot),
        rng_(seed) {
    SEEDRL_REQUIRE(!games_.empty(), "PlayersActor: no games");
    players_ = games_.front().players();
    SEEDRL_REQUIRE(players_ >= 2 && players_ <= kMaxPlayers, "PlayersActor: ", players_,
                   " players; a game has 2 to ", kMaxPlayers);
    const Game& probe = games_.front();
    spec_ = StepSpec{probe.observation_spec(), probe.action_spec(), probe.step_fields()};
    spec_.validate("PlayersActor: the game's step spec");
    SEEDRL_REQUIRE(!spec_.action.is_box() && !spec_.action.is_branched(),
                   "PlayersActor: games take one discrete action per player, not ",
                   spec_.action.to_string());
    for (const Game& g : games_) {
      SEEDRL_REQUIRE(g.players() == players_, "PlayersActor: games of different player counts");
    }
    const auto n = static_cast<std::int64_t>(games_.size());
    seats_.resize(static_cast<std::size_t>(players_));
    for (Seat& seat : seats_) {
      seat.observations =
          Tensor::zeros(spec_.observation.shape.prepend({n}), spec_.observation.dtype);
      for (const StepFieldSpec& f : spec_.fields)
        seat.fields.push_back(Tensor::zeros(f.spec.shape.prepend({n}), f.spec.dtype));
      seat.rewards.assign(games_.size(), 0.0f);
      seat.flags.assign(games_.size(), step_flags::kWaiting);
      seat.actions.assign(games_.size(), 0);
    }
    state_.resize(games_.size());
  }

  /// Plays until stop() or until the endpoint refuses or closes. Ok after stop().
  Status run() {
    for (std::int32_t s = 0; s < players_; ++s) {
      ConnectRequest request;
      request.run_id = new_run_id();
      request.num_envs = num_games();
      request.spec = spec_;
      request.first_slot = first_slot_ + s * num_games();
      if (Status status =
              endpoint_.connect(request, &seats_[static_cast<std::size_t>(s)].connection);
          !status.is_ok()) {
        disconnect();
        return status;
      }
    }
    for (std::size_t g = 0; g < games_.size(); ++g) start_game(g);
    Status status = Status::ok();
    while (!stopping_) {
      status = step_all_seats();
      if (!status.is_ok()) break;
      for (std::size_t g = 0; g < games_.size(); ++g) play(g);
    }
    disconnect();
    return stopping_ ? Status::ok() : status;
  }

  void stop() { stopping_ = true; }

  PlayersActorStats stats() const SEEDRL_EXCLUDES(stats_mutex_) {
    MutexLock lock(stats_mutex_);
    PlayersActorStats s;
    s.frames = frames_;
    s.games = games_played_;
    for (double r : recent_returns_) s.mean_return += r;
    if (!recent_returns_.empty()) s.mean_return /= static_cast<double>(recent_returns_.size());
    return s;
  }

  std::int32_t num_games() const { return static_cast<std::int32_t>(games_.size()); }
  std::int32_t players() const { return players_; }
  const StepSpec& step_spec() const { return spec_; }

 private:
  struct Seat {
    Connection connection;
    Tensor observations;
    std::vector<Tensor> fields;
    std::vector<float> rewards;
    std::vector<std::uint8_t> flags;
    std::vector<std::int32_t> actions;
  };
  // One game's progress.
  struct GameState {
    std::array<int, kMaxPlayers> seat_of{};    // game player -> seat (seat 0: the learner)
    std::array<float, kMaxPlayers> pending{};  // per seat: earned since its last row
    std::array<bool, kMaxPlayers> started{};   // per seat: its first row has gone
    double learner_return = 0.0;
    Opponent opponent;
    bool over = false;  // its final rows went with the last step
  };

  // Submits every seat's row of every game at once and waits for all the answers.
  Status step_all_seats() {
    struct Wait {
      Mutex mutex;
      CondVar done;
      int left SEEDRL_GUARDED_BY(mutex) = 0;
      Status status SEEDRL_GUARDED_BY(mutex);
    } wait;
    {
      MutexLock lock(wait.mutex);
      wait.left = players_;
    }
    std::vector<StepRequest> requests(seats_.size());
    for (std::size_t s = 0; s < seats_.size(); ++s) {
      Seat& seat = seats_[s];
      requests[s].connection = seat.connection;
      requests[s].step = StepRecord{seat.observations, seat.rewards, seat.flags, seat.fields};
      requests[s].actions = std::span<std::int32_t>(seat.actions);
      requests[s].on_complete = [w = &wait](const Status& status) {
        MutexLock lock(w->mutex);
        if (!status.is_ok() && w->status.is_ok()) w->status = status;
        if (--w->left == 0) w->done.notify_one();
      };
    }
    for (StepRequest& r : requests) endpoint_.submit(r);
    MutexLock lock(wait.mutex);
    while (wait.left > 0) wait.done.wait(lock);
    return wait.status;
  }

  void start_game(std::size_t g) {
    Game& game = games_[g];
    GameState& state = state_[g];
    game.reset();
    state = GameState{};
    // The learner takes a random side; the opponent seats the others in order.
    const int learner_player = static_cast<int>(rng_.below(static_cast<std::uint64_t>(players_)));
    for (int p = 0, next = 1; p < players_; ++p)
      state.seat_of[static_cast<std::size_t>(p)] = p == learner_player ? 0 : next++;
    std::vector<std::int32_t> opponent_slots;
    for (int s = 1; s < players_; ++s) opponent_slots.push_back(slot(s, g));
    state.opponent = matchmaker_.start_game(opponent_slots);
    SEEDRL_REQUIRE(
        state.opponent.kind != Opponent::Kind::fixed || scripted_.contains(state.opponent.name),
        "PlayersActor: no scripted player for the fixed opponent '", state.opponent.name, "'");
    write_rows(g, false);
  }

  // After the answers: plays game g's step, or starts the next game where it ended.
  void play(std::size_t g) {
    GameState& state = state_[g];
    if (state.over) {
      start_game(g);
      return;
    }
    Game& game = games_[g];
    std::array<std::int32_t, kMaxPlayers> actions{};
    for (int p = 0; p < players_; ++p) {
      if (!game.acts(p)) continue;
      const int seat = state.seat_of[static_cast<std::size_t>(p)];
      actions[static_cast<std::size_t>(p)] =
          seat != 0 && state.opponent.kind == Opponent::Kind::fixed
              ? scripted_.at(state.opponent.name)(game, p, rng_)
              : seats_[static_cast<std::size_t>(seat)].actions[g];
    }
    const PlayersStepResult result = game.step(
        std::span<const std::int32_t>(actions.data(), static_cast<std::size_t>(players_)));
    for (int p = 0; p < players_; ++p) {
      const int seat = state.seat_of[static_cast<std::size_t>(p)];
      state.pending[static_cast<std::size_t>(seat)] += result.rewards[static_cast<std::size_t>(p)];
      if (seat == 0) state.learner_return += result.rewards[static_cast<std::size_t>(p)];
    }
    const bool over = result.episode_over();
    {
      MutexLock lock(stats_mutex_);
      ++frames_;
      if (over) {
        ++games_played_;
        recent_returns_.push_back(state.learner_return);
        if (recent_returns_.size() > 100) recent_returns_.pop_front();
      }
    }
    if (over) {
      state.over = true;
      const double r = state.learner_return;
      matchmaker_.end_game(state.opponent, r > 0.0 ? 1.0 : r < 0.0 ? 0.0 : 0.5);
    }
    write_rows(g, over, result.terminated);
  }

  // Every seat's row of game g: its view and flags; `over`: the game's final rows.
  void write_rows(std::size_t g, bool over, bool terminated = false) {
    GameState& state = state_[g];
    const Game& game = games_[g];
    for (int p = 0; p < players_; ++p) {
      const auto seat_index = static_cast<std::size_t>(state.seat_of[static_cast<std::size_t>(p)]);
      Seat& seat = seats_[seat_index];
      const auto i = static_cast<std::int64_t>(g);
      game.observe(p, StepRow(seat.observations[i], spec_.fields, seat.fields, i));
      float& pending = state.pending[seat_index];
      bool& started = state.started[seat_index];
      std::uint8_t flags = step_flags::kWaiting;
      float reward = 0.0f;
      if (over && started) {
        flags = terminated ? step_flags::kTerminated : step_flags::kTruncated;
        reward = pending;
      } else if (!over && game.acts(p)) {
        flags = started ? 0 : step_flags::kFirst;
        reward = started ? pending : 0.0f;
        if (started) pending = 0.0f;
        started = true;
      }
      seat.flags[g] = flags;
      seat.rewards[g] = reward;
    }
  }

  std::int32_t slot(int seat, std::size_t g) const {
    return first_slot_ + seat * num_games() + static_cast<std::int32_t>(g);
  }

  void disconnect() {
    for (Seat& seat : seats_) {
      if (seat.connection.connected()) endpoint_.disconnect(seat.connection);
      seat.connection = {};
    }
  }

  std::vector<Game> games_;
  InferenceEndpoint& endpoint_;
  Matchmaker& matchmaker_;
  std::map<std::string, ScriptedPlayer<Game>> scripted_;
  std::int32_t first_slot_;
  Rng rng_;
  int players_ = 0;
  StepSpec spec_;
  std::vector<Seat> seats_;
  std::vector<GameState> state_;
  std::atomic<bool> stopping_{false};

  mutable Mutex stats_mutex_;
  std::int64_t frames_ SEEDRL_GUARDED_BY(stats_mutex_) = 0;
  std::int64_t games_played_ SEEDRL_GUARDED_BY(stats_mutex_) = 0;
  std::deque<double> recent_returns_ SEEDRL_GUARDED_BY(stats_mutex_);
};

}  // namespace seedrl
