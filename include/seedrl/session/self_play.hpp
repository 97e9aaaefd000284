// train_self_play: a learner trained by self-play against a league, in one process (issue 37).
//
//   PlayersActor threads (num_actors x games_per_actor games; seat 0 the learner, the others its
//   opponents) ──▶ TrainingSession (InferenceServer serving the opponents' slots from an
//   OpponentTable, Learner) ◀── the league thread: a snapshot of the learner's parameters every
//   league.snapshot_every learner steps, put in the table; the ones that leave the window retired
//
// SelfPlayLeague is the Matchmaker every actor asks: it draws each game's opponent from the
// League (league/league.hpp: the latest self with probability play_latest, else a snapshot or a
// fixed, scripted opponent), assigns the opponent seats' slots, and records every result (ELO
// ratings, win/draw/loss tallies). Its figures go to the run's metrics (rating; the win, draw and
// loss rates of the last 100 games against each kind of opponent) and progress lines.
//
// Frames are the learner's moves (the server's training frames): both sides' in a game against its
// latest self, where both are the learner. With a logdir the league (ratings, tallies, snapshots
// and their values) is written to league.safetensors after every checkpoint, and a resumed run
// takes it back. Not yet: opponents over the socket transport.
#pragma once

#include <array>
#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "seedrl/acting/players_actor.hpp"
#include "seedrl/core/thread_name.hpp"
#include "seedrl/inference/opponents.hpp"
#include "seedrl/io/safetensors.hpp"
#include "seedrl/league/league.hpp"
#include "seedrl/session/actor_threads.hpp"
#include "seedrl/session/training_session.hpp"

namespace seedrl {

struct SelfPlayOptions : TrainingSessionOptions {
  std::int32_t num_actors = 2;
  std::int32_t games_per_actor = 16;
  LeagueOptions league;
  std::uint64_t seed = 1;  ///< the actors' sides, the league's draws, the scripted players

  SelfPlayOptions() { server.max_batch = 0; }  // every seat of every game in one batch

  void validate(int players, std::string_view owner = "SelfPlayOptions") const {
    SEEDRL_REQUIRE(num_actors >= 1, owner, ".num_actors must be >= 1, got ", num_actors);
    SEEDRL_REQUIRE(games_per_actor >= 1, owner, ".games_per_actor must be >= 1, got ",
                   games_per_actor);
    league.validate();
    session(players).validate(owner);
  }
  /// The session's part, with max_batch and max_slots sized for every seat of every game.
  TrainingSessionOptions session(int players) const {
    TrainingSessionOptions s = *this;
    const std::int32_t slots = num_actors * games_per_actor * players;
    if (s.server.max_batch <= 0) s.server.max_batch = slots;
    s.server.max_slots = std::max(s.server.max_slots, slots);
    return s;
  }
};

/// The league as the actors and the run see it. Thread-safe.
class SelfPlayLeague final : public Matchmaker {
 public:
  SelfPlayLeague(const LeagueOptions& options, std::vector<std::string> fixed,
                 std::shared_ptr<OpponentTable> table, std::uint64_t seed)
      : league_(options, std::move(fixed)), table_(std::move(table)), rng_(seed) {}

  Opponent start_game(std::span<const std::int32_t> opponent_slots) override
      SEEDRL_EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    Opponent opponent = league_.draw(rng_);
    // Against its latest self both sides are the learner, and both sides' moves train. A
    // snapshot's set is snapshot id + 1 (set 0 is the learner's); one that has just been retired
    // is not started against: the game is the latest self's instead. A fixed opponent's moves are
    // its scripted player's: its seats' rows are answered (kLatest) and kept by nobody.
    auto policy_of = [](const Opponent& o) {
      return o.kind == Opponent::Kind::snapshot ? static_cast<std::int32_t>(o.snapshot + 1)
             : o.kind == Opponent::Kind::latest ? policy_ids::kLearner
                                                : policy_ids::kLatest;
    };
    bool assigned = true;
    for (std::int32_t slot : opponent_slots)
      assigned = table_->assign(slot, policy_of(opponent)) && assigned;
    if (!assigned) {
      opponent = {};
      for (std::int32_t slot : opponent_slots) (void)table_->assign(slot, policy_ids::kLearner);
    }
    return opponent;
  }

  void end_game(const Opponent& opponent, double score) override SEEDRL_EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    league_.record(opponent, score);
    std::deque<double>& recent = recent_[opponent.tally()];
    recent.push_back(score);
    if (recent.size() > kRecentGames) recent.pop_front();
  }

  /// Takes a snapshot when one is due at `learner_step`, of the values `read_values()` returns
  /// (a copy the league keeps); puts it in the opponent table and retires what left the window.
  template <class ReadValues>
  void maybe_snapshot(std::int64_t learner_step, ReadValues read_values) SEEDRL_EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    if (!league_.snapshot_due(learner_step)) return;
    Tensor values = read_values();
    const std::int64_t id = league_.add_snapshot(learner_step, values);
    table_->put(static_cast<std::int32_t>(id + 1), std::move(values));
    for (std::int64_t old : held_)
      if (league_.snapshot(old) == nullptr) table_->retire(static_cast<std::int32_t>(old + 1));
    held_.clear();
    for (const League::Snapshot& s : league_.snapshots()) held_.push_back(s.id);
  }

  /// Writes the league (its text and every snapshot's values) to `path`, atomically.
  void save(const std::string& path) const SEEDRL_EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    std::vector<io::NamedTensor> tensors;
    for (const League::Snapshot& s : league_.snapshots())
      tensors.push_back({str_cat("snapshot/", s.id), s.values});
    io::write_safetensors(path, tensors, {{"league", league_.to_text()}});
  }

  /// Restores what save() wrote at `path`: the league, and its snapshots in the opponent table.
  /// Throws naming the file when it does not fit this run (other fixed opponents, a snapshot of
  /// another size), changing nothing.
  void restore(const std::string& path, std::int64_t values_per_snapshot) SEEDRL_EXCLUDES(mutex_) {
    const io::SafetensorsFile file = io::SafetensorsFile::read(path);
    auto text = file.metadata().find("league");
    SEEDRL_REQUIRE(text != file.metadata().end(), path, ": no league in it");
    MutexLock lock(mutex_);
    League restored = league_;
    restored.restore(text->second, path);
    std::vector<std::pair<std::int64_t, Tensor>> values;
    for (const League::Snapshot& s : restored.snapshots()) {
      const std::string name = str_cat("snapshot/", s.id);
      SEEDRL_REQUIRE(file.find(name) != nullptr, path, ": no values for snapshot ", s.id);
      Tensor v = file.tensor(name);
      SEEDRL_REQUIRE(v.numel() == values_per_snapshot, path, ": snapshot ", s.id, " holds ",
                     v.numel(), " values, the network has ", values_per_snapshot);
      values.emplace_back(s.id, std::move(v));
    }
    for (auto& [id, v] : values) {
      restored.set_values(id, v);
      table_->put(static_cast<std::int32_t>(id + 1), v);
    }
    for (std::int64_t old : held_) table_->retire(static_cast<std::int32_t>(old + 1));
    held_.clear();
    for (const auto& [id, v] : values) held_.push_back(id);
    league_ = std::move(restored);
  }

  /// A copy of the league now.
  League league() const SEEDRL_EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    return league_;
  }

  /// The learner's rating and, per kind of opponent, its win, draw and loss rates over the last
  /// 100 games (metric names such as "win_rate/latest").
  std::vector<Metric> metrics() SEEDRL_EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    std::vector<Metric> out{{{"rating", Reduce::last, nullptr}, league_.rating()},
                            {{"league_snapshots", Reduce::last, nullptr},
                             static_cast<double>(league_.snapshots().size())}};
    for (const auto& [kind, recent] : recent_) {
      const std::array<double, 3> rates = rates_of(recent);
      const char* names[] = {"win_rate/", "draw_rate/", "loss_rate/"};
      for (std::size_t k = 0; k < 3; ++k)
        out.push_back({{name(str_cat(names[k], kind)), Reduce::last, nullptr}, rates[k]});
    }
    return out;
  }

  /// " | rating 1234 | vs latest 45/10/45% | ..." for progress lines.
  std::string progress() SEEDRL_EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    std::string line = str_cat(" | rating ", static_cast<long>(std::lround(league_.rating())));
    for (const auto& [kind, recent] : recent_) {
      const std::array<double, 3> r = rates_of(recent);
      line += str_cat(" | vs ", kind, " ", std::lround(100 * r[0]), "/", std::lround(100 * r[1]),
                      "/", std::lround(100 * r[2]), "%");
    }
    return line;
  }

 private:
  static constexpr std::size_t kRecentGames = 100;

  static std::array<double, 3> rates_of(const std::deque<double>& recent) {
    std::array<double, 3> counts{};
    for (double s : recent) counts[s == 1.0 ? 0 : s == 0.5 ? 1 : 2] += 1.0;
    for (double& c : counts) c /= static_cast<double>(std::max<std::size_t>(recent.size(), 1));
    return counts;
  }
  // A metric name that lives as long as the league.
  std::string_view name(const std::string& text) SEEDRL_REQUIRES(mutex_) {
    for (const std::string& n : names_)
      if (n == text) return n;
    return names_.emplace_back(text);
  }

  mutable Mutex mutex_;
  League league_ SEEDRL_GUARDED_BY(mutex_);
  std::shared_ptr<OpponentTable> table_;
  Rng rng_ SEEDRL_GUARDED_BY(mutex_);
  std::vector<std::int64_t> held_ SEEDRL_GUARDED_BY(mutex_);  // snapshot ids in the table
  std::map<std::string, std::deque<double>> recent_ SEEDRL_GUARDED_BY(mutex_);
  std::deque<std::string> names_ SEEDRL_GUARDED_BY(mutex_);
};

struct SelfPlayResult {
  TrainingResult training;
  League league;      ///< at the end
  Tensor parameters;  ///< the learner's final values (flat, on the CPU)
  /// Loads of opponent sets' values into networks, and the networks built for them
  /// (InferenceServer::opponent_loads, opponent_networks_built).
  std::int64_t opponent_loads = 0, opponent_networks_built = 0;
};

/// Trains `agent` by self-play on games from `make_game(actor, game_index)` until total_frames
/// (the learner's moves). `scripted`: the fixed opponents of the league, by name.
template <Agent A, nn::Backend B, class MakeGame>
SelfPlayResult train_self_play(
    const A& agent, MakeGame make_game, const SelfPlayOptions& options,
    std::map<std::string,
             ScriptedPlayer<std::invoke_result_t<MakeGame, std::int32_t, std::int32_t>>>
        scripted = {}) {
  using Game = std::invoke_result_t<MakeGame, std::int32_t, std::int32_t>;
  static_assert(PlayersEnvironment<Game>, "make_game must return a PlayersEnvironment");
  const Game probe = make_game(0, 0);
  const int players = probe.players();
  options.validate(players);
  const TrainingSessionOptions session_options = options.session(players);
  TrainingSession<A, B> session(
      agent, StepSpec{probe.observation_spec(), probe.action_spec(), probe.step_fields()},
      session_options);
  auto table = std::make_shared<OpponentTable>(session_options.server.max_slots);
  session.server().serve_opponents(table);
  std::vector<std::string> fixed;
  for (const auto& [name, player] : scripted) fixed.push_back(name);
  SelfPlayLeague league(options.league, fixed, table, options.seed);

  std::vector<std::unique_ptr<PlayersActor<Game>>> actors;
  const std::int32_t slots_per_actor = options.games_per_actor * players;
  for (std::int32_t a = 0; a < options.num_actors; ++a) {
    std::vector<Game> games;
    for (std::int32_t g = 0; g < options.games_per_actor; ++g) games.push_back(make_game(a, g));
    actors.push_back(std::make_unique<PlayersActor<Game>>(
        std::move(games), session.server(), league, scripted, a * slots_per_actor,
        options.seed * 1000003ULL + static_cast<std::uint64_t>(a)));
  }
  std::atomic<bool> league_stop{false};
  std::vector<std::thread> threads;
  auto stop_sources = [&](bool) {
    for (auto& actor : actors) actor->stop();
    league_stop = true;
  };
  auto join_sources = [&] {
    for (std::thread& t : threads)
      if (t.joinable()) t.join();
  };
  // The league is kept beside the checkpoint, and comes back with a resumed run.
  const std::string league_path =
      options.logdir.empty()
          ? std::string()
          : (std::filesystem::path(options.logdir) / "league.safetensors").string();
  if (session.resumed() && !league_path.empty()) {
    if (std::filesystem::exists(league_path)) {
      league.restore(league_path, session.learner().parameters().store().flat_size());
      if (options.messages) {
        options.messages(
            io::MessageKind::info,
            str_cat("resumed the league from ", league_path, ": rating ", league.league().rating(),
                    ", ", league.league().snapshots().size(), " snapshots"));
      }
    } else if (options.messages) {
      options.messages(io::MessageKind::info,
                       str_cat("no ", league_path, ": the resumed run starts a new league"));
    }
  }
  auto snapshot = [&] {
    league.maybe_snapshot(session.learner().steps(), [&] {
      SharedParameters& shared = session.learner().parameters();
      SharedParameters::ReadGuard guard(shared);
      return shared.store().values().clone(Device::cpu);
    });
  };
  try {
    snapshot();  // the first opponent: the untrained policy
    threads.emplace_back([&] {
      set_thread_name("seedrl-league");
      try {
        while (!league_stop) {
          snapshot();
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
      } catch (...) {
        session.report_error(std::current_exception());
      }
    });
    start_actor_threads(session, actors, threads);
    TrainingHooks hooks;
    hooks.stop_sources = stop_sources;
    hooks.join_sources = join_sources;
    hooks.progress_suffix = [&] { return league.progress(); };
    hooks.metrics = [&] {
      std::vector<Metric> m = league.metrics();
      const auto& server = session.server();
      m.push_back({{"opponent_loads", Reduce::last}, static_cast<double>(server.opponent_loads())});
      m.push_back({{"opponent_networks_built", Reduce::last},
                   static_cast<double>(server.opponent_networks_built())});
      return m;
    };
    hooks.on_checkpoint = [&](const std::string&) { league.save(league_path); };
    SelfPlayResult result;
    result.training = session.run(hooks);
    result.league = league.league();
    result.parameters = session.learner().parameters().store().values().clone(Device::cpu);
    result.opponent_loads = session.server().opponent_loads();
    result.opponent_networks_built = session.server().opponent_networks_built();
    return result;
  } catch (...) {
    stop_sources(false);
    session.server().stop();
    join_sources();
    throw;
  }
}

}  // namespace seedrl
